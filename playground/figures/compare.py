"""Compare models: two maps side by side, and their difference. Never imports gradio."""
from __future__ import annotations

import html

import plotly.graph_objects as go
from plotly.subplots import make_subplots
from torch import Tensor


from playground.i18n import ENGLISH, Texts
from .base import labels, values, laid_out, heatmap_trace


def side_by_side(panels: list[tuple[str, Tensor, list[str], list[str]]], title: str, difference: int | None = None,
                 _: Texts = ENGLISH) -> go.Figure:
    """(title, (q, k) weights, query tokens, key tokens) per panel, in one row; the panel numbered `difference` is
    drawn on a diverging scale centred on 0, the others on the attention scale."""
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[html.escape(t) for t, *_rest in panels],
                        horizontal_spacing=0.06)
    for i, (_title, weights, queries, keys) in enumerate(panels):
        if i == difference:
            bound = max(float(weights.abs().max()), 1e-6)
            trace = go.Heatmap(z=values(weights), x=labels(keys), y=labels(queries), colorscale="RdBu", zmid=0,
                               zmin=-bound, zmax=bound, colorbar=dict(x=1.02, len=0.8),
                               hovertemplate=_("query %{y}<br>key %{x}<br>difference %{z:.3f}") + "<extra></extra>")
        else:
            trace = heatmap_trace(values(weights), labels(keys), labels(queries), show_scale=i == 0, zmax=1, _=_)
        fig.add_trace(trace, row=1, col=i + 1)
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(tickangle=-45)
    longest = max(max(len(q), len(k)) for *_rest, q, k in panels)
    return laid_out(fig, title, min(900, 220 + 22 * max(longest, 8)))
