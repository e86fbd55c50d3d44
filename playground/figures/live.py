"""Train a tiny one: its curves as it trains. Never imports gradio."""
from __future__ import annotations


import plotly.graph_objects as go
from plotly.subplots import make_subplots


from .base import laid_out


def toy_curves(losses: list[float], rates: list[float]) -> go.Figure:
    """A live run's loss and learning rate per step, the current step marked on the rate."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=["loss (label-smoothed, per token)", "learning rate"])
    steps = list(range(1, len(losses) + 1))
    fig.add_trace(go.Scatter(x=steps, y=losses, mode="lines", name="loss"), row=1, col=1)
    fig.add_trace(go.Scatter(x=steps, y=rates, mode="lines", name="learning rate"), row=1, col=2)
    if steps:
        fig.add_trace(go.Scatter(x=[steps[-1]], y=[rates[-1]], mode="markers", name="now", marker=dict(size=10)),
                      row=1, col=2)
    fig.update_xaxes(title_text="step")
    return laid_out(fig, f"Training: step {len(steps)}", 320)
