// The page's script, loaded once (playground/page.py puts it in the page's head): what the browser knows that the
// server does not. Which view is open is kept here, never on the server: each event reads it as it starts.
//
//   tp.open    the key of the view whose tab is open (playground/registry.py names them)
//   tp.inner   group key -> the view last open inside that group
//   tp.drawn   the view a running translation draws
//
// An event's js (playground/runtime.py) calls one of the functions below; each returns the event's inputs, with
// what is open first.
(() => {
  if (window.tp) return;
  const tp = window.tp = {open: null, inner: {}, drawn: null};
  const masthead = () => document.getElementById('masthead')?.dataset || {};
  const first = () => masthead().first;  // the view that opens first (playground/registry.py)
  const opened = () => tp.open || first();

  // -- what each event sends first -----------------------------------------------------------------------------

  tp.asIs = (args) => [opened(), ...args.slice(1)];

  // the page's load draws the first tab; a shared link's Lesson or view (the load handler selects its tab) is
  // drawn next, as a tab opened during a translation is (tp.translated)
  tp.loading = (args) => {
    const query = new URLSearchParams(location.search);
    remember(query.has('lesson') ? 'lesson' : query.get('view') || first());
    tp.drawn = first();
    return [first(), ...args.slice(1)];
  };

  // a translation draws the tab open when it starts; its translation box is marked old until the new one lands
  tp.translating = (args) => {
    tp.drawn = opened();
    document.getElementById('translation')?.classList.add('stale');
    return [tp.drawn, ...args.slice(1)];
  };

  // after a translation: only when the user opened another tab meanwhile is that one drawn too (one more event)
  tp.translated = () => {
    document.getElementById('translation')?.classList.remove('stale');
    if (opened() !== tp.drawn) document.getElementById('redraw-open')?.click();
  };

  // a tab's select: remember it (inside a group, also as the group's open view). The group's own tab: its view
  // that was open last, or its first.
  tp.selecting = (key, group, first, args) => {
    if (group && !key) tp.open = tp.inner[group] || first;
    else remember(key);
    return tp.asIs(args);
  };

  // the view's path, "group/key" or "key", as the page's masthead lists them (playground/registry.py)
  function remember(key) {
    const paths = JSON.parse(masthead().paths || '{}');
    if (!(key in paths)) return;  // not a view of this page (a link's typo): nothing changes
    const [group, tab] = paths[key].includes('/') ? paths[key].split('/') : [null, paths[key]];
    tp.open = tab;
    if (group) tp.inner[group] = tab;
  }

  // -- links inside the page ---------------------------------------------------------------------------------

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
    remember(link.dataset.open);
    trigger('open', {view: link.dataset.open, focus: link.dataset.focus ? `${link.dataset.focus}&step=${step}` : ''});
  });

  // -- the Lesson ----------------------------------------------------------------------------------------------

  // the arrow keys move between steps while the Lesson is open (never while typing)
  document.addEventListener('keydown', (event) => {
    if (tp.open !== 'lesson' || event.target.closest('input, textarea, select, [contenteditable]')) return;
    const button = {ArrowRight: 'lesson-next', ArrowLeft: 'lesson-back'}[event.key];
    if (button) { document.getElementById(button)?.click(); event.preventDefault(); }
  });

  // Next and Back bring the new step's top to the window's: a whole slide
  tp.toStep = () => document.getElementById('lesson-where')?.closest('.row')?.scrollIntoView({block: 'start'});

  // the notes are written: one click downloads them
  tp.download = () => document.getElementById('lesson-file')?.click();

  // -- the panel -----------------------------------------------------------------------------------------------

  // the shareable link, from the page's own address (right behind any proxy), offline too
  tp.shareLink = (fields, [pair, text, present, ...decoding]) => {
    const url = new URL(window.location.href);
    url.search = ''; url.hash = '';
    url.searchParams.set('pair', pair);
    url.searchParams.set('text', text);
    fields.forEach((name, i) => url.searchParams.set(name, decoding[i]));
    if (present) url.searchParams.set('present', '1');
    const step = (document.querySelector('#lesson-where')?.textContent || '').match(/Step (\d+) of/);
    if (opened() === 'lesson' && step) url.searchParams.set('lesson', step[1]);  // the Lesson, at its step
    else if (opened() !== first()) url.searchParams.set('view', opened());  // the view that is open
    return url.toString();
  };

  // presentation mode: the page zoomed; plotly figures then measure their boxes again, so each fits the width
  tp.present = (on) => {
    document.body.classList.toggle('present', Boolean(on));
    setTimeout(() => window.dispatchEvent(new Event('resize')), 50);
  };
})();
