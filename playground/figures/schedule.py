"""Learning rate: the schedule's curves, and the training curves. Never imports gradio."""
from __future__ import annotations


import plotly.graph_objects as go
from plotly.subplots import make_subplots

from transformer.metrics import Metrics
from transformer.training.schedule import checkpoint_schedule, global_steps, noam_lr, training_stages

from playground.i18n import ENGLISH, Texts
from .base import laid_out


def noam_curves(curves: list[tuple[int, int]], checkpoint: tuple[str, Metrics] | None = None,
                steps: int = 20000, _: Texts = ENGLISH) -> go.Figure:
    """lrate = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) per (d_model, warmup); with `checkpoint`
    (a label and its metrics.json), the schedule that run really used: its peak hold and cool-down included."""
    fig = go.Figure()
    xs = list(range(1, steps + 1, max(1, steps // 500)))
    for d_model, warmup in curves:
        fig.add_trace(go.Scatter(x=xs, y=[noam_lr(s, d_model, warmup) for s in xs], mode="lines",
                                 name=f"d_model={d_model}, warmup={warmup}"))
    if checkpoint:
        label, metrics = checkpoint
        x, y = checkpoint_schedule(metrics)
        if x:
            fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=_("{label}: as trained", label=label),
                                     line=dict(dash="dash")))
    fig.update_xaxes(title_text=_("training step"))
    fig.update_yaxes(title_text=_("learning rate"), exponentformat="e")
    return laid_out(fig, _("Noam schedule (eq. 3): linear warm-up, then 1/sqrt(step) decay"), 420)


def training_curves(metrics: Metrics, mark_epoch: int | None = None, _: Texts = ENGLISH) -> go.Figure:
    """The checkpoint's own run: its schedule per step, train/val loss and val BLEU per epoch (one epoch marked)."""
    epochs = metrics.epochs
    fig = make_subplots(rows=1, cols=3, subplot_titles=[_("learning rate"), _("loss"), _("val BLEU")],
                        horizontal_spacing=0.08)
    if not epochs:
        return laid_out(fig, _("This checkpoint has no training curve in metrics.json"), 360)
    xs, rates = checkpoint_schedule(metrics)
    if xs:
        fig.add_trace(go.Scatter(x=xs, y=rates, name=_("learning rate"), mode="lines"), row=1, col=1)
    ep = [e["epoch"] for e in epochs]
    fig.add_trace(go.Scatter(x=ep, y=[e["train_loss"] for e in epochs], name=_("train loss (smoothed)")), row=1, col=2)
    fig.add_trace(go.Scatter(x=ep, y=[e["val_loss"] for e in epochs], name=_("val loss (NLL)")), row=1, col=2)
    corpora = list(dict.fromkeys(name for e in epochs for name in e.get("val_bleu_by_corpus") or {}))
    fig.add_trace(go.Scatter(x=ep, y=[e["val_bleu"] for e in epochs], connectgaps=True,  # every val_bleu_every epochs
                             name=_("val BLEU, {corpus} (greedy)", corpus=corpora[0]) if corpora
                             else _("val BLEU (greedy)")), row=1, col=3)
    for name in corpora[1:]:  # the other corpora of a run on several (the first is val_bleu's)
        fig.add_trace(go.Scatter(x=ep, y=[(e.get("val_bleu_by_corpus") or {}).get(name) for e in epochs],
                                 name=_("val BLEU, {corpus} (greedy)", corpus=name), connectgaps=True), row=1, col=3)
    stages = training_stages(metrics)
    for rows, *_rest in stages[1:]:  # where each later stage starts (its val set, and so its val loss, may be new)
        for col in (2, 3):
            fig.add_vline(x=rows[0]["epoch"] - 0.5, line_dash="dash", line_color="silver", row=1, col=col)
    if mark_epoch is not None:
        step = global_steps(metrics).get(mark_epoch)
        for col, x in ((1, step), (2, mark_epoch), (3, mark_epoch)):
            if x is not None:
                fig.add_vline(x=x, line_dash="dot", line_color="gray", row=1, col=col)
    fig.update_xaxes(title_text=_("step"), row=1, col=1)
    fig.update_xaxes(title_text=_("epoch"), row=1, col=2)
    fig.update_xaxes(title_text=_("epoch"), row=1, col=3)
    fig.update_xaxes(nticks=4)  # a narrow card: a few ticks, upright
    fig = laid_out(fig, _("How this checkpoint was trained"), 470)
    return fig.update_layout(legend=dict(orientation="h", x=0, y=-0.3, yanchor="top"), margin_b=10)  # under the panels
