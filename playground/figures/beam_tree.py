"""Beam search as a tree. Never imports gradio."""
from __future__ import annotations

import html
from collections.abc import Callable, Iterable

import plotly.graph_objects as go


from playground.i18n import ENGLISH, N_, Texts
from .base import written, laid_out


BEAM_COLORS = {"live": "#3182bd", "finished": "#31a354", "pruned": "#bdbdbd"}
BEAM_STATES = {"live": N_("live"), "finished": N_("finished"), "pruned": N_("pruned")}  # the legend's names


def ranks(nodes) -> dict[int, int]:
    """Each node's rank among the candidates of its step, by log-probability, counted from 1 (as the steps)."""
    by_step: dict[int, list[int]] = {}
    for i, n in enumerate(nodes):
        by_step.setdefault(n.step, []).append(i)
    return {i: r + 1 for ids in by_step.values() for r, i in enumerate(sorted(ids, key=lambda i: -nodes[i].log_prob))}


def beam_tree(tree, to_pieces: Callable[[Iterable[int]], list[str]], _: Texts = ENGLISH) -> go.Figure:
    """Beam search as a tree: step on x, rank within the step on y; edges to each node's parent; the winning
    path drawn thick. to_pieces: the tokenizer's `pieces`, ids -> pieces. Hover shows the cumulative
    log-probability and the score."""
    nodes = tree.nodes
    penalty = tree.length_penalty
    title = _("Beam search, beam size {size}, length penalty {penalty}: {n} candidates ranked", size=tree.beam_size,
              penalty=_.number(penalty, 0 if penalty == int(penalty) else 2), n=len(nodes))
    tokens = to_pieces(n.token for n in nodes)  # tokens[i]: node i's token
    rank = ranks(nodes)
    win = set(tree.path(tree.winner)) if tree.winner >= 0 else set()
    fig = go.Figure()
    ex, ey, wx, wy = [], [], [], []
    for i, n in enumerate(nodes):
        px, py = (0, 1) if n.parent < 0 else (nodes[n.parent].step + 1, rank[n.parent])  # step n.step is shown n.step + 1
        xs, ys = (wx, wy) if i in win else (ex, ey)
        xs += [px, n.step + 1, None]
        ys += [py, rank[i], None]
    fig.add_trace(go.Scatter(x=ex, y=ey, mode="lines", line=dict(color="#d9d9d9", width=1), hoverinfo="skip",
                             name=_("extends")))
    fig.add_trace(go.Scatter(x=wx, y=wy, mode="lines", line=dict(color="#e6550d", width=4), hoverinfo="skip",
                             name=_("chosen translation")))
    fig.add_trace(go.Scatter(x=[0], y=[1], mode="markers+text", text=[_("start")], textposition="top center",
                             marker=dict(size=12, color="#636363"), hoverinfo="skip", name=_("start")))
    for status, color in BEAM_COLORS.items():
        ids = [i for i, n in enumerate(nodes) if n.status == status]
        # Words are written on the chosen translation (above and below its row in turn, so that neighbours do not
        # run into each other) and on the finished beams; every other candidate says its word when pointed at
        fig.add_trace(go.Scatter(
            x=[nodes[i].step + 1 for i in ids], y=[rank[i] for i in ids], mode="markers+text",
            text=[html.escape(written(tokens[i])) if i in win or status == "finished" else "" for i in ids],
            hovertext=[html.escape(written(tokens[i])) for i in ids],
            textposition=["top center" if i in win and nodes[i].step % 2 == 0 else "bottom center" for i in ids],
            name=_(BEAM_STATES[status]), cliponaxis=False,
            marker=dict(size=[16 if i in win else 11 for i in ids], color=color,
                        line=dict(width=[3 if i in win else 0 for i in ids], color="#e6550d")),
            customdata=[[nodes[i].log_prob, nodes[i].score, _(BEAM_STATES[status])] for i in ids],
            hovertemplate=_("%{hovertext}<br>step %{x}, rank %{y}<br>log p (cumulative) %{customdata[0]:.3f}<br>score "
                            "(length-normalised) %{customdata[1]:.3f}<br>%{customdata[2]}") + "<extra></extra>"))
    depth = max((r for r in rank.values()), default=0)
    steps = max((n.step + 1 for n in nodes), default=1)
    # room above the first row for its words, and left of the start for its word
    fig.update_yaxes(range=[depth + 0.8, 0.0], title_text=_("rank at this step (by log p)"),
                     tickvals=list(range(1, depth + 1)))
    fig.update_xaxes(range=[-0.6, steps + 0.6], title_text=_("step"), dtick=1)
    fig.update_layout(legend=dict(orientation="h", y=-0.28, yanchor="top"))
    return laid_out(fig, title, 260 + 46 * depth)
