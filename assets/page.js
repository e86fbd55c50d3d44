// The page's script, loaded once (playground/page.py puts it in the page's head): what only the browser can do.
// Which view is open is an ordinary hidden input of the page (#open-tab), set by each tab's select handler.
(() => {
  if (window.tp) return;
  const tp = window.tp = {drawn: null};  // the view a running translation draws

  // a translation (or the page's load) draws the tab open as it starts: its key is the event's first input, since
  // the open tab is created first. The translation box is marked old until the new one lands.
  tp.translating = (args) => {
    tp.drawn = args[0];
    document.getElementById('translation')?.classList.add('stale');
    return args;
  };

  // after it: only when the user opened another tab meanwhile is that one drawn too (one more event). Gradio has
  // no conditional .then, hence the hidden button.
  tp.translated = (open) => {
    document.getElementById('translation')?.classList.remove('stale');
    if (open !== tp.drawn) document.getElementById('redraw-open')?.click();
  };

  // A picture's links (the glance's boxes, the Lesson's "go deeper"; gr.HTML's js_on_load calls this): a link
  // fires the component's own "open" event with the view and the part it asks for, and the server selects the
  // tabs and draws it. A piece of the glance's translation shows its step here, without a request.
  tp.linked = (element, trigger) => element.addEventListener('click', (event) => {
    const word = event.target.closest('[data-step]');
    if (word) {
      element.querySelectorAll('.at, [data-step]').forEach(e => e.classList.remove('on'));
      element.querySelectorAll(`.at[data-at="${word.dataset.step}"]`).forEach(e => e.classList.add('on'));
      word.classList.add('on');
      return;
    }
    const link = event.target.closest('[data-open]');
    if (!link) return;
    event.preventDefault();
    const step = element.querySelector('[data-step].on')?.dataset.step || 0;  // the step the glance shows
    trigger('open', {view: link.dataset.open, focus: link.dataset.focus ? `${link.dataset.focus}&step=${step}` : ''});
  });

  // the arrow keys move between the Lesson's steps while it is in view (never while typing)
  document.addEventListener('keydown', (event) => {
    if (!document.getElementById('lesson-where')?.checkVisibility()) return;
    if (event.target.closest('input, textarea, select, [contenteditable]')) return;
    const button = {ArrowRight: 'lesson-next', ArrowLeft: 'lesson-back'}[event.key];
    if (button) { document.getElementById(button)?.click(); event.preventDefault(); }
  });

  // Next and Back bring the new step's top to the window's: a whole slide
  tp.toStep = () => document.getElementById('lesson-where')?.closest('.row')?.scrollIntoView({block: 'start'});

  // the notes are written: one click downloads them (gradio's DownloadButton cannot be clicked by an event)
  tp.download = () => document.getElementById('lesson-file')?.click();

  // the shareable link, from the page's own address (right behind any proxy), offline too
  tp.shareLink = (fields, first, [pair, text, present, open, ...decoding]) => {
    const url = new URL(window.location.href);
    url.search = ''; url.hash = '';
    url.searchParams.set('pair', pair);
    url.searchParams.set('text', text);
    fields.forEach((name, i) => url.searchParams.set(name, decoding[i]));
    if (present) url.searchParams.set('present', '1');
    const step = (document.querySelector('#lesson-where')?.textContent || '').match(/Step (\d+) of/);
    if (open === 'lesson' && step) url.searchParams.set('lesson', step[1]);  // the Lesson, at its step
    else if (open !== first) url.searchParams.set('view', open);  // the view that is open
    return url.toString();
  };

  // presentation mode: the page zoomed; plotly figures then measure their boxes again, so each fits the width
  tp.present = (on) => {
    document.body.classList.toggle('present', Boolean(on));
    setTimeout(() => window.dispatchEvent(new Event('resize')), 50);
  };
})();
