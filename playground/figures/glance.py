"""The model at a glance: Figure 1 of the paper, drawn for one translation as an SVG (no gradio, no plotly).

Two halves. `glance_of(result)` is what the picture shows, as data (a `Glance`): the first layer's inputs, each
layer's attention averaged over heads, and per step the shade of every source piece and the top five pieces. `figure`
draws it: the encoder reads the sentence along the top lane, the decoder writes along the bottom lane, every box shows
what the hooks saw there, and every step is drawn once, hidden but the first; the page's script only shows another
step (`data-at`) when its piece is clicked, so choosing one costs no request. Every position comes from `Layout`.
"""
from __future__ import annotations

import html
from dataclasses import dataclass

import torch
from torch import Tensor

from playground.i18n import ENGLISH, Texts
from playground.pieces import piece, starts_word
from playground.context import Result

__all__ = ["Glance", "figure", "glance_of", "piece", "starts_word"]

WIDTH, HEIGHT = 1200, 280
SIDE = 946  # the "Next piece" panel is an SVG of its own from here on: a narrow screen shows it under the rest
BLUES = ["#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"]
CHAR = 7.3  # the width of one character of the 12 px monospace the pieces are written in
LETTER = {"small": 6.0, "title": 7.2}  # px: the width of an average letter of each text style
MAX_CELLS = 32  # a map with more rows or columns is averaged into this many bins a side (its file stays small)
MAX_STEPS = 60  # pieces of the translation one can choose (the rest of a very long one shows none)
INPUT_DIMS = 32  # the first numbers of each input vector the embedding boxes show

# the view each box opens, by its key (playground.registry)
OPENS = {"sentence": "used", "embedding": "positional", "encoder": "attention", "memory": "rollout",
         "decoder": "families", "cross": "attention", "output": "steps"}


# -----------------------------------------------------------------------------
# What the picture shows


@dataclass
class GlanceStep:
    token: str  # the piece written at this step (a sentencepiece piece)
    prob: float  # its probability
    shades: list[int]  # per source piece: 0 (white) .. len(BLUES) - 1, how much the last layer's cross-attention
    # looked at it when writing this piece, relative to the piece it looked at most
    top: list[tuple[str, float]]  # the five most probable pieces at this step, best first


@dataclass
class Glance:
    source: list[str]  # the encoder's input pieces
    written: list[str]  # the decoder's inputs: <s> then the translation
    d_model: int
    inputs: dict[str, Tensor]  # "source" (S, INPUT_DIMS) and "target" (T, ...): |embedding + position|, first numbers
    maps: dict[str, list[Tensor]]  # per kind, per layer: attention (q, k) averaged over heads, pooled to MAX_CELLS
    steps: list[GlanceStep]  # the first MAX_STEPS steps
    n_steps: int  # every step of the translation, </s> included


def pooled(m: Tensor) -> Tensor:
    """m (q, k) averaged into at most MAX_CELLS x MAX_CELLS bins."""
    q, k = m.shape
    if q <= MAX_CELLS and k <= MAX_CELLS:
        return m
    out = torch.nn.functional.adaptive_avg_pool2d(m[None, None], (min(q, MAX_CELLS), min(k, MAX_CELLS)))
    return out[0, 0]  # (1, 1, q', k') -> (q', k')


def shades(weights: Tensor) -> list[int]:
    """weights (N,) as shades 0 .. len(BLUES) - 1 relative to the largest: the largest is the darkest."""
    return (weights / weights.max() * (len(BLUES) - 0.001)).long().clamp(0, len(BLUES) - 1).tolist()


def glance_of(result: Result) -> Glance:
    """What the picture of `result` shows, read from its hooked pass."""
    maps, ins = result.maps, result.inspection
    averaged = {kind: getattr(maps, kind).mean(1) for kind in ("encoder", "decoder", "cross")}  # (L, q, k) each
    steps = [GlanceStep(s.token, s.prob, shades(averaged["cross"][-1, t]), list(s.alternatives[:5]))
             for t, s in enumerate(result.translation.steps[:MAX_STEPS])]  # the last layer's row t: (S,)
    return Glance(maps.source_tokens, maps.target_tokens, ins.source_input.size(-1),
                  {"source": ins.source_input[:, :INPUT_DIMS].abs(), "target": ins.target_input[:, :INPUT_DIMS].abs()},
                  {kind: [pooled(m.float()) for m in layers] for kind, layers in averaged.items()},
                  steps, len(result.translation.steps))


# -----------------------------------------------------------------------------
# Where everything goes


@dataclass(frozen=True)
class Layout:
    """Every position of the picture, in SVG units: two lanes (encoder on top, decoder below), the boxes left to
    right, the layers sharing the space between `left` and `right`."""

    n_layers: int  # the deeper stack's layers
    enc_y: float = 4  # the encoder's lane
    dec_y: float = 154  # the decoder's lane
    lane: float = 122  # a lane's height
    bus: float = 140  # the memory's way to every decoder layer
    left: float = 312  # the first layer's box
    right: float = 832  # the last layer's box ends here
    gap: float = 8
    memory_x: float = 842  # the memory and the output projection
    side_x: float = 958  # the "Next piece" panel's text

    @property
    def layer_w(self) -> float:
        return (self.right - self.left - self.gap * (self.n_layers - 1)) / self.n_layers

    def layer_x(self, i: int) -> float:
        return self.left + i * (self.layer_w + self.gap)

    @property
    def enc_map(self) -> float:  # an encoder layer's map, a side
        return min(70, self.layer_w - 16)

    @property
    def dec_map(self) -> float:  # each of a decoder layer's two maps, a side
        return min(56, (self.layer_w - 18) / 2)

    def cross_x(self, i: int) -> float:  # decoder layer i's cross-attention map
        return self.layer_x(i) + self.layer_w - 6 - self.dec_map


# -----------------------------------------------------------------------------
# Drawing: small pieces, then the picture's named parts


def thumbnail(m: Tensor, x: float, y: float, size: float, opens: str, label: str, focus: str = "") -> str:
    """A map (q, k) as size x size px of cells in nine shades of blue, one path per shade: its file stays small.
    focus: the part of the view it opens ("view=attention&kind=cross&layer=0")."""
    q, k = m.shape
    shade = torch.tensor(shades(m.flatten())).view(q, k) if float(m.max()) > 0 else torch.zeros(q, k, dtype=torch.long)
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


def text(x: float, y: float, words: str, css: str, width: float) -> str:
    """`words` (escaped here) at (x, y) in the style `css`, pressed into `width` px when a language's words are
    longer than the English the picture was laid out for."""
    fit = f' textLength="{width:.0f}" lengthAdjust="spacingAndGlyphs"' if len(words) * LETTER[css] > width else ""
    return f'<text x="{x}" y="{y}" class="{css}"{fit}>{html.escape(words)}</text>'


def box(x: float, y: float, w: float, h: float, title: str, caption: str, opens: str | None = None) -> str:
    link = f' data-open="{OPENS[opens]}"' if opens else ""
    if opens == "output":  # the output side opens Step by step at the step shown (the page's script adds it)
        link += ' data-focus="view=steps"'
    return (f'<g class="box"{link}><rect x="{x}" y="{y}" width="{w}" height="{h}" rx="6" class="frame"/>'
            + text(x + 6, y + 15, title, "title", w - 12) + text(x + 6, y + h - 6, caption, "small", w - 12) + "</g>")


def arrow(x1: float, y1: float, x2: float, y2: float) -> str:
    return f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" class="flow" marker-end="url(#head)"/>'


def lines(x: float, y: float, texts: str, width: float, css: str = "small", step: float = 16) -> str:
    """`texts`, one line per line of it (a language breaks its own lines), each within `width` px."""
    return "".join(text(x, y + i * step, t, css, width) for i, t in enumerate(texts.split("\n")))


def inputs_part(g: Glance, at: Layout, _: Texts) -> list[str]:
    """The sentence's and the written pieces' boxes, and their vectors as the first layer gets them."""
    parts = [box(4, at.enc_y, 182, at.lane, _("Your sentence"), _("a word's pieces touch"), "sentence"),
             box(4, at.dec_y, 182, at.lane, _("Written so far"), _("the decoder's input"), "output"),
             box(196, at.enc_y, 104, at.lane, _("Embedding"), _("+ position"), "embedding"),
             box(196, at.dec_y, 104, at.lane, _("Embedding"), _("+ position"), "embedding")]
    for y, side in ((at.enc_y, "source"), (at.dec_y, "target")):
        said = (_("The first {n} of the {d_model} numbers of each source piece (rows), after adding its position",
                  n=INPUT_DIMS, d_model=g.d_model) if side == "source" else
                _("The first {n} of the {d_model} numbers of each target piece (rows), after adding its position",
                  n=INPUT_DIMS, d_model=g.d_model))
        parts.append(thumbnail(pooled(g.inputs[side]), 214, y + 24, 70, "embedding", said))
    return parts


def layers_part(g: Glance, at: Layout, _: Texts) -> list[str]:
    """Each encoder layer's self-attention; each decoder layer's masked self-attention and cross-attention."""
    parts, w = [], at.layer_w
    for i, m in enumerate(g.maps["encoder"]):
        x = at.layer_x(i)
        parts.append(box(x, at.enc_y, w, at.lane, _("Encoder {n}", n=i + 1), _("self-attention"), "encoder"))
        parts.append(thumbnail(m, x + (w - at.enc_map) / 2, at.enc_y + 24, at.enc_map, "encoder",
                               _("Encoder layer {n}: self-attention, mean of heads (row: a piece, column: what it "
                                 "looks at)", n=i + 1), f"view=attention&kind=encoder&layer={i}"))
    for i, (own, cross) in enumerate(zip(g.maps["decoder"], g.maps["cross"])):
        x = at.layer_x(i)
        parts.append(box(x, at.dec_y, w, at.lane, _("Decoder {n}", n=i + 1), _("pieces | sentence"), "decoder"))
        parts.append(thumbnail(own, x + 6, at.dec_y + 24, at.dec_map, "encoder",  # opens Heatmaps, as the others
                               _("Decoder layer {n}: masked self-attention over the pieces written so far", n=i + 1),
                               f"view=attention&kind=decoder&layer={i}"))
        parts.append(thumbnail(cross, at.cross_x(i), at.dec_y + 24, at.dec_map, "cross",
                               _("Decoder layer {n}: cross-attention to the sentence (row: a step)", n=i + 1),
                               f"view=attention&kind=cross&layer={i}"))
        into = at.cross_x(i) + at.dec_map / 2  # the memory, into this layer's cross-attention
        parts.append(arrow(into, at.bus, into, at.dec_y + 2))
    return parts


def ends_part(g: Glance, at: Layout, _: Texts) -> list[str]:
    """The memory, the output projection, and the arrows of the flow."""
    x = at.memory_x
    parts = [box(x, at.enc_y, 96, at.lane, _("Memory"), _.plural("{n} vector", "{n} vectors", len(g.source)),
                 "memory"),
             lines(x + 6, at.enc_y + 50, _("the encoder's\noutput, one\nvector a piece"), 84),
             box(x, at.dec_y, 96, at.lane, _("Linear +"), _("probabilities"), "output"),
             lines(x + 6, at.dec_y + 31, "softmax", 84, "title"),
             lines(x + 6, at.dec_y + 60, _("scores every\npiece it knows"), 84)]
    for y in (at.enc_y, at.dec_y):  # left to right in each lane, the memory down to every decoder layer
        mid = y + at.lane / 2
        parts += [arrow(186, mid, 195, mid), arrow(300, mid, 311, mid), arrow(at.right, mid, x - 1, mid)]
    parts.append(arrow(x + 96, at.dec_y + at.lane / 2, x + 105, at.dec_y + at.lane / 2))
    parts.append(f'<polyline points="{x + 48},{at.enc_y + at.lane} {x + 48},{at.bus} '
                 f'{at.cross_x(0) + at.dec_map / 2},{at.bus}" class="flow"/>')
    return parts


def steps_part(g: Glance, at: Layout) -> list[str]:
    """What changes with the step: the pieces it looks at, the pieces written so far, the map rows it is at. The
    sentence's boxes are drawn once and a step only colours them (<use>), so every step's part is small."""
    src_places = layout(g.source, 10, at.enc_y + 24, 170, 6)
    tgt_places = layout(g.written, 10, at.dec_y + 24, 170, 6)
    src_boxes, src_texts = chips(g.source, src_places, ids="c")
    # each written piece once; a step shows the first t + 1 (<use> copies take no page style: the looks go inline)
    written = "".join(f'<g id="w{i}" fill="#222" font-size="12" font-family="ui-monospace, monospace">'
                      + "".join(chips([tok], [place], looks='fill="#fff" stroke="#ccc"')) + "</g>"
                      for i, (tok, place) in enumerate(zip(g.written, tgt_places)))
    parts = [src_boxes, f"<defs>{written}</defs>"]
    q, size = g.maps["decoder"][-1].size(0), at.dec_map
    for t, step in enumerate(g.steps):
        part = [f'<g class="at{" on" if t == 0 else ""}" data-at="{t}">']
        part += [f'<use href="#c{i}" class="s{level}"/>' for i, level in enumerate(step.shades[: len(src_places)])
                 if level]
        part += [f'<use href="#w{i}"/>' for i in range(min(t + 1, len(tgt_places)))]  # the pieces written so far
        if t < len(tgt_places):  # the newest input piece: the one this step starts from
            x, y, w = tgt_places[t]
            part.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="14" rx="2" class="newest"/>')
        rows = "".join(f"M{x0 - 1:.1f} {at.dec_y + 23 + size * t / q:.1f}h{size + 2:.1f}v{size / q + 2:.1f}"
                       f"h{-size - 2:.1f}z" for i in range(len(g.maps["decoder"]))
                       for x0 in (at.layer_x(i) + 6, at.cross_x(i)))
        part.append(f'<path d="{rows}" class="row"/>')
        parts.append("".join(part) + "</g>")
    return parts + [src_texts]


def side_part(g: Glance, at: Layout, printed: bool, _: Texts) -> list[str]:
    """The "Next piece" panel: per step, the piece written, its probability and the top five."""
    x = at.side_x
    parts = [box(948, at.enc_y, 248, at.dec_y + at.lane - at.enc_y, _("Next piece"),
                 _("at the first step") if printed else _("click a piece of the translation"), "output")]
    for t, step in enumerate(g.steps):
        part = [f'<g class="at{" on" if t == 0 else ""}" data-at="{t}">',
                f'<text x="{x}" y="{at.enc_y + 44}" class="word">{html.escape(piece(step.token))}</text>',
                text(x, at.enc_y + 64, _("step {n} of {total}: chosen with p = {p}", n=t + 1, total=g.n_steps,
                                         p=_.number(step.prob)), "small", 232)]
        for r, (tok, p) in enumerate(step.top):
            y = at.enc_y + 84 + r * 24
            mark = " chosen" if tok == step.token else ""
            part.append(f'<rect x="{x + 82}" y="{y - 12}" width="{max(1.0, 146 * p):.1f}" height="16" class="bar"/>'
                        f'<text x="{x}" y="{y}" class="piece{mark}">{html.escape(piece(tok)[:11])}</text>'
                        f'<text x="{x + 86}" y="{y}" class="small">{_.number(p)}</text>')
        parts.append("".join(part) + "</g>")
    parts.append(lines(x, at.enc_y + 212, _("the darker a piece of\n\"Your sentence\", the more\nthe last layer "
                                            "looked at it"), 232))
    return parts


def figure(result: Result, printed: bool = False, _: Texts = ENGLISH) -> str:
    """The whole picture for one translation, as HTML: the SVG and the translation's pieces to click (each shows its
    step); `printed`: for paper, the first step and no word about clicking."""
    g = glance_of(result)
    at = Layout(max(len(g.maps["encoder"]), len(g.maps["decoder"])))
    parts = inputs_part(g, at, _) + layers_part(g, at, _) + ends_part(g, at, _) + steps_part(g, at)
    named, next_named = html.escape(_("The model at a glance")), html.escape(_("The next word"))
    svg = (f'<svg viewBox="0 0 {SIDE} {HEIGHT}" role="img" aria-label="{named}">'
           '<defs><marker id="head" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" '
           'orient="auto"><path d="M0 0L8 4L0 8z" fill="#888"/></marker></defs>'
           # the shades a step gives the sentence's pieces
           + "<style>" + "".join(f".glance .s{i}{{fill:{c}}}" for i, c in enumerate(BLUES)) + "</style>"
           + "".join(parts) + "</svg>")
    next_piece = (f'<svg viewBox="{SIDE} 0 {WIDTH - SIDE} {HEIGHT}" role="img" '
                  f'aria-label="{next_named}">' + "".join(side_part(g, at, printed, _)) + "</svg>")
    # a piece that continues a word sits against the one before: the buttons read as the translation's words
    words = "".join(f'<button data-step="{t}" class="{"on" if t == 0 else ""}'
                    f'{" cont" if t and not s.token.startswith("▁") and piece(s.token).isalnum() else ""}">'
                    f'{html.escape(piece(s.token))}</button>' for t, s in enumerate(g.steps))
    hint = _("← The picture scrolls sideways: swipe it to see every layer →")
    said = (_("The translation, piece by piece:") if printed else
            _("The translation, piece by piece (click one; the pieces of one word touch):"))
    return (f'<div class="glance"><div class="glance-row"><div class="glance-scroll">{svg}</div>'
            f'<div class="glance-side">{next_piece}</div></div>'
            f'<div class="glance-hint">{hint}</div>'
            f'<div class="glance-words">{said} {words}'
            + ("" if printed else ' <a href="#" data-open="steps" data-focus="view=steps">'
               + _("When was each piece decided?") + "</a>") + '</div></div>')
