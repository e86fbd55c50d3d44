"""One head: Q, K, V and the output, step by step. Never imports gradio."""
from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots
from torch import Tensor


from playground.i18n import ENGLISH, Texts
from .base import labels, laid_out


def _vector(z: Tensor, x: list[str] | None = None, _: Texts = ENGLISH) -> go.Heatmap:
    """A vector as a one-row heatmap on a diverging scale (q, a head's output)."""
    return go.Heatmap(z=z[None].numpy(), x=x, colorscale="RdBu", zmid=0, showscale=False,
                      hovertemplate=_("dimension %{x}<br>%{z:.3f}") + "<extra></extra>")


def head_walk(walk, key_tokens: list[str], reasons: list[str], head: int, title: str,
              _: Texts = ENGLISH) -> go.Figure:
    """eq. 1 for one query, left to right and top to bottom: q and K, the scores, scaled, masked and softmaxed
    (the hooked row as markers on top), V and the head's output, and each head's share after W^O.

    reasons: per key, "" when the mask lets it through, else why not ("future", "padding").
    """
    keys = labels(key_tokens)
    dims = [str(i) for i in range(walk.q.size(0))]
    fig = make_subplots(
        rows=4, cols=2, vertical_spacing=0.09, horizontal_spacing=0.1,
        row_heights=[0.22, 0.3, 0.3, 0.18],
        subplot_titles=[_("q, the query vector (1 x {d_k})", d_k=walk.d_k),
                        _("K, the keys ({n} x {d_k})", n=len(keys), d_k=walk.d_k),
                        _("scores q·Kᵀ, then divided by √d_k = {root}", root=_.number(math.sqrt(walk.d_k))),
                        _("mask (−∞), then softmax: the weights (x: the hooked row)"),
                        _("V, the values ({n} x {d_v})", n=len(keys), d_v=walk.values.size(-1)),
                        _("this head's output, weights · V (1 x {d_v})", d_v=walk.values.size(-1)),
                        _("each head's share of Concat(heads) W^O for this token"), ""])
    key_row = _("key %{y}<br>dimension %{x}<br>%{z:.3f}") + "<extra></extra>"
    fig.add_trace(_vector(walk.q, dims, _), row=1, col=1)
    fig.add_trace(go.Heatmap(z=walk.keys.numpy(), x=dims, y=keys, colorscale="RdBu", zmid=0, showscale=False,
                             hovertemplate=key_row), row=1, col=2)
    fig.add_trace(go.Bar(x=keys, y=walk.scores.numpy(), name="q·k", marker_color="#9ecae1",
                         hovertemplate="%{x}<br>q·k = %{y:.3f}<extra></extra>"), row=2, col=1)
    fig.add_trace(go.Bar(x=keys, y=walk.scaled.numpy(), name="q·k / √d_k", marker_color="#3182bd",
                         hovertemplate="%{x}<br>q·k / √d_k = %{y:.3f}<extra></extra>"), row=2, col=1)
    text = [_("(masked: {reason})", reason=_(r)) if r else "" for r in reasons]
    fig.add_trace(go.Bar(x=keys, y=walk.weights.numpy(), marker_color="#08519c", name="softmax", customdata=text,
                         hovertemplate=_("%{x}<br>weight %{y:.4f} %{customdata}") + "<extra></extra>"), row=2, col=2)
    masked = [k for k, r in zip(keys, reasons) if r]
    fig.add_trace(go.Scatter(x=masked, y=[0.04] * len(masked), mode="text", text=["−∞"] * len(masked),
                             textfont=dict(color="#737373"), hoverinfo="skip", name="masked"), row=2, col=2)
    fig.add_trace(go.Scatter(x=keys, y=walk.hooked_weights.numpy(), mode="markers", name="hooked row",
                             marker=dict(symbol="x", size=9, color="#e6550d"),
                             hovertemplate=_("%{x}<br>hooked %{y:.4f}") + "<extra></extra>"), row=2, col=2)
    fig.add_trace(go.Heatmap(z=walk.values.numpy(), x=dims, y=keys, colorscale="RdBu", zmid=0, showscale=False,
                             hovertemplate=key_row), row=3, col=1)
    fig.add_trace(_vector(walk.head_output, dims, _), row=3, col=2)
    shares = walk.shares.tolist()
    fig.add_trace(go.Bar(x=[_("head {n}", n=h + 1) for h in range(len(shares))], y=shares, name=_("share"),
                         marker_color=["#08519c" if h == head else "#9ecae1" for h in range(len(shares))],
                         hovertemplate="%{x}: %{y:.1%}<extra></extra>"), row=4, col=1)
    fig.update_yaxes(autorange="reversed", row=1, col=2)
    fig.update_yaxes(autorange="reversed", row=3, col=1)
    fig.update_yaxes(range=[0, 1.15], row=2, col=2)
    fig.update_xaxes(tickangle=-45)
    fig.update_layout(showlegend=False, barmode="group")
    return laid_out(fig, title, 1150)
