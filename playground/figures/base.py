"""What every figure shares: the look (font, colours, a small template), titles that wrap, heatmaps, token
labels. Never imports gradio.

Token labels are index-prefixed ("3 ▁man") so repeated tokens stay apart, and HTML-escaped because
plotly reads labels as HTML ("<s>" would vanish as an unknown tag).
"""
from __future__ import annotations

import html

import plotly.graph_objects as go
from torch import Tensor


from playground import pieces
from playground.i18n import ENGLISH, Texts


FONT = dict(size=14)  # readable on a classroom projector


SCALE = "Blues"


# plotly_white's look in the few settings these figures use: a named template is sent whole with every figure
TEMPLATE = go.layout.Template(layout=dict(
    paper_bgcolor="white", plot_bgcolor="white", hovermode="closest",
    xaxis=dict(gridcolor="#EBF0F8", linecolor="#EBF0F8", zerolinecolor="#EBF0F8", automargin=True),
    yaxis=dict(gridcolor="#EBF0F8", linecolor="#EBF0F8", zerolinecolor="#EBF0F8", automargin=True),
    colorway=["#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3", "#FF6692", "#B6E880"]))


labels = pieces.labels  # "1 A", "2 man", "3 -s": every axis of pieces reads the same


written = pieces.shown


def values(t: Tensor):
    """A tensor as a float32 numpy array: plotly sends those as packed binary (4 bytes a number, base64), not as
    text of 17 digits."""
    return t.detach().float().cpu().numpy()


TITLE_CHARS = 42  # a title's line: what a phone's box (about 330 px) and a projector's Lesson card hold


WIDE = set("ABCDEHKMNOQRUVWXYZmw")  # letters about a quarter wider than the average one


def wrapped(text: str, width: int = TITLE_CHARS) -> tuple[str, int]:
    """(escaped text with <br> between lines of at most `width` average characters, number of lines): plotly never
    wraps a title, and a line wider than its box is cut. A wide letter counts 1.25 (German capitalizes its nouns)."""
    lines: list[str] = []
    for word in text.split():
        line = f"{lines[-1]} {word}" if lines else word
        if lines and len(line) + 0.25 * sum(c in WIDE for c in line) <= width:
            lines[-1] = line
        else:
            lines.append(word)
    return "<br>".join(html.escape(line) for line in lines or [""]), max(len(lines), 1)


def laid_out(fig: go.Figure, title: str, height: int) -> go.Figure:
    text, lines = wrapped(title)
    fig.update_layout(title=dict(text=text, x=0.01, font=dict(size=16)), height=height + 20 * (lines - 1), font=FONT,
                      margin=dict(l=10, r=10, t=40 + 20 * lines, b=10), template=TEMPLATE)
    return fig


def heatmap_trace(z, x, y, show_scale=True, zmax=None, _: Texts = ENGLISH) -> go.Heatmap:
    return go.Heatmap(z=z, x=x, y=y, colorscale=SCALE, zmin=0, zmax=zmax, showscale=show_scale,
                      hovertemplate=_("query %{y}<br>key %{x}<br>p = %{z:.3f}") + "<extra></extra>")
