"""What the model used: the logit lens, now and over training. Never imports gradio."""
from __future__ import annotations

import html

import plotly.graph_objects as go
from torch import Tensor


from playground.i18n import ENGLISH, Texts
from .base import SCALE, labels, written, values, laid_out


def lens_grid(chosen_prob: Tensor, top_pieces: list[list[str]], top_prob: Tensor, first_top1: list[int],
              output_tokens: list[str], title: str, _: Texts = ENGLISH) -> go.Figure:
    """Decoder layers (rows, last on top) x output steps: each cell names the layer's top-1 token and is coloured
    by its probability of the token finally chosen; a ring marks the first layer whose top-1 is that token."""
    L, T = chosen_prob.shape
    y = [_("layer {n}", n=layer + 1) for layer in range(L)]
    x = labels(output_tokens)
    text = [[f"{html.escape(written(top_pieces[layer][t]))}<br>{float(top_prob[layer, t]):.2f}"
             for t in range(T)] for layer in range(L)]  # each layer's top piece, written as every view writes it
    fig = go.Figure(go.Heatmap(
        z=values(chosen_prob), x=x, y=y, colorscale=SCALE, zmin=0, zmax=1, text=text, texttemplate="%{text}", textfont=dict(size=12),
        colorbar=dict(title=dict(text="p(final)", side="right")),
        hovertemplate=_("%{y}, step %{x}<br>top-1 and its p: %{text}<br>p(final token) = %{z:.3f}") + "<extra></extra>"))
    marked = [(t, layer) for t, layer in enumerate(first_top1) if layer >= 0]
    fig.add_trace(go.Scatter(x=[x[t] for t, _layer in marked], y=[y[layer] for _t, layer in marked], mode="markers",
                             marker=dict(symbol="square-open", size=34, color="#e6550d", line=dict(width=3)),
                             name=_("first layer whose top-1 is the final token"), hoverinfo="skip"))
    fig.update_xaxes(title_text=_("output step (the token finally chosen)"), tickangle=-45)
    fig.update_layout(legend=dict(orientation="h", y=-0.35))
    return laid_out(fig, title, 200 + 70 * L)


def lens_over_training(stages: list[str], shares: Tensor, title: str, _: Texts = ENGLISH) -> go.Figure:
    """shares (stages, L): per training stage and decoder layer, the share of steps whose top-1 is the shipped
    model's final token."""
    S, L = shares.shape
    fig = go.Figure(go.Heatmap(
        z=values(shares.t()), x=[html.escape(s) for s in stages], y=[_("layer {n}", n=layer + 1) for layer in range(L)],
        colorscale=SCALE, zmin=0, zmax=1, texttemplate="%{z:.0%}", textfont=dict(size=12),
        hovertemplate=_("%{x}, %{y}<br>top-1 = final token at %{z:.0%} of the steps") + "<extra></extra>"))
    fig.update_xaxes(title_text=_("training stage"))
    return laid_out(fig, title, 160 + 50 * L)
