"""Plotly figures for every view of the playground. Never imports gradio.

Token labels are index-prefixed ("3 ▁man") so repeated tokens stay apart, and HTML-escaped because
plotly reads labels as HTML ("<s>" would vanish as an unknown tag).
"""
from __future__ import annotations

import html
import math
import textwrap
from collections.abc import Callable, Iterable

import plotly.graph_objects as go
from plotly.subplots import make_subplots
from torch import Tensor

from transformer.metrics import Metrics
from transformer.training.schedule import checkpoint_schedule, global_steps, noam_lr, training_stages

from . import pieces

FONT = dict(size=14)  # readable on a classroom projector
SCALE = "Blues"
# plotly_white's look in the few settings these figures use: a named template is sent whole with every figure
TEMPLATE = go.layout.Template(layout=dict(
    paper_bgcolor="white", plot_bgcolor="white", hovermode="closest",
    xaxis=dict(gridcolor="#EBF0F8", linecolor="#EBF0F8", zerolinecolor="#EBF0F8", automargin=True),
    yaxis=dict(gridcolor="#EBF0F8", linecolor="#EBF0F8", zerolinecolor="#EBF0F8", automargin=True),
    colorway=["#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3", "#FF6692", "#B6E880"]))


labels = pieces.labels  # "1 A", "2 man", "3 -s": every axis of pieces reads the same
written = pieces.shown


def values(t: Tensor):
    """A tensor as a float32 numpy array: plotly sends those as packed binary (4 bytes a number, base64), not as
    text of 17 digits."""
    return t.detach().float().cpu().numpy()


TITLE_CHARS = 42  # a title's line: what a phone's box (about 330 px) and a projector's Lesson card hold


def wrapped(text: str, width: int = TITLE_CHARS) -> tuple[str, int]:
    """(escaped text with <br> between lines of at most `width` characters, number of lines): plotly never wraps
    a title, and a line wider than its box is cut."""
    lines = textwrap.wrap(text, width, break_long_words=False) or [""]
    return "<br>".join(html.escape(line) for line in lines), len(lines)


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    text, lines = wrapped(title)
    fig.update_layout(title=dict(text=text, x=0.01, font=dict(size=16)), height=height + 20 * (lines - 1), font=FONT,
                      margin=dict(l=10, r=10, t=40 + 20 * lines, b=10), template=TEMPLATE)
    return fig


def _heatmap(z, x, y, show_scale=True, zmax=None) -> go.Heatmap:
    return go.Heatmap(
        z=z, x=x, y=y, colorscale=SCALE, zmin=0, zmax=zmax, showscale=show_scale,
        hovertemplate="query %{y}<br>key %{x}<br>p = %{z:.3f}<extra></extra>",
    )


# -----------------------------------------------------------------------------
# Attention


def attention_heatmap(weights: Tensor, query_tokens: list[str], key_tokens: list[str], title: str) -> go.Figure:
    """One (query, key) map: rows are queries, columns the keys they attend to."""
    fig = go.Figure(_heatmap(values(weights), labels(key_tokens), labels(query_tokens), zmax=1))
    fig.update_yaxes(autorange="reversed", title_text="query")
    fig.update_xaxes(title_text="key", tickangle=-45)
    side = 160 + 26 * max(len(query_tokens), 8)
    return _layout(fig, title, min(side, 900))


def side_by_side(panels: list[tuple[str, Tensor, list[str], list[str]]], title: str) -> go.Figure:
    """(title, (q, k) weights, query tokens, key tokens) per panel, in one row; a panel titled "difference ..." is
    drawn on a diverging scale centred on 0, the others on the attention scale."""
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[html.escape(t) for t, *_ in panels],
                        horizontal_spacing=0.06)
    for i, (name, weights, queries, keys) in enumerate(panels):
        if name.startswith("difference"):
            bound = max(float(weights.abs().max()), 1e-6)
            trace = go.Heatmap(z=values(weights), x=labels(keys), y=labels(queries), colorscale="RdBu", zmid=0,
                               zmin=-bound, zmax=bound, colorbar=dict(x=1.02, len=0.8),
                               hovertemplate="query %{y}<br>key %{x}<br>difference %{z:.3f}<extra></extra>")
        else:
            trace = _heatmap(values(weights), labels(keys), labels(queries), show_scale=i == 0, zmax=1)
        fig.add_trace(trace, row=1, col=i + 1)
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(tickangle=-45)
    longest = max(max(len(q), len(k)) for _, _, q, k in panels)
    return _layout(fig, title, min(900, 220 + 22 * max(longest, 8)))


def heads_grid(layer_maps: Tensor, query_tokens: list[str], key_tokens: list[str], title: str) -> go.Figure:
    """All heads of one layer, (H, q, k), side by side on one colour scale."""
    H = layer_maps.size(0)
    cols = min(H, 4)
    rows = math.ceil(H / cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[f"head {h + 1}" for h in range(H)],
                        horizontal_spacing=0.03, vertical_spacing=0.08)
    x, y = labels(key_tokens), labels(query_tokens)
    for h in range(H):
        fig.add_trace(_heatmap(values(layer_maps[h]), x, y, show_scale=h == 0, zmax=1), row=h // cols + 1, col=h % cols + 1)
    fig.update_yaxes(autorange="reversed", showticklabels=False)
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=True, col=1)
    return _layout(fig, title, 120 + 300 * rows)


def layers_by_heads(maps: Tensor, query_tokens: list[str], key_tokens: list[str], title: str) -> go.Figure:
    """Small multiples: every layer (rows) times every head (columns), (L, H, q, k)."""
    L, H = maps.shape[:2]
    fig = make_subplots(rows=L, cols=H, row_titles=[f"layer {i + 1}" for i in range(L)],
                        column_titles=[f"head {h + 1}" for h in range(H)],
                        horizontal_spacing=0.015, vertical_spacing=0.02)
    x, y = labels(key_tokens), labels(query_tokens)
    for i in range(L):
        for h in range(H):
            fig.add_trace(_heatmap(values(maps[i, h]), x, y, show_scale=False, zmax=1), row=i + 1, col=h + 1)
    fig.update_yaxes(autorange="reversed", showticklabels=False)
    fig.update_xaxes(showticklabels=False)
    return _layout(fig, title, 100 + 190 * L)


# -----------------------------------------------------------------------------
# Decoding, step by step


def step_probabilities(steps, title: str = "Top-5 candidates at every step") -> go.Figure:
    """Rows are decoding steps, columns the five most probable tokens; the chosen one is bracketed in bold. One row a
    step, so the figure fits any box's width however long the translation is, and grows downwards."""
    n, ranks = len(steps), 5
    z = [[(s.alternatives[r][1] if r < len(s.alternatives) else 0.0) for r in range(ranks)] for s in steps]
    text = [[html.escape(pieces.shown(s.alternatives[r][0])) if r < len(s.alternatives) else "" for r in range(ranks)]
            for s in steps]
    for j, s in enumerate(steps):  # mark the token that was actually chosen (sampling may pick rank > 1)
        for r in range(ranks):
            if r < len(s.alternatives) and s.alternatives[r][0] == s.token:
                text[j][r] = f"<b>[{text[j][r]}]</b>"
    y = pieces.labels([s.token for s in steps])
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(1, ranks + 1)), y=y, text=text,  # the rank as a number: "#1" drew NaN, "rank 1" turned
        # its labels on a phone, into the title
        texttemplate="%{text}", textfont=dict(size=13),
        colorscale=SCALE, zmin=0, zmax=1, hovertemplate="step %{y}<br>%{text}: p = %{z:.3f}<extra></extra>",
        colorbar=dict(thickness=12),
    ))
    fig.update_yaxes(autorange="reversed", title_text="step (chosen piece)")
    fig.update_xaxes(side="top", dtick=1, tickangle=0)  # the columns: ranks 1-5 (the title says top-5)
    return _layout(fig, title, 110 + 26 * n)


def step_detail(step, cross_row: Tensor, source_tokens: list[str], index: int) -> go.Figure:
    """One step: the top-5 candidates, and the cross-attention (layers x source tokens) when it chose."""
    fig = make_subplots(rows=1, cols=2, column_widths=[0.35, 0.65], horizontal_spacing=0.12,
                        subplot_titles=["candidates", "cross-attention, averaged over heads"])
    toks = [html.escape(pieces.shown(t)) for t, _ in step.alternatives]
    fig.add_trace(go.Bar(x=[p for _, p in step.alternatives], y=toks, orientation="h",
                         marker_color=["#1f77b4" if t == step.token else "#aec7e8" for t, _ in step.alternatives],
                         hovertemplate="%{y}: p = %{x:.3f}<extra></extra>", showlegend=False), row=1, col=1)
    fig.update_yaxes(autorange="reversed", row=1, col=1)
    L = cross_row.size(0)
    fig.add_trace(_heatmap(values(cross_row), labels(source_tokens), [f"layer {i + 1}" for i in range(L)], zmax=None),
                  row=1, col=2)
    fig.update_yaxes(autorange="reversed", row=1, col=2)
    fig.update_xaxes(tickangle=-45, row=1, col=2)
    return _layout(fig, f"Step {index + 1}: chose {pieces.shown(step.token)} (p = {step.prob:.3f})", 140 + max(220, 40 * L))


# -----------------------------------------------------------------------------
# Positional encoding


LAYOUTS = {"interleaved": "sines on even dimensions, cosines on odd (§3.5)",
           "halves": "sines in the first half of the dimensions, cosines in the second (Marian's layout)"}


def pe_matrix(pe: Tensor, positions: int = 100, layout: str = "interleaved") -> go.Figure:
    pe = pe[:positions]
    fig = go.Figure(go.Heatmap(z=values(pe), x=list(range(1, pe.size(1) + 1)), y=list(range(1, pe.size(0) + 1)),
                               colorscale="RdBu", zmid=0,  # positions and dimensions counted from 1, as the page counts
                               hovertemplate="position %{y}, dimension %{x}: %{z:.3f}<extra></extra>"))
    fig.update_xaxes(title_text="dimension i")
    fig.update_yaxes(title_text="position", autorange="reversed")
    return _layout(fig, f"PE matrix: {pe.size(0)} positions x {pe.size(1)} dimensions; {LAYOUTS[layout]}", 520)


def pe_curves(pe: Tensor, dims: list[int], positions: int = 100, layout: str = "interleaved") -> go.Figure:
    fig = go.Figure()
    for d in dims:
        sine = d % 2 == 0 if layout == "interleaved" else d < pe.size(1) // 2
        kind = "sin" if sine else "cos"
        fig.add_trace(go.Scatter(x=list(range(1, min(positions, pe.size(0)) + 1)), y=values(pe[:positions, d]),
                                 mode="lines", name=f"dimension {d + 1} ({kind})"))
    fig.update_xaxes(title_text="position")
    fig.update_yaxes(title_text="PE value", range=[-1.1, 1.1])
    return _layout(fig, "Sinusoids of chosen dimensions: lower dimensions turn faster", 420)


def pe_similarity(pe: Tensor, positions: int = 60) -> go.Figure:
    p = pe[:positions]
    sim = p @ p.t()  # (P, P) dot products between positions
    n = list(range(1, p.size(0) + 1))
    fig = go.Figure(go.Heatmap(z=values(sim), x=n, y=n, colorscale="Viridis",
                               hovertemplate="position %{y} . position %{x} = %{z:.2f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed", title_text="position")
    fig.update_xaxes(title_text="position")
    return _layout(fig, "Dot product PE(p) . PE(q): nearby positions look alike", 520)


def embedding_inputs(embedded: Tensor, with_pe: Tensor, tokens: list[str], title: str) -> go.Figure:
    """What the first layer received: sqrt(d) * embedding, the positional encoding, and their sum (N, D)."""
    fig = make_subplots(rows=1, cols=3, shared_yaxes=True, horizontal_spacing=0.02,
                        subplot_titles=["word vector", "+ position wave", "= layer input"])
    y = labels(tokens)
    panels = (embedded, with_pe - embedded, with_pe)
    top = max(float(z.abs().max()) for z in panels)  # one colour scale for the three: their sizes compare by eye
    for col, z in enumerate(panels, start=1):
        fig.add_trace(go.Heatmap(z=values(z), y=y, colorscale="RdBu", zmin=-top, zmax=top, showscale=col == 3,
                                 colorbar=dict(thickness=12),
                                 hovertemplate="%{y}, dim %{x}: %{z:.3f}<extra></extra>"), row=1, col=col)
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, title, 160 + 24 * max(len(tokens), 8))


# -----------------------------------------------------------------------------
# Learning rate and training curves


def noam_curves(curves: list[tuple[int, int]], checkpoint: tuple[str, Metrics] | None = None,
                steps: int = 20000) -> go.Figure:
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
            fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=f"{label}: as trained", line=dict(dash="dash")))
    fig.update_xaxes(title_text="training step")
    fig.update_yaxes(title_text="learning rate", exponentformat="e")
    return _layout(fig, "Noam schedule (eq. 3): linear warm-up, then 1/sqrt(step) decay", 420)


def training_curves(metrics: Metrics, mark_epoch: int | None = None) -> go.Figure:
    """The checkpoint's own run: its schedule per step, train/val loss and val BLEU per epoch (one epoch marked)."""
    epochs = metrics.epochs
    fig = make_subplots(rows=1, cols=3, subplot_titles=["learning rate", "loss", "val BLEU"], horizontal_spacing=0.08)
    if not epochs:
        return _layout(fig, "This checkpoint has no training curve in metrics.json", 360)
    xs, rates = checkpoint_schedule(metrics)
    if xs:
        fig.add_trace(go.Scatter(x=xs, y=rates, name="learning rate", mode="lines"), row=1, col=1)
    ep = [e["epoch"] for e in epochs]
    fig.add_trace(go.Scatter(x=ep, y=[e["train_loss"] for e in epochs], name="train loss (smoothed)"), row=1, col=2)
    fig.add_trace(go.Scatter(x=ep, y=[e["val_loss"] for e in epochs], name="val loss (NLL)"), row=1, col=2)
    corpora = list(dict.fromkeys(name for e in epochs for name in e.get("val_bleu_by_corpus") or {}))
    fig.add_trace(go.Scatter(x=ep, y=[e["val_bleu"] for e in epochs], connectgaps=True,  # every val_bleu_every epochs
                             name=f"val BLEU, {corpora[0]} (greedy)" if corpora else "val BLEU (greedy)"), row=1, col=3)
    for name in corpora[1:]:  # the other corpora of a run on several (the first is val_bleu's)
        fig.add_trace(go.Scatter(x=ep, y=[(e.get("val_bleu_by_corpus") or {}).get(name) for e in epochs],
                                 name=f"val BLEU, {name} (greedy)", connectgaps=True), row=1, col=3)
    stages = training_stages(metrics)
    for rows, _, _ in stages[1:]:  # where each later stage starts (its val set, and so its val loss, may be new)
        for col in (2, 3):
            fig.add_vline(x=rows[0]["epoch"] - 0.5, line_dash="dash", line_color="silver", row=1, col=col)
    if mark_epoch is not None:
        step = global_steps(metrics).get(mark_epoch)
        for col, x in ((1, step), (2, mark_epoch), (3, mark_epoch)):
            if x is not None:
                fig.add_vline(x=x, line_dash="dot", line_color="gray", row=1, col=col)
    fig.update_xaxes(title_text="step", row=1, col=1)
    fig.update_xaxes(title_text="epoch", row=1, col=2)
    fig.update_xaxes(title_text="epoch", row=1, col=3)
    fig.update_xaxes(nticks=4)  # a narrow card: a few ticks, upright
    fig = _layout(fig, "How this checkpoint was trained", 470)
    return fig.update_layout(legend=dict(orientation="h", x=0, y=-0.3, yanchor="top"), margin_b=10)  # under the panels


def attention_stages(stages: list[tuple[str, Tensor]], query_tokens: list[str], key_tokens: list[str],
                     title: str) -> go.Figure:
    """One map per stage of training (label, (queries, keys) weights), side by side on a shared colour scale."""
    fig = make_subplots(rows=1, cols=len(stages), subplot_titles=[label for label, _ in stages],
                        horizontal_spacing=0.02)
    for col, (_, weights) in enumerate(stages, start=1):
        last = col == len(stages)
        fig.add_trace(_heatmap(values(weights), labels(key_tokens), labels(query_tokens), show_scale=last, zmax=1.0),
                      row=1, col=col)
        fig.update_yaxes(autorange="reversed", showticklabels=col == 1, row=1, col=col)
    return _layout(fig, title, min(200 + 18 * len(query_tokens), 700))


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
    return _layout(fig, f"Training: step {len(steps)}", 320)


# -----------------------------------------------------------------------------
# How the numbers are made: inside one head, the three families' masks, rollout, the beam search tree


def _vector(z: Tensor, x: list[str] | None = None) -> go.Heatmap:
    """A vector as a one-row heatmap on a diverging scale (q, a head's output)."""
    return go.Heatmap(z=z[None].numpy(), x=x, colorscale="RdBu", zmid=0, showscale=False,
                      hovertemplate="dimension %{x}<br>%{z:.3f}<extra></extra>")


def head_walk(walk, key_tokens: list[str], reasons: list[str], head: int, title: str) -> go.Figure:
    """eq. 1 for one query, left to right and top to bottom: q and K, the scores, scaled, masked and softmaxed
    (the hooked row as markers on top), V and the head's output, and each head's share after W^O.

    reasons: per key, "" when the mask lets it through, else why not ("future", "padding").
    """
    keys = labels(key_tokens)
    dims = [str(i) for i in range(walk.q.size(0))]
    fig = make_subplots(
        rows=4, cols=2, vertical_spacing=0.09, horizontal_spacing=0.1,
        row_heights=[0.22, 0.3, 0.3, 0.18],
        subplot_titles=[f"q, the query vector (1 x {walk.d_k})", f"K, the keys ({len(keys)} x {walk.d_k})",
                        f"scores q·Kᵀ, then divided by √d_k = {math.sqrt(walk.d_k):.2f}",
                        "mask (−∞), then softmax: the weights (x: the hooked row)",
                        f"V, the values ({len(keys)} x {walk.values.size(-1)})",
                        f"this head's output, weights · V (1 x {walk.values.size(-1)})",
                        "each head's share of Concat(heads) W^O for this token", ""])
    fig.add_trace(_vector(walk.q, dims), row=1, col=1)
    fig.add_trace(go.Heatmap(z=walk.keys.numpy(), x=dims, y=keys, colorscale="RdBu", zmid=0, showscale=False,
                             hovertemplate="key %{y}<br>dimension %{x}<br>%{z:.3f}<extra></extra>"), row=1, col=2)
    fig.add_trace(go.Bar(x=keys, y=walk.scores.numpy(), name="q·k", marker_color="#9ecae1",
                         hovertemplate="%{x}<br>q·k = %{y:.3f}<extra></extra>"), row=2, col=1)
    fig.add_trace(go.Bar(x=keys, y=walk.scaled.numpy(), name="q·k / √d_k", marker_color="#3182bd",
                         hovertemplate="%{x}<br>q·k / √d_k = %{y:.3f}<extra></extra>"), row=2, col=1)
    text = [f"(masked: {r})" if r else "" for r in reasons]
    fig.add_trace(go.Bar(x=keys, y=walk.weights.numpy(), marker_color="#08519c", name="softmax", customdata=text,
                         hovertemplate="%{x}<br>weight %{y:.4f} %{customdata}<extra></extra>"), row=2, col=2)
    masked = [k for k, r in zip(keys, reasons) if r]
    fig.add_trace(go.Scatter(x=masked, y=[0.04] * len(masked), mode="text", text=["−∞"] * len(masked),
                             textfont=dict(color="#737373"), hoverinfo="skip", name="masked"), row=2, col=2)
    fig.add_trace(go.Scatter(x=keys, y=walk.hooked_weights.numpy(), mode="markers", name="hooked row",
                             marker=dict(symbol="x", size=9, color="#e6550d"),
                             hovertemplate="%{x}<br>hooked %{y:.4f}<extra></extra>"), row=2, col=2)
    fig.add_trace(go.Heatmap(z=walk.values.numpy(), x=dims, y=keys, colorscale="RdBu", zmid=0, showscale=False,
                             hovertemplate="key %{y}<br>dimension %{x}<br>%{z:.3f}<extra></extra>"), row=3, col=1)
    fig.add_trace(_vector(walk.head_output, dims), row=3, col=2)
    shares = walk.shares.tolist()
    fig.add_trace(go.Bar(x=[f"head {h + 1}" for h in range(len(shares))], y=shares, name="share",
                         marker_color=["#08519c" if h == head else "#9ecae1" for h in range(len(shares))],
                         hovertemplate="%{x}: %{y:.1%}<extra></extra>"), row=4, col=1)
    fig.update_yaxes(autorange="reversed", row=1, col=2)
    fig.update_yaxes(autorange="reversed", row=3, col=1)
    fig.update_yaxes(range=[0, 1.15], row=2, col=2)
    fig.update_xaxes(tickangle=-45)
    fig.update_layout(showlegend=False, barmode="group")
    return _layout(fig, title, 1150)


REASON_NAMES = ["allowed", "masked: future (causal)", "masked: padding"]  # mechanics.ALLOWED, CAUSAL, PADDING


MASK_COLORS = ["#3182bd", "#d9d9d9", "#fdae6b"]  # allowed, future, padding: by REASON_NAMES


def family_masks(panels: list[tuple[str, Tensor, list[str], list[str]]], rows: int, title: str) -> go.Figure:
    """Masks as applied, one panel per (title "row name: kind", reasons (q, k) in 0/1/2, query tokens, key tokens),
    `rows` rows of one kind per column. Kinds are named over the top row and rows at the left; the pieces label
    each panel's rows only (its columns are the keys: the query's own pieces in the same order, or for cross-attention
    the English pieces; hover names each), so no
    label runs into a neighbour at any width; a legend names the three colours."""
    cols = math.ceil(len(panels) / rows)
    kinds = [name.split(": ", 1)[-1] for name, *_ in panels[:cols]]
    fig = make_subplots(rows=rows, cols=cols, column_titles=kinds, horizontal_spacing=0.16, vertical_spacing=0.08)
    scale = [[0, MASK_COLORS[0]], [0.33, MASK_COLORS[0]], [0.34, MASK_COLORS[1]], [0.66, MASK_COLORS[1]],
             [0.67, MASK_COLORS[2]], [1, MASK_COLORS[2]]]
    for i, (name, reasons, queries, keys) in enumerate(panels):
        text = [[REASON_NAMES[r] for r in row] for row in reasons.tolist()]
        row, col = i // cols + 1, i % cols + 1
        fig.add_trace(go.Heatmap(z=reasons.numpy(), x=labels(keys), y=labels(queries), zmin=0, zmax=2,
                                 colorscale=scale, showscale=False, customdata=text, xgap=1, ygap=1,
                                 hovertemplate="query %{y}<br>key %{x}<br>%{customdata}<extra></extra>"),
                      row=row, col=col)
        if col == 1:
            fig.update_yaxes(title_text=name.split(": ", 1)[0], row=row, col=col)
    for reason, color in zip(REASON_NAMES, MASK_COLORS):  # the legend: one square per colour
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=reason, showlegend=True,
                                 marker=dict(symbol="square", size=14, color=color)))
    fig.update_yaxes(autorange="reversed", tickfont=dict(size=12))
    fig.update_xaxes(showticklabels=False, title_font=dict(size=12))
    fig = _layout(fig, title, 170 + 300 * rows)
    return fig.update_layout(legend=dict(orientation="h", x=0, y=-0.02, yanchor="top"), margin_b=70)


def rollout_figure(panels: list[tuple[str, Tensor, list[str]]], title: str) -> go.Figure:
    """Raw last-layer maps beside their rollout: (title, (T, T) weights, tokens) per panel, two per row."""
    rows = math.ceil(len(panels) / 2)
    fig = make_subplots(rows=rows, cols=2, subplot_titles=[t for t, *_ in panels], horizontal_spacing=0.12,
                        vertical_spacing=0.14)
    for i, (_, weights, tokens) in enumerate(panels):
        fig.add_trace(_heatmap(values(weights), labels(tokens), labels(tokens), show_scale=i == 0, zmax=1),
                      row=i // 2 + 1, col=i % 2 + 1)
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(tickangle=-45)
    return _layout(fig, title, 140 + 480 * rows)


BEAM_COLORS = {"live": "#3182bd", "finished": "#31a354", "pruned": "#bdbdbd"}


def beam_tree(tree, to_pieces: Callable[[Iterable[int]], list[str]]) -> go.Figure:
    """Beam search as a tree: step on x, rank within the step on y; edges to each node's parent; the winning
    path drawn thick. to_pieces: the tokenizer's `pieces`, ids -> pieces. Hover shows the cumulative
    log-probability and the score."""
    nodes = tree.nodes
    title = (f"Beam search, beam size {tree.beam_size}, length penalty {tree.length_penalty:g}: {len(nodes)} "
             "candidates ranked")
    tokens = to_pieces(n.token for n in nodes)  # tokens[i]: node i's token
    rank: dict[int, int] = {}
    by_step: dict[int, list[int]] = {}
    for i, n in enumerate(nodes):
        by_step.setdefault(n.step, []).append(i)
    for ids in by_step.values():
        for r, i in enumerate(sorted(ids, key=lambda i: -nodes[i].log_prob)):
            rank[i] = r + 1  # counted from 1, as the steps
    win = set(tree.path(tree.winner)) if tree.winner >= 0 else set()
    fig = go.Figure()
    ex, ey, wx, wy = [], [], [], []
    for i, n in enumerate(nodes):
        px, py = (0, 1) if n.parent < 0 else (nodes[n.parent].step + 1, rank[n.parent])  # step n.step is shown n.step + 1
        xs, ys = (wx, wy) if i in win else (ex, ey)
        xs += [px, n.step + 1, None]
        ys += [py, rank[i], None]
    fig.add_trace(go.Scatter(x=ex, y=ey, mode="lines", line=dict(color="#d9d9d9", width=1), hoverinfo="skip",
                             name="extends"))
    fig.add_trace(go.Scatter(x=wx, y=wy, mode="lines", line=dict(color="#e6550d", width=4), hoverinfo="skip",
                             name="chosen translation"))
    fig.add_trace(go.Scatter(x=[0], y=[1], mode="markers+text", text=["start"], textposition="middle left",
                             marker=dict(size=12, color="#636363"), hoverinfo="skip", name="start"))
    for status, color in BEAM_COLORS.items():
        ids = [i for i, n in enumerate(nodes) if n.status == status]
        fig.add_trace(go.Scatter(
            x=[nodes[i].step + 1 for i in ids], y=[rank[i] for i in ids], mode="markers+text",
            text=[html.escape(written(tokens[i])) for i in ids], textposition="top center", name=status,
            marker=dict(size=[16 if i in win else 11 for i in ids], color=color,
                        line=dict(width=[3 if i in win else 0 for i in ids], color="#e6550d")),
            customdata=[[nodes[i].log_prob, nodes[i].score, status] for i in ids],
            hovertemplate="%{text}<br>step %{x}, rank %{y}<br>log p (cumulative) %{customdata[0]:.3f}"
                          "<br>score (length-normalised) %{customdata[1]:.3f}<br>%{customdata[2]}<extra></extra>"))
    depth = max((r for r in rank.values()), default=0)
    fig.update_yaxes(autorange="reversed", title_text="rank at this step (by log p)", dtick=1)
    fig.update_xaxes(title_text="step", dtick=1)
    fig.update_layout(legend=dict(orientation="h", y=-0.15))
    return _layout(fig, title, 260 + 46 * depth)


# -----------------------------------------------------------------------------
# Beyond attention: the logit lens and attributions


def lens_grid(chosen_prob: Tensor, top_pieces: list[list[str]], top_prob: Tensor, first_top1: list[int],
              output_tokens: list[str], title: str) -> go.Figure:
    """Decoder layers (rows, last on top) x output steps: each cell names the layer's top-1 token and is coloured
    by its probability of the token finally chosen; a ring marks the first layer whose top-1 is that token."""
    L, T = chosen_prob.shape
    y = [f"layer {layer + 1}" for layer in range(L)]
    x = labels(output_tokens)
    text = [[f"{html.escape(written(top_pieces[layer][t]))}<br>{float(top_prob[layer, t]):.2f}"
             for t in range(T)] for layer in range(L)]  # each layer's top piece, written as every view writes it
    fig = go.Figure(go.Heatmap(
        z=values(chosen_prob), x=x, y=y, colorscale=SCALE, zmin=0, zmax=1, text=text, texttemplate="%{text}", textfont=dict(size=12),
        colorbar=dict(title=dict(text="p(final)")),
        hovertemplate="%{y}, step %{x}<br>top-1 and its p: %{text}<br>p(final token) = %{z:.3f}<extra></extra>"))
    marked = [(t, layer) for t, layer in enumerate(first_top1) if layer >= 0]
    fig.add_trace(go.Scatter(x=[x[t] for t, _ in marked], y=[y[layer] for _, layer in marked], mode="markers",
                             marker=dict(symbol="square-open", size=34, color="#e6550d", line=dict(width=3)),
                             name="first layer whose top-1 is the final token", hoverinfo="skip"))
    fig.update_xaxes(title_text="output step (the token finally chosen)", tickangle=-45)
    fig.update_layout(legend=dict(orientation="h", y=-0.35))
    return _layout(fig, title, 200 + 70 * L)


def lens_over_training(stages: list[str], shares: Tensor, title: str) -> go.Figure:
    """shares (stages, L): per training stage and decoder layer, the share of steps whose top-1 is the shipped
    model's final token."""
    S, L = shares.shape
    fig = go.Figure(go.Heatmap(
        z=values(shares.t()), x=[html.escape(s) for s in stages], y=[f"layer {layer + 1}" for layer in range(L)],
        colorscale=SCALE, zmin=0, zmax=1, texttemplate="%{z:.0%}", textfont=dict(size=12),
        hovertemplate="%{x}, %{y}<br>top-1 = final token at %{z:.0%} of the steps<extra></extra>"))
    fig.update_xaxes(title_text="training stage")
    return _layout(fig, title, 160 + 50 * L)


def attribution_rows(rows: list[tuple[str, list[float], list[float] | None]], source_tokens: list[str],
                     prefix_tokens: list[str], title: str) -> go.Figure:
    """One row per method: its shares over the source tokens, then over the target prefix (blank where a method
    does not look at the prefix); a line separates the two."""
    S = len(source_tokens)
    x = [f"src {label}" for label in labels(source_tokens)] + [f"tgt {label}" for label in labels(prefix_tokens)]
    z = [list(src) + (list(prefix) if prefix is not None else [None] * len(prefix_tokens)) for _, src, prefix in rows]
    y = [html.escape(name) for name, *_ in rows]
    fig = go.Figure(go.Heatmap(z=z, x=x, y=y, colorscale=SCALE, zmin=0, texttemplate="%{z:.2f}", textfont=dict(size=11), xgap=1, ygap=1,
                               colorbar=dict(title=dict(text="share")),
                               hovertemplate="%{y}<br>%{x}<br>share %{z:.3f}<extra></extra>"))
    fig.add_vline(x=S - 0.5, line=dict(color="#e6550d", width=3))
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(tickangle=-45)
    return _layout(fig, title, 160 + 46 * len(rows))


def source_shares(output_tokens: list[str], shares: dict[str, list[float]], low: float, chosen: int,
                  title: str) -> go.Figure:
    """Per output token, the share of its prediction that comes from the source (one trace per method); tokens
    under `low` by the first method are marked "continuing its own words", the chosen step is outlined."""
    x = labels(output_tokens)
    fig = go.Figure()
    (first, main), *others = shares.items()
    colors = ["#e6550d" if v < low else "#3182bd" for v in main]
    fig.add_trace(go.Bar(x=x, y=main, name=html.escape(first), marker=dict(color=colors, line=dict(
        width=[3 if t == chosen else 0 for t in range(len(x))], color="#252525")),
        hovertemplate="%{x}<br>source share %{y:.2f}<extra></extra>"))
    for name, v in others:
        fig.add_trace(go.Scatter(x=x, y=v, mode="lines+markers", name=html.escape(name),
                                 hovertemplate="%{x}<br>source share %{y:.2f}<extra></extra>"))
    fig.add_hline(y=low, line=dict(dash="dot", color="#e6550d"),
                  annotation_text=f"below {low:.0%}: continuing its own words", annotation_position="bottom right")
    fig.update_yaxes(range=[0, 1], title_text="from the source")
    fig.update_xaxes(tickangle=-45)
    fig.update_layout(legend=dict(orientation="h", y=-0.3))
    return _layout(fig, title, 380)


def patching_grid(panels: list[tuple[str, Tensor, list[str]]], rows_name: str, title: str) -> go.Figure:
    """Activation patching's shares, one panel per site: (title, (layers, positions or heads) shares, column labels).
    One diverging scale for all, 0 white (the patch changes nothing), 1 dark red (it carries the whole difference);
    negative shares (the patch pushes the other way) in blue."""
    fig = make_subplots(rows=len(panels), cols=1, subplot_titles=[html.escape(t) for t, *_ in panels],
                        vertical_spacing=min(0.12, 0.5 / max(len(panels), 1)))
    for i, (_, shares, columns) in enumerate(panels):
        layers = [f"layer {n + 1}" for n in range(shares.size(0))]
        fig.add_trace(go.Heatmap(z=values(shares), x=columns, y=layers, colorscale="RdBu_r", zmid=0, zmin=-1, zmax=1,
                                 showscale=i == 0, colorbar=dict(title="share", len=0.6),
                                 hovertemplate=f"%{{y}}, {rows_name} %{{x}}<br>share %{{z:.2f}}<extra></extra>"),
                      row=i + 1, col=1)
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(tickangle=-45)
    return _layout(fig, title, min(1400, 140 + 190 * len(panels)))
