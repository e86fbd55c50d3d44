"""One word changed: the patching grid. Never imports gradio."""
from __future__ import annotations

import html

import plotly.graph_objects as go
from plotly.subplots import make_subplots
from torch import Tensor


from playground.i18n import ENGLISH, Texts
from .base import values, laid_out


def patching_grid(panels: list[tuple[str, Tensor, list[str]]], rows_name: str, title: str,
                  _: Texts = ENGLISH) -> go.Figure:
    """Activation patching's shares, one panel per site: (title, (layers, positions or heads) shares, column labels).
    One diverging scale for all, 0 white (the patch changes nothing), 1 dark red (it carries the whole difference);
    negative shares (the patch pushes the other way) in blue."""
    fig = make_subplots(rows=len(panels), cols=1, subplot_titles=[html.escape(t) for t, *_rest in panels],
                        vertical_spacing=min(0.14, 0.6 / max(len(panels), 1)))  # room for a title in two lines
    for i, (_title, shares, columns) in enumerate(panels):
        layers = [_("layer {n}", n=n + 1) for n in range(shares.size(0))]
        fig.add_trace(go.Heatmap(z=values(shares), x=columns, y=layers, colorscale="RdBu_r", zmid=0, zmin=-1, zmax=1,
                                 showscale=i == 0, colorbar=dict(title=dict(text=_("share"), side="right"), len=0.6),
                                 hovertemplate=_("%{y}, {rows} %{x}<br>share %{z:.2f}").replace("{rows}", rows_name)
                                 + "<extra></extra>"),
                      row=i + 1, col=1)
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(tickangle=-45)
    return laid_out(fig, title, min(1500, 140 + 210 * len(panels)))
