"""How it learned: attention at each stage of training. Never imports gradio."""
from __future__ import annotations


import plotly.graph_objects as go
from plotly.subplots import make_subplots
from torch import Tensor


from playground.i18n import ENGLISH, Texts
from .base import labels, values, laid_out, heatmap_trace


def attention_stages(stages: list[tuple[str, Tensor]], query_tokens: list[str], key_tokens: list[str],
                     title: str, _: Texts = ENGLISH) -> go.Figure:
    """One map per stage of training (label, (queries, keys) weights), side by side on a shared colour scale."""
    fig = make_subplots(rows=1, cols=len(stages), subplot_titles=[label for label, _weights in stages],
                        horizontal_spacing=0.02)
    for col, (_label, weights) in enumerate(stages, start=1):
        last = col == len(stages)
        fig.add_trace(heatmap_trace(values(weights), labels(key_tokens), labels(query_tokens), show_scale=last, zmax=1.0, _=_),
                      row=1, col=col)
        fig.update_yaxes(autorange="reversed", showticklabels=col == 1, row=1, col=col)
    return laid_out(fig, title, min(200 + 18 * len(query_tokens), 700))
