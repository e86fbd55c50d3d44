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

  // the page's languages (the masthead's links, "?lang=de"): the page opens again in that language with the rest of
  // its address kept (a shared link's sentence, a class's code); the server remembers the choice for this browser
  document.addEventListener('click', (event) => {
    const link = event.target.closest('#languages a[hreflang]');
    if (!link) return;
    event.preventDefault();
    const address = new URL(window.location.href);
    address.searchParams.set('lang', link.hreflang);
    window.location.assign(address);
  });

  // What cannot be undone asks once more, in place: the first click on End (either one) or on a Take out turns the
  // button into its question for a few seconds (its words from the server: the button's data-sure, or for End the
  // join card's data-end-sure); only a click on the question goes through. Caught before the button's own handler
  const SURE_MS = 4000;
  window.addEventListener('click', (event) => {
    const button = event.target.closest?.('button[data-sure], #class-end, #class-end-present');
    if (!button || button.classList.contains('sure')) return;  // asking already: this click goes through
    const words = button.dataset.sure || document.querySelector('[data-end-sure]')?.dataset.endSure;
    if (!words) return;
    event.stopImmediatePropagation();
    event.preventDefault();
    const asking = document.createElement('span');  // beside the button's own text, which the CSS hides meanwhile
    asking.className = 'asking';
    asking.textContent = words;
    button.classList.add('sure');
    button.append(asking);
    setTimeout(() => { button.classList.remove('sure'); asking.remove(); }, SURE_MS);
  }, true);

  // the class's wall and list of students (the teacher's): their buttons fire the element's own "act" event with
  // what they act on (a sentence's id, a student's key)
  tp.wall = (element, trigger) => element.addEventListener('click', (event) => {
    const button = event.target.closest('button[data-act]');
    if (button) trigger('act', {act: button.dataset.act, id: button.dataset.id});
  });

  // ?wall: the teacher's wall alone, in a window of its own for a second screen (the class found by the teacher's
  // browser state, as on a reload)
  if (new URLSearchParams(location.search).has('wall')) {
    const mark = () => document.body ? document.body.classList.add('wall-only') : setTimeout(mark, 20);
    mark();
  }

  // a phone's question: a choice button fires the question's "vote" event; a new question (another poll id) rings
  // where the browser lets a page vibrate, and the page goes back to its top, where the question is
  tp.question = (element, trigger) => {
    element.addEventListener('click', (event) => {
      const button = event.target.closest('button[data-choice]');
      if (button && !button.disabled) {
        trigger('vote', {choice: button.dataset.choice, poll: button.closest('.question').dataset.poll});
      }
    });
    tp.answers(element, trigger);
    let seen = null;  // the open question or quiz last rung for: a new one rings and scrolls to the top
    new MutationObserver(() => {
      const open = element.querySelector('.question[data-state="open"]')?.dataset.poll
        || element.querySelector('.quiz[data-state="open"]')?.dataset.quiz;
      const poll = open ? `${element.querySelector('.question[data-state="open"]') ? 'poll' : 'quiz'} ${open}` : null;
      if (poll && poll !== seen) {
        navigator.vibrate?.([120, 60, 120]);
        window.scrollTo({top: 0, behavior: 'smooth'});
      }
      if (poll) seen = poll;
    }).observe(element, {childList: true, subtree: true});
  };

  // A quiz's choice buttons (a phone's in a class, or a student's alone on the Lesson's tab): a tap fires the
  // element's "answer" event with the quiz, the question and the choice
  tp.answers = (element, trigger) => element.addEventListener('click', (event) => {
    const button = event.target.closest('button[data-answer]');
    if (button && !button.disabled) {
      trigger('answer', {quiz: button.closest('.quiz').dataset.quiz, question: button.dataset.question,
                         choice: button.dataset.answer});
    }
  });

  // A figure lays itself out for the box it is drawn in, which only the browser knows. Once plotly has drawn it:
  // panels side by side in a box too narrow for them are stacked, one under another; tick labels that would run
  // into their neighbours are thinned (every k-th kept); a heatmap's numbers that would touch are left to the
  // hover; panels' and axes' titles shrink, wrap or rise until they touch nothing; the figure's title gets room;
  // other texts written on the data (a bar's piece) are kept where they fit
  // a text's four corners on the screen, turned with it (a tick label at -45 degrees is a slanted box), and the
  // upright box around them
  const quad = (t) => {
    const b = t.getBBox(), m = t.getScreenCTM();
    if (!m || !b.width) return null;
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
      .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
  };
  const box = (t) => {
    const q = quad(t) || [[0, 0]], xs = q.map(p => p[0]), ys = q.map(p => p[1]);
    return {left: Math.min(...xs), right: Math.max(...xs), top: Math.min(...ys), bottom: Math.max(...ys)};
  };
  const boxes = (texts) => texts.map(box);
  // two upright boxes closer than `gap` px (by default: overlapping by more than a pixel)
  const touch = (a, b, gap = -1) => a.left < b.right + gap && b.left < a.right + gap && a.top < b.bottom + gap
    && b.top < a.bottom + gap;
  // two turned texts overlapping (no side of either separates them): the upright boxes around two labels at -45
  // degrees overlap long before the labels do
  const clash = (P, Q) => P && Q && ![P, Q].some(poly => poly.some((a, i) => {
    const b = poly[(i + 1) % 4], n = [b[1] - a[1], a[0] - b[0]], on = (R) => R.map(p => p[0] * n[0] + p[1] * n[1]);
    const len = Math.hypot(...n) || 1, p = on(P), q = on(Q);
    return (Math.max(...p) - Math.min(...q)) / len <= 1 || (Math.max(...q) - Math.min(...p)) / len <= 1;
  }));
  const shown = (t) => t.style.visibility !== 'hidden';
  // on a phone, panels narrower than this are stacked (a projector's slide keeps them side by side: it must fit
  // its height); more panels than MOST_STACKED stay a grid
  const PHONE_PX = 600, PANEL_PX = 180, MOST_STACKED = 8;
  const shrunk = new WeakMap();  // a title's text -> {own: plotly's font size, set: the one fit gave it}
  const changes = new WeakMap();  // a layout (a new one with each figure sent; relayout keeps it) -> fit's changes
  const change = (plot, layout, traces, indices) => {
    const n = changes.get(plot.layout) || 0;
    if (n >= 4 || !window.Plotly) return false;  // what four changes could not fix stays as it is
    changes.set(plot.layout, n + 1);
    if (traces) window.Plotly.update(plot, traces, layout, indices); else window.Plotly.relayout(plot, layout);
    return true;
  };
  const axisName = (id) => id[0] + 'axis' + id.slice(1);  // 'y2' -> 'yaxis2'

  // Panels side by side on a phone, each narrower than PANEL_PX: one column, top to bottom (rows first), each
  // panel as tall as it was, with room between for its ticks and the next one's title; a panel's title, colour
  // bar and shared axes' labels go with it
  const stack = (plot) => {
    const full = plot._fullLayout, size = full?._size;
    if (!size) return false;
    const panels = Object.keys(full).filter(k => /^xaxis\d*$/.test(k)).map(k => full[k])
      .filter(x => x.anchor && x.anchor !== 'free' && plot.data.some(t => (t.xaxis || 'x') === x._id))
      .map(x => ({x, y: full[axisName(x.anchor)]})).filter(p => p.y);
    const columns = new Set(panels.map(p => p.x.domain[0].toFixed(3)));
    const narrowest = Math.min(...panels.map(p => (p.x.domain[1] - p.x.domain[0]) * size.w));
    if (window.innerWidth > PHONE_PX || columns.size < 2 || panels.length > MOST_STACKED || narrowest >= PANEL_PX)
      return false;
    panels.sort((a, b) => b.y.domain[1] - a.y.domain[1] || a.x.domain[0] - b.x.domain[0]);
    const plotTop = plot.querySelector('.main-svg').getBoundingClientRect().top + size.t;
    panels.forEach(p => {  // its height, and how far its tick labels and axis title reach under it
      const texts = plot.querySelectorAll(`.subplot.${p.x._id}${p.y._id} .xaxislayer-above text, `
                                          + `.g-${p.x._id}title text`);
      p.tall = Math.max(120, (p.y.domain[1] - p.y.domain[0]) * size.h);
      p.below = Math.max(0, ...[...texts].map(t => box(t).bottom - plotTop - (1 - p.y.domain[0]) * size.h)) + 12;
    });
    const notes = (plot.layout.annotations || []).map(a => ({...a}));
    // a panel's title: make_subplots writes it centred over the panel's top
    const over = (p, a) => Math.abs(a.x - (p.x.domain[0] + p.x.domain[1]) / 2) < 0.02
      && Math.abs(a.y - p.y.domain[1]) < 0.02;
    const drawn = [...plot.querySelectorAll('.annotation-text-g text')];
    const room = (p) => {  // for its title: none, a line, or two when even 11 px is wider than the figure
      const i = notes.findIndex(a => !a.moved && over(p, a));
      const t = drawn.find(t => t.closest('.annotation')?.dataset.index === String(i));
      if (i < 0 || !t) return 8;
      const at11 = (box(t).right - box(t).left) * 11 / parseFloat(getComputedStyle(t).fontSize);
      return at11 > 0.85 * (size.w + size.l + size.r) ? 44 : 28;
    };
    const area = panels.reduce((sum, p, i) => sum + p.tall + (i ? panels[i - 1].below + room(p) : 0), 0);
    const layout = {height: full.height - size.h + area}, bars = [], indices = [];
    let at = 0;
    panels.forEach((p, i) => {
      if (i) at += panels[i - 1].below + room(p);
      const top = 1 - at / area, bottom = 1 - (at + p.tall) / area;
      notes.forEach(a => !a.moved && over(p, a) && Object.assign(a, {x: 0.5, y: top, moved: true}));
      layout[`${p.x._name}.domain`] = [0, 1];
      layout[`${p.y._name}.domain`] = [bottom, top];
      if (p.y.matches || p.y.showticklabels === false) layout[`${p.y._name}.showticklabels`] = true;
      if (p.x.matches) layout[`${p.x._name}.showticklabels`] = true;
      plot.data.forEach((t, n) => {
        if ((t.xaxis || 'x') === p.x._id && plot._fullData[n]?.showscale) {
          indices.push(n);
          bars.push({y: (top + bottom) / 2, len: Math.min(1, Math.max(0.3, top - bottom)), yanchor: 'middle'});
        }
      });
      at += p.tall;
    });
    layout.annotations = notes.map(({moved, ...a}) => a);
    const legend = plot.layout.legend;  // one placed above or below the panels stays as far from them
    if (legend?.y < 0) layout['legend.y'] = legend.y * size.h / area;
    if (legend?.y > 1) layout['legend.y'] = 1 + (legend.y - 1) * size.h / area;
    if (bars.length < 2) return change(plot, layout);  // one colour scale for all: it stays beside the whole
    return change(plot, layout, {colorbar: bars.map((b, n) => ({...plot.data[indices[n]].colorbar, ...b}))}, indices);
  };

  tp.fit = (plot) => {
    if (stack(plot)) return;  // plotly draws it again, and fit runs on what it draws
    plot.querySelectorAll('.xaxislayer-above, .yaxislayer-above').forEach(layer => {
      const ticks = [...layer.querySelectorAll('text')];
      ticks.forEach(t => t.style.visibility = '');
      const at = ticks.map(quad);
      for (let k = 1; k <= ticks.length; k++) {
        const kept = at.filter((_, i) => i % k === 0);
        if (kept.every((q, i) => i === 0 || !clash(kept[i - 1], q))) {
          ticks.forEach((t, i) => t.style.visibility = i % k === 0 ? '' : 'hidden');
          break;
        }
      }
    });
    // where two axes meet, an x label that touches a y label gives way (the corner's "0" under a "1")
    const yTicks = [...plot.querySelectorAll('.yaxislayer-above text')].filter(shown).map(quad);
    plot.querySelectorAll('.xaxislayer-above text').forEach(t => {
      if (shown(t) && yTicks.some(q => clash(quad(t), q))) t.style.visibility = 'hidden';
    });
    const cells = [...plot.querySelectorAll('.heatmaplayer text')];
    cells.forEach(t => t.style.visibility = '');
    const inCells = boxes(cells);
    if (inCells.some((b, i) => inCells.slice(i + 1, i + 40).some(c => touch(b, c))))
      cells.forEach(t => t.style.visibility = 'hidden');
    // panels' and axes' titles: smaller, down to 11 px (read on a phone), while one touches another or leaves the
    // figure; one still too long is cut in two lines; a panel's title on its own panel's tick labels rises
    const frame = plot.querySelector('.main-svg')?.getBoundingClientRect();
    const notes = [...plot.querySelectorAll('.annotation-text-g text')];
    const AXIS_TITLES = '[class^="g-x"][class$="title"] text, [class^="g-y"][class$="title"] text';
    const axes = [...plot.querySelectorAll(AXIS_TITLES)];
    const titles = [...notes, ...axes], main = plot.querySelector('.g-gtitle text');
    const out = (b) => frame && (b.left < frame.left || b.right > frame.right || b.top < frame.top);
    const bars = [...plot.querySelectorAll('.colorbar')];  // a colour bar whole: its bar, ticks and title
    // (a panel's title under the figure's title gets room below instead: further down)
    const others = (t) => [...titles, ...bars, ...(notes.includes(t) ? [] : [main])];
    const crowded = (t) => others(t).some(o => o && o !== t && touch(box(t), box(o), 3)) || out(box(t));
    const resize = (t, px) => {  // plotly's own size is kept, to start from at the next fit
      if (!shrunk.has(t)) shrunk.set(t, {own: t.style.fontSize});
      t.style.fontSize = shrunk.get(t).set = `${px}px`;
    };
    titles.forEach(t => {
      if (shrunk.get(t)?.set === t.style.fontSize) t.style.fontSize = shrunk.get(t).own;  // not drawn again since
      let size = parseFloat(getComputedStyle(t).fontSize);
      while (size > 11 && crowded(t)) resize(t, --size);
    });
    const least = Math.min(...notes.map(t => parseFloat(getComputedStyle(t).fontSize)));
    notes.forEach(t => parseFloat(getComputedStyle(t).fontSize) > least && resize(t, least));  // panels' titles alike
    const halves = (text) => {
      const words = text.split(' '), half = Math.ceil(words.length / 2);
      return `${words.slice(0, half).join(' ')}<br>${words.slice(half).join(' ')}`;
    };
    const twoLines = (text) => !text.includes('<br>') && text.includes(' ');
    const ticks = boxes([...plot.querySelectorAll('.xaxislayer-above text, .yaxislayer-above text')].filter(shown));
    const layout = {};
    notes.forEach(t => {
      const i = Number(t.closest('.annotation')?.dataset.index), note = plot.layout?.annotations?.[i];
      if (!note || note.yref !== 'paper') return;
      const b = box(t), text = String(note.text || '');
      if ((out(b) || bars.some(o => touch(b, box(o), 3))) && twoLines(text))
        layout[`annotations[${i}].text`] = halves(text);
      const under = ticks.filter(c => touch(b, c) && c.top + c.bottom > b.top + b.bottom);  // lower than its middle
      if (under.length)
        layout[`annotations[${i}].yshift`] = (note.yshift || 0) + b.bottom - Math.min(...under.map(c => c.top)) + 2;
    });
    axes.forEach(t => {
      const name = axisName(t.closest('g[class]').getAttribute('class').slice(2, -5));  // 'g-y2title' -> 'yaxis2'
      const text = String(plot._fullLayout?.[name]?.title?.text || '');
      if (crowded(t) && twoLines(text)) layout[`${name}.title.text`] = halves(text);
    });
    // a legend beside the plot that takes more than a third of the figure's width: under the plot, in lines
    const legend = plot.querySelector('.legend'), size = plot._fullLayout?._size;
    if (legend && frame && size && plot._fullLayout.legend?.orientation !== 'h'
        && legend.getBoundingClientRect().width > frame.width / 3) {
      const xs = [...plot.querySelectorAll('.xaxislayer-above text, [class^="g-x"][class$="title"] text')].map(box);
      const below = Math.max(0, ...xs.map(b => b.bottom - frame.top - size.t - size.h)) + 12;
      const entries = legend.querySelectorAll('.traces').length;
      Object.assign(layout, {'legend.orientation': 'h', 'legend.x': 0, 'legend.xanchor': 'left',
                             'legend.yanchor': 'top', 'legend.y': -below / size.h,
                             height: (plot.layout.height || frame.height) + 22 * entries});
    }
    // the figure's title: room under it when panels' titles, or the plot's top ticks, reach into it (plotly puts the
    // titles in the top margin, and a title in a longer language may take a line more)
    const title = main && box(main), tops = [...notes, ...plot.querySelectorAll('.colorbar text')];
    const reach = !title ? 0 : Math.max(0, ...[...boxes(tops), ...ticks].filter(b => touch(title, b))
      .map(b => title.bottom - b.top));
    if (reach > 0 && plot.layout) {
      const margin = plot.layout.margin?.t ?? 80, height = plot.layout.height || plot.getBoundingClientRect().height;
      Object.assign(layout, {'margin.t': margin + reach + 6, height: (layout.height || height) + reach + 6});
    }
    if (Object.keys(layout).length && change(plot, layout)) return;
    const kept = [];
    plot.querySelectorAll('.barlayer text, .scatterlayer .textpoint text').forEach(t => {
      t.style.visibility = '';
      const b = box(t);
      if (kept.some(c => touch(b, c, 2))) t.style.visibility = 'hidden'; else kept.push(b);  // words apart
    });
  };
  // drawn again by plotly (a new figure, a resize, fit's own change) or shown (a figure drawn in a hidden tab
  // measures nothing until its tab opens): fit once plotly is done
  const soon = (plot) => {
    clearTimeout(plot.fitting);
    plot.fitting = setTimeout(() => { plot.fitting = 0; tp.fit(plot); }, 50);
  };
  const resized = new ResizeObserver(entries => entries.forEach(e => e.contentRect.width && soon(e.target)));
  new MutationObserver(() => document.querySelectorAll('.js-plotly-plot:not([data-fits])').forEach(plot => {
    if (!plot.on) return;  // plotly has not made it a graph yet
    plot.dataset.fits = '1';
    plot.on('plotly_afterplot', () => soon(plot));
    plot.on('plotly_relayout', () => soon(plot));
    resized.observe(plot);
  })).observe(document.documentElement, {childList: true, subtree: true});

  // Settled: no event running (gradio's status trackers hidden), no figure waiting to be laid out, and nothing on the
  // page changed for `quiet` ms. What a person would call "done drawing"; the browser tests wait on it (tp.settled())
  // instead of sleeping for a fixed time
  let changed = performance.now();
  new MutationObserver(() => { changed = performance.now(); }).observe(document.documentElement,
    {childList: true, subtree: true, attributes: true, characterData: true});
  // a window resized (presentation mode sends one): plotly redraws its figures for it 100 ms later
  window.addEventListener('resize', () => { changed = performance.now() + 100; });
  tp.settled = (quiet = 150) => performance.now() - changed >= quiet
    && ![...document.querySelectorAll('[data-testid=status-tracker]')]
      .some(e => !e.classList.contains('hide') && e.getClientRects().length)
    && ![...document.querySelectorAll('.js-plotly-plot')].some(plot => plot.fitting);

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
  // presentation mode: the page zoomed; plotly figures then measure their boxes again, so each fits the width. On a
  // screen as narrow as a phone's (a link made in presentation mode, opened by a class) the page keeps the phone's
  // layout: its one line of panel, zoomed, would leave the sentence a few letters wide. (A class on <body>, not an
  // @media rule in style.css: Gradio scopes a media rule's selectors inside its container, where <body> is not.)
  const wide = window.matchMedia('(min-width: 700px)');
  let presenting = false;
  const drawPresent = () => {
    document.body.classList.toggle('present', presenting && wide.matches);
    setTimeout(() => window.dispatchEvent(new Event('resize')), 50);
  };
  tp.present = (on) => { presenting = Boolean(on); drawPresent(); };
  wide.addEventListener('change', () => { if (presenting) drawPresent(); });
})();
