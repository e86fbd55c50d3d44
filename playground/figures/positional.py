"""Positional encoding: the matrix, its curves, the similarity of positions, and what the first layer reads. Never imports gradio."""
from __future__ import annotations


import plotly.graph_objects as go
from plotly.subplots import make_subplots
from torch import Tensor


from playground.i18n import ENGLISH, N_, Texts
from .base import labels, values, laid_out


LAYOUTS = {"interleaved": N_("sines on even dimensions, cosines on odd (§3.5)"),
           "halves": N_("sines in the first half of the dimensions, cosines in the second (Marian's layout)")}


def pe_matrix(pe: Tensor, positions: int = 100, layout: str = "interleaved", _: Texts = ENGLISH) -> go.Figure:
    pe = pe[:positions]
    fig = go.Figure(go.Heatmap(z=values(pe), x=list(range(1, pe.size(1) + 1)), y=list(range(1, pe.size(0) + 1)),
                               colorscale="RdBu", zmid=0,  # positions and dimensions counted from 1, as the page counts
                               hovertemplate=_("position %{y}, dimension %{x}: %{z:.3f}") + "<extra></extra>"))
    fig.update_xaxes(title_text=_("dimension i"))
    fig.update_yaxes(title_text=_("position"), autorange="reversed")
    return laid_out(fig, _("PE matrix: {positions} positions x {dimensions} dimensions; {layout}", positions=pe.size(0),
                           dimensions=pe.size(1), layout=_(LAYOUTS[layout])), 520)


def pe_curves(pe: Tensor, dims: list[int], positions: int = 100, layout: str = "interleaved",
              _: Texts = ENGLISH) -> go.Figure:
    fig = go.Figure()
    for d in dims:
        sine = d % 2 == 0 if layout == "interleaved" else d < pe.size(1) // 2
        kind = "sin" if sine else "cos"
        fig.add_trace(go.Scatter(x=list(range(1, min(positions, pe.size(0)) + 1)), y=values(pe[:positions, d]),
                                 mode="lines", name=_("dimension {n} ({kind})", n=d + 1, kind=kind)))
    fig.update_xaxes(title_text=_("position"))
    fig.update_yaxes(title_text=_("PE value"), range=[-1.1, 1.1])
    return laid_out(fig, _("Sinusoids of chosen dimensions: lower dimensions turn faster"), 420)


def pe_similarity(pe: Tensor, positions: int = 60, _: Texts = ENGLISH) -> go.Figure:
    p = pe[:positions]
    sim = p @ p.t()  # (P, P) dot products between positions
    n = list(range(1, p.size(0) + 1))
    fig = go.Figure(go.Heatmap(z=values(sim), x=n, y=n, colorscale="Viridis",
                               hovertemplate=_("position %{y} . position %{x} = %{z:.2f}") + "<extra></extra>"))
    fig.update_yaxes(autorange="reversed", title_text=_("position"))
    fig.update_xaxes(title_text=_("position"))
    return laid_out(fig, _("Dot product PE(p) . PE(q): nearby positions look alike"), 520)


def embedding_inputs(embedded: Tensor, with_pe: Tensor, tokens: list[str], title: str,
                     _: Texts = ENGLISH) -> go.Figure:
    """What the first layer received: sqrt(d) * embedding, the positional encoding, and their sum (N, D)."""
    fig = make_subplots(rows=1, cols=3, shared_yaxes=True, horizontal_spacing=0.02,
                        subplot_titles=[_("word vector"), _("+ position wave"), _("= layer input")])
    y = labels(tokens)
    panels = (embedded, with_pe - embedded, with_pe)
    top = max(float(z.abs().max()) for z in panels)  # one colour scale for the three: their sizes compare by eye
    for col, z in enumerate(panels, start=1):
        fig.add_trace(go.Heatmap(z=values(z), y=y, colorscale="RdBu", zmin=-top, zmax=top, showscale=col == 3,
                                 colorbar=dict(thickness=12),
                                 hovertemplate=_("%{y}, dim %{x}: %{z:.3f}") + "<extra></extra>"), row=1, col=col)
    fig.update_yaxes(autorange="reversed")
    return laid_out(fig, title, 160 + 24 * max(len(tokens), 8))
