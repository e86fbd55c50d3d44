"""Step by step: the probabilities at each step, and one step in detail. Never imports gradio."""
from __future__ import annotations

import html

import plotly.graph_objects as go
from plotly.subplots import make_subplots
from torch import Tensor


from playground import pieces
from playground.i18n import ENGLISH, Texts
from .base import SCALE, labels, values, laid_out, heatmap_trace


def step_probabilities(steps, title: str = "", _: Texts = ENGLISH) -> go.Figure:
    """Rows are decoding steps, columns the five most probable tokens; the chosen one is bracketed in bold. One row a
    step, so the figure fits any box's width however long the translation is, and grows downwards."""
    n, ranks = len(steps), 5
    z = [[(s.alternatives[r][1] if r < len(s.alternatives) else 0.0) for r in range(ranks)] for s in steps]
    text = [[html.escape(pieces.shown(s.alternatives[r][0])) if r < len(s.alternatives) else "" for r in range(ranks)]
            for s in steps]
    for j, s in enumerate(steps):  # mark the token that was actually chosen (sampling may pick rank > 1)
        for r in range(ranks):
            if r < len(s.alternatives) and s.alternatives[r][0] == s.token:
                text[j][r] = f"<b>[{text[j][r]}]</b>"
    y = pieces.labels([s.token for s in steps])
    said = [[("<br>" + _("the stutter guard removed {piece} (p = {p})", piece=html.escape(pieces.shown(s.removed[0])),
                         p=_.number(s.removed[1], 3)) if s.removed else "")] * ranks
            for s in steps]  # where it took the model's first choice away
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(1, ranks + 1)), y=y, text=text,  # the rank as a number: "#1" drew NaN, "rank 1" turned
        # its labels on a phone, into the title
        texttemplate="%{text}", textfont=dict(size=13), customdata=said,
        colorscale=SCALE, zmin=0, zmax=1,
        hovertemplate=_("step %{y}<br>%{text}: p = %{z:.3f}%{customdata}") + "<extra></extra>",
        colorbar=dict(thickness=12),
    ))
    fig.update_yaxes(autorange="reversed", title_text=_("step (chosen piece)"))
    fig.update_xaxes(side="top", dtick=1, tickangle=0)  # the columns: ranks 1-5 (the title says top-5)
    return laid_out(fig, title or _("Top-5 candidates at every step"), 110 + 26 * n)


def step_detail(step, cross_row: Tensor, source_tokens: list[str], index: int, _: Texts = ENGLISH) -> go.Figure:
    """One step: the top-5 candidates, and the cross-attention (layers x source tokens) when it chose."""
    fig = make_subplots(rows=1, cols=2, column_widths=[0.35, 0.65], horizontal_spacing=0.12,
                        subplot_titles=[_("candidates"), _("cross-attention, averaged over heads")])
    toks = [html.escape(pieces.shown(t)) for t, _p in step.alternatives]
    probs = [p for _t, p in step.alternatives]
    colours = ["#1f77b4" if t == step.token else "#aec7e8" for t, _p in step.alternatives]
    said = [""] * len(toks)
    if step.removed:  # decoding's stutter guard took the model's first choice away: drawn first, crossed, in grey
        toks, probs = [html.escape(pieces.shown(step.removed[0])) + " ✕"] + toks, [step.removed[1]] + probs
        colours, said = ["#c7c7c7"] + colours, [" " + _("(removed by the stutter guard)")] + said
    fig.add_trace(go.Bar(x=probs, y=toks, orientation="h", marker_color=colours, customdata=said,
                         marker_pattern_shape=["x" if s else "" for s in said],
                         hovertemplate="%{y}: p = %{x:.3f}%{customdata}<extra></extra>", showlegend=False),
                  row=1, col=1)
    fig.update_yaxes(autorange="reversed", row=1, col=1)
    L = cross_row.size(0)
    fig.add_trace(heatmap_trace(values(cross_row), labels(source_tokens), [_("layer {n}", n=i + 1) for i in range(L)],
                                zmax=None, _=_), row=1, col=2)
    fig.update_yaxes(autorange="reversed", row=1, col=2)
    fig.update_xaxes(tickangle=-45, row=1, col=2)
    title = _("Step {n}: chose {piece} (p = {p})", n=index + 1, piece=pieces.shown(step.token), p=_.number(step.prob, 3))
    if step.removed:
        title += "; " + _("the stutter guard removed {piece} (p = {p})", piece=pieces.shown(step.removed[0]),
                          p=_.number(step.removed[1], 3))
    return laid_out(fig, title, 140 + max(220, 40 * L))
