"""The attention maps of a translation (read by hooks on the attention taps) as figures: the Attention and Families
views draw them, and the Lesson draws them as those views do. Never imports gradio."""
from __future__ import annotations

from transformer.interpret import mechanics

from playground.pieces import KIND_BUTTONS, KIND_NAMES
from playground.context import Result

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots
from torch import Tensor


from playground.i18n import ENGLISH, N_, Texts
from .base import labels, values, laid_out, heatmap_trace


def attention_heatmap(weights: Tensor, query_tokens: list[str], key_tokens: list[str], title: str,
                      symbols: bool = False, _: Texts = ENGLISH) -> go.Figure:
    """One (query, key) map: rows are queries, columns the keys they attend to. symbols: tokens are whole symbols
    (a toy task's), labelled as they are."""
    fig = go.Figure(heatmap_trace(values(weights), labels(key_tokens, symbols=symbols),
                                  labels(query_tokens, symbols=symbols), zmax=1, _=_))
    fig.update_yaxes(autorange="reversed", title_text=_("query"))
    fig.update_xaxes(title_text=_("key"), tickangle=-45)
    side = 160 + 26 * max(len(query_tokens), 8)
    return laid_out(fig, title, min(side, 900))


def heads_grid(layer_maps: Tensor, query_tokens: list[str], key_tokens: list[str], title: str,
               _: Texts = ENGLISH) -> go.Figure:
    """All heads of one layer, (H, q, k), side by side on one colour scale."""
    H = layer_maps.size(0)
    cols = min(H, 4)
    rows = math.ceil(H / cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[_("head {n}", n=h + 1) for h in range(H)],
                        horizontal_spacing=0.03, vertical_spacing=0.08)
    x, y = labels(key_tokens), labels(query_tokens)
    for h in range(H):
        fig.add_trace(heatmap_trace(values(layer_maps[h]), x, y, show_scale=h == 0, zmax=1, _=_),
                      row=h // cols + 1, col=h % cols + 1)
    fig.update_yaxes(autorange="reversed", showticklabels=False)
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=True, col=1)
    return laid_out(fig, title, 120 + 300 * rows)


def layers_by_heads(maps: Tensor, query_tokens: list[str], key_tokens: list[str], title: str,
                    _: Texts = ENGLISH) -> go.Figure:
    """Small multiples: every layer (rows) times every head (columns), (L, H, q, k)."""
    L, H = maps.shape[:2]
    fig = make_subplots(rows=L, cols=H, row_titles=[_("layer {n}", n=i + 1) for i in range(L)],
                        column_titles=[_("head {n}", n=h + 1) for h in range(H)],
                        horizontal_spacing=0.015, vertical_spacing=0.02)
    x, y = labels(key_tokens), labels(query_tokens)
    for i in range(L):
        for h in range(H):
            fig.add_trace(heatmap_trace(values(maps[i, h]), x, y, show_scale=False, zmax=1, _=_), row=i + 1, col=h + 1)
    fig.update_yaxes(autorange="reversed", showticklabels=False)
    fig.update_xaxes(showticklabels=False)
    return laid_out(fig, title, 100 + 190 * L)


REASON_NAMES = [N_("allowed"), N_("masked: future (causal)"), N_("masked: padding")]  # mechanics.ALLOWED, CAUSAL, PADDING


MASK_COLORS = ["#3182bd", "#d9d9d9", "#fdae6b"]  # allowed, future, padding: by REASON_NAMES


def family_masks(panels: list[tuple[str, str, Tensor, list[str], list[str]]], rows: int, title: str,
                 _: Texts = ENGLISH) -> go.Figure:
    """Masks as applied, one panel per (row name, kind, reasons (q, k) in 0/1/2, query tokens, key tokens),
    `rows` rows of one kind per column. Kinds are named over the top row and rows at the left; the pieces label
    each panel's rows only (its columns are the keys: the query's own pieces in the same order, or for cross-attention
    the English pieces; hover names each), so no
    label runs into a neighbour at any width; a legend names the three colours."""
    cols = math.ceil(len(panels) / rows)
    kinds = [kind for _row, kind, *_rest in panels[:cols]]
    fig = make_subplots(rows=rows, cols=cols, column_titles=kinds, horizontal_spacing=0.16, vertical_spacing=0.08)
    scale = [[0, MASK_COLORS[0]], [0.33, MASK_COLORS[0]], [0.34, MASK_COLORS[1]], [0.66, MASK_COLORS[1]],
             [0.67, MASK_COLORS[2]], [1, MASK_COLORS[2]]]
    reason_names = [_(name) for name in REASON_NAMES]
    for i, (name, _kind, reasons, queries, keys) in enumerate(panels):
        text = [[reason_names[r] for r in row] for row in reasons.tolist()]
        row, col = i // cols + 1, i % cols + 1
        fig.add_trace(go.Heatmap(z=reasons.numpy(), x=labels(keys), y=labels(queries), zmin=0, zmax=2,
                                 colorscale=scale, showscale=False, customdata=text, xgap=1, ygap=1,
                                 hovertemplate=_("query %{y}<br>key %{x}<br>%{customdata}") + "<extra></extra>"),
                      row=row, col=col)
        if col == 1:
            fig.update_yaxes(title_text=name, row=row, col=col)
    for reason, color in zip(reason_names, MASK_COLORS):  # the legend: one square per colour
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=reason, showlegend=True,
                                 marker=dict(symbol="square", size=14, color=color)))
    fig.update_yaxes(autorange="reversed", tickfont=dict(size=12))
    fig.update_xaxes(showticklabels=False, title_font=dict(size=12))
    fig = laid_out(fig, title, 170 + 300 * rows)
    return fig.update_layout(legend=dict(orientation="h", x=0, y=-0.02, yanchor="top"), margin_b=70)



def axis_tokens(maps, kind: str) -> tuple[list[str], list[str]]:
    """(query tokens, key tokens) of a kind of map."""
    src, tgt = maps.source_tokens, maps.target_tokens
    return {"encoder": (src, src), "decoder": (tgt, tgt), "cross": (tgt, src)}[kind]


def attention_figure(result: Result, kind: str, layer: int, head: str, mode: str, _: Texts = ENGLISH):
    """mode 'single': one layer and one head (or 'average'); 'heads': all heads of a layer; 'all': L x H."""
    weights = getattr(result.maps, kind)  # (L, H, q, k)
    queries, keys = axis_tokens(result.maps, kind)
    name = _(KIND_NAMES[kind])
    if mode == "all":
        return layers_by_heads(weights, queries, keys, _("{name}: every layer x head", name=name), _=_)
    if mode == "heads":
        return heads_grid(weights[layer], queries, keys, _("{name}, layer {layer}: every head", name=name,
                                                           layer=layer + 1), _=_)
    if head == "average":
        return attention_heatmap(weights[layer].mean(0), queries, keys,
                                 _("{name}, layer {layer}, mean of heads", name=name, layer=layer + 1), _=_)
    return attention_heatmap(weights[layer, int(head)], queries, keys,
                             _("{name}, layer {layer}, head {head}", name=name, layer=layer + 1, head=int(head) + 1),
                             _=_)


def families_figure(result: Result, _: Texts = ENGLISH):
    """The masks each attention family applied, for the user's sentence and its neighbour in one padded batch."""
    panels = []
    for name, row in ((_("your sentence"), result.batch[0]), (_("its batch neighbour"), result.batch[1])):
        src, tgt = row["source_tokens"], row["target_tokens"]
        for kind, queries, keys, key_pad in (("encoder", src, src, row["source_pad"]),
                                             ("decoder", tgt, tgt, row["target_pad"]),
                                             ("cross", tgt, src, row["source_pad"])):
            reasons = mechanics.mask_reasons(row[kind][0].allowed, key_pad)
            panels.append((name, _(KIND_BUTTONS[kind]), reasons, queries, keys))
    return family_masks(panels, 2, _("The masks as the model applied them, in a batch of two sentences"), _=_)
