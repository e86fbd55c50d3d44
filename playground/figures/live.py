"""Train a tiny one: its curves as it trains. Never imports gradio."""
from __future__ import annotations


import plotly.graph_objects as go
from plotly.subplots import make_subplots


from playground.i18n import ENGLISH, Texts
from .base import laid_out


def toy_curves(losses: list[float], rates: list[float], _: Texts = ENGLISH) -> go.Figure:
    """A live run's loss and learning rate per step, the current step marked on the rate."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=[_("loss (label-smoothed, per token)"), _("learning rate")])
    steps = list(range(1, len(losses) + 1))
    fig.add_trace(go.Scatter(x=steps, y=losses, mode="lines", name=_("loss")), row=1, col=1)
    fig.add_trace(go.Scatter(x=steps, y=rates, mode="lines", name=_("learning rate")), row=1, col=2)
    if steps:  # the current step, named beside its mark
        fig.add_trace(go.Scatter(x=[steps[-1]], y=[rates[-1]], mode="markers+text", name=_("now"), text=[_("now")],
                                 textposition="top center", marker=dict(size=10), cliponaxis=False), row=1, col=2)
    fig.update_xaxes(title_text=_("step"))
    fig.update_layout(showlegend=False)  # each panel's title names its line: no legend to find room for on a phone
    return laid_out(fig, _("Training: step {n}", n=len(steps)), 320)
