"""The model at a glance: Figure 1 of the paper, drawn for one translation as an SVG (no gradio, no plotly).

The encoder reads the sentence along the top lane, the decoder writes along the bottom lane, and every box shows
what the hooks saw there: the first layer's input, each layer's self-attention (and cross-attention) map averaged
over heads, and the top 5 words at the chosen step. Every step is drawn once, hidden but the first; the page's
script only shows another step (`data-at`) when its word is clicked, so choosing a word costs no request.
"""
from __future__ import annotations

import html

import torch
from torch import Tensor

from .pieces import piece, starts_word
from .results import Result

__all__ = ["figure", "piece", "starts_word"]

WIDTH, HEIGHT = 1200, 280
SIDE = 946  # the "Next piece" panel is an SVG of its own from here on: a narrow screen shows it under the rest
BLUES = ["#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"]
CHAR = 7.3  # the width of one character of the 12 px monospace the pieces are written in
MAX_CELLS = 32  # a map with more rows or columns is averaged into this many bins a side (its file stays small)
MAX_STEPS = 60  # words of the translation one can choose (the rest of a very long one shows none)

# the view each box opens, by its key (playground.registry)
OPENS = {"sentence": "used", "embedding": "positional", "encoder": "attention", "memory": "rollout",
         "decoder": "families", "cross": "attention", "output": "steps"}


def pooled(m: Tensor) -> Tensor:
    """m (q, k) averaged into at most MAX_CELLS x MAX_CELLS bins."""
    q, k = m.shape
    if q <= MAX_CELLS and k <= MAX_CELLS:
        return m
    out = torch.nn.functional.adaptive_avg_pool2d(m[None, None], (min(q, MAX_CELLS), min(k, MAX_CELLS)))
    return out[0, 0]  # (1, 1, q', k') -> (q', k')


def thumbnail(m: Tensor, x: float, y: float, size: float, opens: str, label: str, focus: str = "") -> str:
    """A map (q, k) as size x size px of cells in nine shades of blue, one path per shade: its file stays small.
    focus: the part of the view it opens ("view=attention&kind=cross&layer=0")."""
    m = pooled(m.float())
    q, k = m.shape
    top = float(m.max()) or 1.0
    shade = (m / top * (len(BLUES) - 0.001)).long().clamp(0, len(BLUES) - 1)
    paths = []
    for level in range(1, len(BLUES)):
        cells = (shade == level).nonzero().tolist()
        if cells:
            d = "".join(f"M{c} {r}h1v1h-1z" for r, c in cells)
            paths.append(f'<path fill="{BLUES[level]}" d="{d}"/>')
    focused = f' data-focus="{html.escape(focus)}"' if focus else ""
    return (f'<g class="box" data-open="{OPENS[opens]}"{focused}><title>{html.escape(label)}</title>'
            f'<rect x="{x}" y="{y}" width="{size}" height="{size}" fill="{BLUES[0]}" stroke="#bbb"/>'
            f'<g transform="translate({x} {y}) scale({size / k:.3f} {size / q:.3f})">{"".join(paths)}</g></g>')


def layout(tokens: list[str], x: float, y: float, width: float, lines: int) -> list[tuple[float, float, float]]:
    """Where each piece's box goes, (x, y, width), wrapped into `width`: the pieces of one word touch, a new word
    starts after a gap. Pieces past `lines` lines are left out (the list is shorter)."""
    out, cx, line = [], x, 0
    for i, tok in enumerate(tokens):
        w = len(piece(tok)) * CHAR + 6
        gap = 5 if starts_word(tok) and i else 1
        if cx + gap + w > x + width and cx > x:
            cx, line, gap = x, line + 1, 0
        if line >= lines:
            break
        out.append((cx + gap, y + line * 16, w))
        cx += gap + w
    return out


def chips(tokens: list[str], places: list[tuple[float, float, float]], ids: str = "",
          looks: str = 'class="chip"') -> tuple[str, str]:
    """The pieces' boxes and their texts, drawn apart so that a step's colours can go between the two; ids: a prefix
    naming each box (a step's colour reuses it), or none; looks: the boxes' style attributes."""
    named = [f' id="{ids}{i}"' if ids else "" for i in range(len(places))]
    boxes = "".join(f'<rect{name} x="{x:.1f}" y="{y}" width="{w:.1f}" height="14" rx="2" {looks}/>'
                    for name, (x, y, w) in zip(named, places))
    texts = "".join(f'<text x="{x + 3:.1f}" y="{y + 11}" class="piece">{html.escape(piece(tok))}</text>'
                    for tok, (x, y, w) in zip(tokens, places))
    if len(places) < len(tokens):
        x, y, w = places[-1]
        texts += f'<text x="{x + w + 2:.1f}" y="{y + 11}" class="small">…</text>'
    return boxes, texts


def box(x: float, y: float, w: float, h: float, title: str, caption: str, opens: str | None = None) -> str:
    link = f' data-open="{OPENS[opens]}"' if opens else ""
    if opens == "output":  # the output side opens Step by step at the step shown (the page's script adds it)
        link += ' data-focus="view=steps"'
    return (f'<g class="box"{link}><rect x="{x}" y="{y}" width="{w}" height="{h}" rx="6" class="frame"/>'
            f'<text x="{x + 6}" y="{y + 15}" class="title">{html.escape(title)}</text>'
            f'<text x="{x + 6}" y="{y + h - 6}" class="small">{html.escape(caption)}</text></g>')


def arrow(x1: float, y1: float, x2: float, y2: float) -> str:
    return f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" class="flow" marker-end="url(#head)"/>'


def figure(result: Result, printed: bool = False) -> str:
    """The whole picture for one translation, as HTML: the SVG and the translation's pieces to click (each shows its
    step); `printed`: for paper, the first step and no word about clicking."""
    maps, translation = result.maps, result.translation
    src, tgt = maps.source_tokens, maps.target_tokens  # tgt: <s> then the translation, the decoder's inputs
    steps = translation.steps[:MAX_STEPS]
    n_enc, n_dec = maps.encoder.size(0), maps.decoder.size(0)
    d_model = result.inspection.source_input.size(-1)
    E_Y, D_Y, LANE = 4, 154, 122  # the encoder's lane, the decoder's lane, their height
    BUS = 140  # the memory's way to every decoder layer
    parts, side = [], []  # the model's boxes (left of SIDE), and the "Next piece" panel

    # inputs: the sentence's pieces, and their vectors (embedding x sqrt(d_model) + position) as the encoder gets them
    parts.append(box(4, E_Y, 182, LANE, "Your sentence", "a word's pieces touch", "sentence"))
    parts.append(box(4, D_Y, 182, LANE, "Written so far", "the decoder's input", "output"))
    parts.append(box(196, E_Y, 104, LANE, "Embedding", "+ position", "embedding"))
    parts.append(box(196, D_Y, 104, LANE, "Embedding", "+ position", "embedding"))
    ins = result.inspection
    for y, inputs, name in ((E_Y, ins.source_input, "source"), (D_Y, ins.target_input, "target")):
        vectors = inputs[:, :32].abs()  # (pieces, first 32 of d_model numbers): how large each number is
        parts.append(thumbnail(vectors, 214, y + 24, 70, "embedding", f"The first 32 of the {d_model} numbers of "
                               f"each {name} piece (rows), after adding its position"))

    # the layers: each encoder layer's self-attention; each decoder layer's masked self-attention and cross-attention
    left, right, gap = 312, 832, 8
    n = max(n_enc, n_dec)
    w = (right - left - gap * (n - 1)) / n
    enc_avg, dec_avg, cross_avg = maps.encoder.mean(1), maps.decoder.mean(1), maps.cross.mean(1)  # (L, q, k)
    for i in range(n_enc):
        x = left + i * (w + gap)
        size = min(70, w - 16)
        parts.append(box(x, E_Y, w, LANE, f"Encoder {i + 1}", "self-attention", "encoder"))
        parts.append(thumbnail(enc_avg[i], x + (w - size) / 2, E_Y + 24, size, "encoder", f"Encoder layer {i + 1}: "
                               "self-attention, mean of heads (row: a piece, column: what it looks at)",
                               f"view=attention&kind=encoder&layer={i}"))
    size = min(56, (w - 18) / 2)
    for i in range(n_dec):
        x = left + i * (w + gap)
        parts.append(box(x, D_Y, w, LANE, f"Decoder {i + 1}", "pieces | sentence", "decoder"))
        parts.append(thumbnail(dec_avg[i], x + 6, D_Y + 24, size, "encoder",  # opens Heatmaps, as the others
                               f"Decoder layer {i + 1}: masked self-attention over the pieces written so far",
                               f"view=attention&kind=decoder&layer={i}"))
        parts.append(thumbnail(cross_avg[i], x + w - 6 - size, D_Y + 24, size, "cross",
                               f"Decoder layer {i + 1}: cross-attention to the sentence (row: a step)",
                               f"view=attention&kind=cross&layer={i}"))
        into = x + w - 6 - size / 2  # the memory, into this layer's cross-attention
        parts.append(arrow(into, BUS, into, D_Y + 2))
    parts.append(box(842, E_Y, 96, LANE, "Memory", f"{len(src)} vectors", "memory"))
    parts.append(f'<text x="848" y="{E_Y + 50}" class="small">the encoder\'s</text>'
                 f'<text x="848" y="{E_Y + 66}" class="small">output, one</text>'
                 f'<text x="848" y="{E_Y + 82}" class="small">vector a piece</text>')
    parts.append(box(842, D_Y, 96, LANE, "Linear +", "probabilities", "output"))
    parts.append(f'<text x="848" y="{D_Y + 31}" class="title">softmax</text>'
                 f'<text x="848" y="{D_Y + 60}" class="small">scores every</text>'
                 f'<text x="848" y="{D_Y + 76}" class="small">piece it knows</text>')
    side.append(box(948, E_Y, 248, D_Y + LANE - E_Y, "Next piece",
                     "at the first step" if printed else "click a piece of the translation", "output"))

    # the flow: left to right in each lane, the memory down to every decoder layer
    for y in (E_Y, D_Y):
        mid = y + LANE / 2
        parts += [arrow(186, mid, 195, mid), arrow(300, mid, 311, mid), arrow(right, mid, 841, mid)]
    parts.append(arrow(938, D_Y + LANE / 2, 947, D_Y + LANE / 2))
    parts.append(f'<polyline points="890,{E_Y + LANE} 890,{BUS} {left + w - 6 - size / 2},{BUS}" class="flow"/>')

    # what changes with the step: the pieces it looks at, the words written so far, the rows shown, the top 5.
    # Every step's part is small: the sentence's boxes are drawn once and a step only colours them (<use>).
    src_places = layout(src, 10, E_Y + 24, 170, 6)
    tgt_places = layout(tgt, 10, D_Y + 24, 170, 6)
    src_boxes, src_texts = chips(src, src_places, ids="c")
    parts.append(src_boxes)
    # each written piece once; a step shows the first t + 1 (<use> copies take no page style: the looks go inline)
    written = "".join(f'<g id="w{i}" fill="#222" font-size="12" font-family="ui-monospace, monospace">'
                      + "".join(chips([tok], [place], looks='fill="#fff" stroke="#ccc"')) + "</g>"
                      for i, (tok, place) in enumerate(zip(tgt, tgt_places)))
    parts.append(f"<defs>{written}</defs>")
    steps_drawn, sides_drawn = [], []
    q = dec_avg.size(1)
    for t, step in enumerate(steps):
        row = cross_avg[-1, t]  # (S,): the last decoder layer's cross-attention when it wrote word t
        shades = (row / row.max() * (len(BLUES) - 0.001)).long().tolist()[: len(src_places)]
        at = [f'<g class="at{" on" if t == 0 else ""}" data-at="{t}">']
        at += [f'<use href="#c{i}" class="s{level}"/>' for i, level in enumerate(shades) if level]
        at += [f'<use href="#w{i}"/>' for i in range(min(t + 1, len(tgt_places)))]  # the words written so far
        if t < len(tgt_places):  # the newest input piece: the one this step starts from
            x, y, w_ = tgt_places[t]
            at.append(f'<rect x="{x:.1f}" y="{y}" width="{w_:.1f}" height="14" rx="2" class="newest"/>')
        rows = "".join(f"M{x0 - 1:.1f} {D_Y + 23 + size * t / q:.1f}h{size + 2:.1f}v{size / q + 2:.1f}h{-size - 2:.1f}z"
                       for i in range(n_dec) for x0 in (left + i * (w + gap) + 6, left + i * (w + gap) + w - 6 - size))
        at.append(f'<path d="{rows}" class="row"/>')
        steps_drawn.append("".join(at) + "</g>")
        at = [f'<g class="at{" on" if t == 0 else ""}" data-at="{t}">',  # the same step, in the "Next piece" panel
              f'<text x="958" y="{E_Y + 44}" class="word">{html.escape(piece(step.token))}</text>'
              f'<text x="958" y="{E_Y + 64}" class="small">step {t + 1} of {len(translation.steps)}: '
              f'chosen with p = {step.prob:.2f}</text>']
        for r, (tok, p) in enumerate(step.alternatives[:5]):
            y = E_Y + 84 + r * 24
            mark = " chosen" if tok == step.token else ""
            at.append(f'<rect x="1040" y="{y - 12}" width="{max(1.0, 146 * p):.1f}" height="16" class="bar"/>'
                      f'<text x="958" y="{y}" class="piece{mark}">{html.escape(piece(tok)[:11])}</text>'
                      f'<text x="1044" y="{y}" class="small">{p:.2f}</text>')
        sides_drawn.append("".join(at) + "</g>")
    parts += steps_drawn
    parts.append(src_texts)
    side += sides_drawn
    side.append(f'<text x="958" y="{E_Y + 212}" class="small">the darker a piece of</text>'
                f'<text x="958" y="{E_Y + 228}" class="small">"Your sentence", the more</text>'
                f'<text x="958" y="{E_Y + 244}" class="small">the last layer looked at it</text>')

    # a piece that continues a word sits against the one before: the buttons read as the translation's words
    words = "".join(f'<button data-step="{t}" class="{"on" if t == 0 else ""}'
                    f'{" cont" if t and not s.token.startswith("▁") and piece(s.token).isalnum() else ""}">'
                    f'{html.escape(piece(s.token))}</button>' for t, s in enumerate(steps))
    svg = (f'<svg viewBox="0 0 {SIDE} {HEIGHT}" role="img" aria-label="The model at a glance">'
           '<defs><marker id="head" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" '
           'orient="auto"><path d="M0 0L8 4L0 8z" fill="#888"/></marker></defs>'
           # the shades a step gives the sentence's pieces
           + "<style>" + "".join(f".glance .s{i}{{fill:{c}}}" for i, c in enumerate(BLUES)) + "</style>"
           + "".join(parts) + "</svg>")
    next_word = (f'<svg viewBox="{SIDE} 0 {WIDTH - SIDE} {HEIGHT}" role="img" aria-label="The next word">'
                 + "".join(side) + "</svg>")
    how = "piece by piece" if printed else "piece by piece (click one; the pieces of one word touch)"
    return (f'<div class="glance"><div class="glance-row"><div class="glance-scroll">{svg}</div>'
            f'<div class="glance-side">{next_word}</div></div>'
            '<div class="glance-hint">← The picture scrolls sideways: swipe it to see every layer →</div>'
            f'<div class="glance-words">The translation, {how}: {words}</div></div>')
