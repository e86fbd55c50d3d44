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

  // A figure lays itself out for the box it is drawn in, which only the browser knows: once plotly has drawn it,
  // tick labels that would run into their neighbours are thinned (every k-th kept), a heatmap's numbers that would
  // touch are left to the hover, and other texts written on the data (a bar's piece) are kept where they fit
  const touch = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const box = (t) => {  // a text's box on the screen, turned with it (plotly's cell labels give the DOM no box)
    const b = t.getBBox(), m = t.getScreenCTM();
    if (!m || !b.width) return {left: 0, right: 0, top: 0, bottom: 0};
    const xs = [b.x, b.x + b.width], ys = [b.y, b.y + b.height];
    const at = xs.flatMap(x => ys.map(y => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]));
    return {left: Math.min(...at.map(p => p[0])), right: Math.max(...at.map(p => p[0])),
            top: Math.min(...at.map(p => p[1])), bottom: Math.max(...at.map(p => p[1]))};
  };
  const boxes = (texts) => texts.map(box);
  tp.fit = (plot) => {
    plot.querySelectorAll('.xaxislayer-above, .yaxislayer-above').forEach(layer => {
      const ticks = [...layer.querySelectorAll('text')];
      ticks.forEach(t => t.style.visibility = '');
      const at = boxes(ticks);
      for (let k = 1; k < ticks.length; k++) {
        const kept = at.filter((_, i) => i % k === 0);
        if (kept.every((b, i) => i === 0 || !touch(kept[i - 1], b))) {
          ticks.forEach((t, i) => t.style.visibility = i % k === 0 ? '' : 'hidden');
          break;
        }
      }
    });
    const cells = [...plot.querySelectorAll('.heatmaplayer text')];
    cells.forEach(t => t.style.visibility = '');
    const inCells = boxes(cells);
    if (inCells.some((b, i) => inCells.slice(i + 1, i + 40).some(c => touch(b, c))))
      cells.forEach(t => t.style.visibility = 'hidden');
    // panels' titles (annotations): smaller, down to 11 px (read on a phone), while two touch or one leaves the figure; then
    // room under the figure's title when they reach into it (plotly puts both in the top margin)
    const frame = plot.querySelector('.main-svg')?.getBoundingClientRect();
    const notes = [...plot.querySelectorAll('.annotation-text-g text')];
    const crowded = (t, i) => notes.some((o, j) => j !== i && touch(box(t), box(o)))
      || (frame && (box(t).left < frame.left || box(t).right > frame.right));
    notes.forEach((t, i) => {
      let size = parseFloat(getComputedStyle(t).fontSize);
      while (size > 11 && crowded(t, i)) t.style.fontSize = `${--size}px`;
    });
    const title = [...plot.querySelectorAll('.g-gtitle text')].map(box)[0];
    const reach = title ? Math.max(0, ...notes.map(box).filter(b => touch(title, b)).map(b => title.bottom - b.top)) : 0;
    if (reach > 0 && plot.layout && !plot.dataset.roomed) {
      plot.dataset.roomed = '1';  // once per drawing of this figure: its own layout keeps the room
      const margin = plot.layout.margin?.t ?? 80, height = plot.layout.height || plot.getBoundingClientRect().height;
      window.Plotly?.relayout(plot, {'margin.t': margin + reach + 6, height: height + reach + 6});
    }
    const kept = [];
    plot.querySelectorAll('.barlayer text, .scatterlayer .textpoint text').forEach(t => {
      t.style.visibility = '';
      const b = box(t);
      if (kept.some(c => touch(b, c))) t.style.visibility = 'hidden'; else kept.push(b);
    });
  };
  // drawn again by plotly, or shown (a figure drawn in a hidden tab measures nothing until its tab opens)
  const shown = new ResizeObserver(entries => entries.forEach(e => e.contentRect.width && tp.fit(e.target)));
  new MutationObserver(() => document.querySelectorAll('.js-plotly-plot:not([data-fits])').forEach(plot => {
    if (!plot.on) return;  // plotly has not made it a graph yet
    plot.dataset.fits = '1';
    plot.on('plotly_afterplot', () => tp.fit(plot));
    shown.observe(plot);
  })).observe(document.documentElement, {childList: true, subtree: true});

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
