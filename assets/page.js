// The page's script, loaded once (playground/page.py puts it in the page's head): only what a browser can do. Which
// view is open, the Lesson's step and the newest translation live on the server (playground/runtime.py).
(() => {
  if (window.tp) return;
  const tp = window.tp = {};
  // A picture's links (the glance's boxes, the Lesson's "go deeper"; gr.HTML's js_on_load calls this): a link
  // fires the component's own "open" event with the view and the part it asks for; the server selects the tabs and
  // draws it. A piece of the glance's translation shows its step here, without a request.
  tp.linked = (element, trigger) => element.addEventListener('click', (event) => {
    const word = event.target.closest('[data-step]');
    if (word) {
      element.querySelectorAll('.at, [data-step]').forEach(e => e.classList.remove('on'));
      element.querySelectorAll(`.at[data-at="${word.dataset.step}"]`).forEach(e => e.classList.add('on'));
      return word.classList.add('on');
    }
    const link = event.target.closest('[data-open]');
    if (!link) return;
    event.preventDefault();
    const step = element.querySelector('[data-step].on')?.dataset.step || 0;  // the step the glance shows
    trigger('open', {view: link.dataset.open, focus: link.dataset.focus ? `${link.dataset.focus}&step=${step}` : ''});
  });

  // the class's wall (the teacher's): its buttons fire the wall's own "act" event with the sentence's id
  tp.wall = (element, trigger) => element.addEventListener('click', (event) => {
    const button = event.target.closest('button[data-act]');
    if (button) trigger('act', {act: button.dataset.act, id: button.dataset.id});
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
  // the notes are written: one click downloads them (gradio's DownloadButton cannot be clicked by an event, #9230)
  tp.download = () => document.getElementById('lesson-file')?.click();
  // presentation mode: the page zoomed; plotly figures then measure their boxes again, so each fits the width
  tp.present = (on) => {
    document.body.classList.toggle('present', Boolean(on));
    setTimeout(() => window.dispatchEvent(new Event('resize')), 50);
  };
})();
