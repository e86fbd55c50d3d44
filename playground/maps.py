"""The attention maps of a translation (read by hooks on the attention taps) as figures: the Attention and Families
views draw them, and the Lesson draws them as those views do. Never imports gradio."""
from __future__ import annotations

from transformer.interpret import mechanics

from . import plots
from .pieces import KIND_BUTTONS, KIND_NAMES
from .results import Result


def axis_tokens(maps, kind: str) -> tuple[list[str], list[str]]:
    """(query tokens, key tokens) of a kind of map."""
    src, tgt = maps.source_tokens, maps.target_tokens
    return {"encoder": (src, src), "decoder": (tgt, tgt), "cross": (tgt, src)}[kind]


def attention_figure(result: Result, kind: str, layer: int, head: str, mode: str):
    """mode 'single': one layer and one head (or 'average'); 'heads': all heads of a layer; 'all': L x H."""
    weights = getattr(result.maps, kind)  # (L, H, q, k)
    queries, keys = axis_tokens(result.maps, kind)
    name = KIND_NAMES[kind]
    if mode == "all":
        return plots.layers_by_heads(weights, queries, keys, f"{name}: every layer x head")
    if mode == "heads":
        return plots.heads_grid(weights[layer], queries, keys, f"{name}, layer {layer + 1}: every head")
    if head == "average":
        return plots.attention_heatmap(weights[layer].mean(0), queries, keys, f"{name}, layer {layer + 1}, mean of heads")
    return plots.attention_heatmap(weights[layer, int(head)], queries, keys,
                                   f"{name}, layer {layer + 1}, head {int(head) + 1}")


def families_figure(result: Result):
    """The masks each attention family applied, for the user's sentence and its neighbour in one padded batch."""
    panels = []
    for name, row in (("your sentence", result.batch[0]), ("its batch neighbour", result.batch[1])):
        src, tgt = row["source_tokens"], row["target_tokens"]
        for kind, queries, keys, key_pad in (("encoder", src, src, row["source_pad"]),
                                             ("decoder", tgt, tgt, row["target_pad"]),
                                             ("cross", tgt, src, row["source_pad"])):
            reasons = mechanics.mask_reasons(row[kind][0].allowed, key_pad)
            panels.append((f"{name}: {KIND_BUTTONS[kind]}", reasons, queries, keys))
    return plots.family_masks(panels, 2, "The masks as the model applied them, in a batch of two sentences")
