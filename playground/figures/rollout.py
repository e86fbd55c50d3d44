"""Rollout: attention followed through the layers. Never imports gradio."""
from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots
from torch import Tensor


from playground.i18n import ENGLISH, Texts
from .base import labels, values, laid_out, heatmap_trace


def rollout_figure(panels: list[tuple[str, Tensor, list[str]]], title: str, _: Texts = ENGLISH) -> go.Figure:
    """Raw last-layer maps beside their rollout: (title, (T, T) weights, tokens) per panel, two per row."""
    rows = math.ceil(len(panels) / 2)
    fig = make_subplots(rows=rows, cols=2, subplot_titles=[t for t, *_rest in panels], horizontal_spacing=0.12,
                        vertical_spacing=0.14)
    for i, (_title, weights, tokens) in enumerate(panels):
        fig.add_trace(heatmap_trace(values(weights), labels(tokens), labels(tokens), show_scale=i == 0, zmax=1, _=_),
                      row=i // 2 + 1, col=i % 2 + 1)
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(tickangle=-45)
    return laid_out(fig, title, 140 + 480 * rows)
