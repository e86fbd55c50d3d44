"""What each view of the app shows, computed without gradio from a results.Result: figures, choices, tables.
The views (views/) turn these into gradio updates.
"""
from __future__ import annotations

import difflib
import functools
from dataclasses import dataclass

import torch

from transformer.interpret import mechanics
from . import pieces, plots
from .pieces import METHOD_NAMES
from transformer.interpret.capture import AttentionMaps, parse_head
from transformer.model import KINDS
from transformer.config import TrainConfig
from transformer.errors import InputError
from transformer.training.schedule import noam_lr
from .results import Result
from transformer.training.timeline import lens_over_epochs, snapshot, snapshots
from transformer.translator import Translation, Translator, quantize_int8

KIND_NAMES = pieces.KIND_NAMES


# -----------------------------------------------------------------------------
# Attention


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


# -----------------------------------------------------------------------------
# Inside one head


def attention_block(translator: Translator, kind: str, layer: int):
    """The MultiHeadAttention module of that kind and layer."""
    if kind not in KINDS:
        raise InputError(f"unknown attention kind {kind!r}: choose one of {', '.join(KINDS)}")
    blocks = translator.model.attention_blocks()[kind]
    if not 0 <= layer < len(blocks):
        raise InputError(f"the {kind} has layers 0 to {len(blocks) - 1}; got {layer}")
    return blocks[layer]


def query_choices(result: Result, kind: str) -> list[tuple[str, int]]:
    """(label, position) of every query token of that kind of attention."""
    queries, _ = axis_tokens(result.maps, kind)
    return list(zip(pieces.labels(queries), range(len(queries))))


def inside_head(translator: Translator, result: Result, kind: str, layer: int, head: int, query: int):
    """eq. 1 worked through for one query token of one head, from the hooked tensors: (figure, walk, reasons),
    reasons[j] saying why key j was masked ("" where it was not)."""
    attn = attention_block(translator, kind, layer)
    walk = mechanics.walk_head(result.internals[kind][layer], head, query, attn.w_o.weight, attn.w_o.bias)
    queries, keys = axis_tokens(result.maps, kind)
    reasons = ["" if ok else "future (causal mask)" for ok in walk.allowed.tolist()]
    title = f"{KIND_NAMES[kind]}, layer {layer + 1}, head {head + 1}: query {pieces.labels(queries)[query]}"
    return plots.head_walk(walk, keys, reasons, head, title), walk, reasons


# -----------------------------------------------------------------------------
# The three families, and rollout


def families_figure(result: Result):
    """The masks each attention family applied, for the user's sentence and its neighbour in one padded batch."""
    panels = []
    for name, row in (("your sentence", result.batch[0]), ("its batch neighbour", result.batch[1])):
        src, tgt = row["source_tokens"], row["target_tokens"]
        for kind, queries, keys, key_pad in (("encoder", src, src, row["source_pad"]),
                                             ("decoder", tgt, tgt, row["target_pad"]),
                                             ("cross", tgt, src, row["source_pad"])):
            reasons = mechanics.mask_reasons(row[kind][0].allowed, key_pad)
            panels.append((f"{name}: {kind}", reasons, queries, keys))
    return plots.family_masks(panels, 2, "The masks as the model applied them, in a batch of two sentences")


def rollout_maps(result: Result) -> dict[str, tuple[torch.Tensor, torch.Tensor, list[str]]]:
    """Per self-attention kind: (last layer averaged over heads, rollout, tokens)."""
    out = {}
    for kind in ("encoder", "decoder"):
        maps = getattr(result.maps, kind)  # (L, H, T, T)
        out[kind] = (maps[-1].mean(0), mechanics.rollout(maps), axis_tokens(result.maps, kind)[0])
    return out


def rollout_figure(result: Result):
    panels = []
    for kind, (last, rolled, tokens) in rollout_maps(result).items():
        panels.append((f"{kind}: last layer, mean of heads", last, tokens))
        panels.append((f"{kind}: rollout through all layers", rolled, tokens))
    return plots.rollout_figure(panels, "Attention rollout (Abnar & Zuidema 2020) beside the raw last layer")


# -----------------------------------------------------------------------------
# Beam search as a tree


def beam_tree_figure(translator: Translator, result: Result):
    """The search that found the translation, or None when the strategy was not beam search."""
    tree = result.translation.beam_tree
    if tree is None:
        return None
    pieces = translator.tokenizer.pieces(n.token for n in tree.nodes)
    return plots.beam_tree(tree, pieces, f"Beam search, beam size {tree.beam_size}, length penalty "
                                         f"{tree.length_penalty:g}: {len(tree.nodes)} candidates ranked")


# -----------------------------------------------------------------------------
# Step by step


def step_view(result: Result, index: int):
    """The candidates at step `index` and the cross-attention row of the query that chose it, per layer."""
    steps = result.translation.steps
    index = max(0, min(index, len(steps) - 1))
    cross = result.maps.cross  # (L, H, T, S); row t predicted target token t
    row = cross[:, :, min(index, cross.size(2) - 1)].mean(dim=1)  # (L, S), mean over heads
    return plots.step_detail(steps[index], row, result.maps.source_tokens, index)


# -----------------------------------------------------------------------------
# Head ablation


def head_choices(translator: Translator) -> list[str]:
    blocks = translator.model.attention_blocks()
    return [(f"{kind} L{i + 1} H{h + 1}", f"{kind}:{i}:{h}")  # shown counted from 1; the value as the API takes it
            for kind in KINDS for i in range(len(blocks[kind])) for h in range(translator.cfg.n_heads)]


def ablate(translator: Translator, result: Result, heads: list[str]) -> Translation:
    """Re-translate with the chosen heads switched off."""
    chosen = [parse_head(h) for h in heads]
    return translator.translate(result.text, result.options, ablate=chosen)


def token_changes(before: list[str], after: list[str]) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Both token sequences, each token with whether it changed (removed from `before`, added in `after`)."""
    old, new = [], []
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
        old += [(t, op != "equal") for t in before[a0:a1]]
        new += [(t, op != "equal") for t in after[b0:b1]]
    return old, new


# -----------------------------------------------------------------------------
# Model card


def weights(model) -> list[tuple[str, torch.Tensor]]:
    """named_parameters, plus the int8 weights and biases of dynamically quantized Linear layers."""
    named = list(model.named_parameters())
    for name, module in model.named_modules():
        if callable(getattr(module, "weight", None)):  # torch.ao's quantized Linear keeps them packed
            named.append((f"{name}.weight", module.weight()))
            if module.bias() is not None:
                named.append((f"{name}.bias", module.bias()))
    return named


def parameter_breakdown(translator: Translator) -> list[tuple[str, int]]:
    groups: dict[str, int] = {}
    for name, p in weights(translator.model):
        parts = name.split(".")
        if name == "embed.source_table.weight":
            key = "source embedding (encoder in)"
        elif parts[0] == "embed":
            key = ("target embedding (decoder in, output projection)" if translator.cfg.src_vocab_size
                   else "shared embedding (encoder in, decoder in, output projection)")
        elif name == "output.bias":
            key = "output bias"
        elif parts[0] == "output":  # only when quantized: the projection then has its own int8 copy
            key = "output projection (int8 copy of the embedding)"
        elif parts[1] == "layers":
            key = f"{parts[0]} {parts[3].replace('_', '-') if parts[3].startswith(('self', 'cross', 'feed')) else 'layer norms'}"
        else:
            key = f"{parts[0]} final layer norm"
        groups[key] = groups.get(key, 0) + p.numel()
    return list(groups.items())


# -----------------------------------------------------------------------------
# What the model used: the logit lens and attributions (transformer.lens, transformer.attribution)

LOW_SOURCE_SHARE = 0.5  # under this ALTI+ source share, a token is marked "continuing its own words"


def output_tokens(result: Result) -> list[str]:
    """What the decoder produced at each step: the translation's tokens, then </s>."""
    return result.translation.target_tokens + ["</s>"]


def output_choices(result: Result) -> list[tuple[str, int]]:
    """The output tokens a user may ask about."""
    return list(zip(pieces.labels(output_tokens(result)), range(len(output_tokens(result)))))


def lens_of(translator: Translator, result: Result):
    return translator.lens(result.text, result.translation)


def alternative_choices(translator: Translator, lens, step: int) -> list[tuple[str, int]]:
    """The step's other top-5 tokens by the model's own distribution (the lens's last layer), for the contrastive
    question; -1 asks no contrastive question."""
    log_probs = lens.log_probs[-1, step]  # (V,)
    best = [i for i in log_probs.topk(6).indices.tolist() if i != lens.chosen[step]][:5]
    piece = translator.tokenizer.id_to_piece
    return [("none", -1)] + [(f"{pieces.shown(piece(i))} (p = {float(log_probs[i].exp()):.2f})", i) for i in best]


def lens_figure(translator: Translator, result: Result, lens):
    ids, probs = lens.top()
    pieces = [translator.tokenizer.pieces(row) for row in ids.tolist()]
    return plots.lens_grid(lens.chosen_prob(), pieces, probs, lens.first_top1_layer(), output_tokens(result),
                           "What each decoder layer would say (logit lens): its top-1 token and probability; colour: "
                           "its probability of the final token")


def lens_over_training(translator: Translator, result: Result) -> tuple[list[str], torch.Tensor] | None:
    """Per training snapshot (and the shipped model), per decoder layer: the share of this translation's steps whose
    top-1 is the final token; None for a checkpoint without snapshots."""
    if not snapshots(translator):
        return None
    stages = lens_over_epochs(translator, result.text, result.translation.text)
    shares = torch.stack([lens.chosen_rank().eq(0).float().mean(dim=1) for _, lens in stages])  # (stages, L)
    return [label for label, _ in stages], shares


def lens_training_figure(training: tuple[list[str], torch.Tensor]):
    return plots.lens_over_training(*training, "When each decoder layer learned: share of this translation's steps "
                                    "whose top-1 is the final token, per training snapshot")


def explanation(translator: Translator, result: Result, step: int, alternative: int = -1, ig_steps: int = 64):
    """Every attribution of output token `step` (contrastive against `alternative` unless it is -1)."""
    n = len(result.translation.target_tokens) + 1
    if not 0 <= step < n:
        raise InputError(f"choose an output token between 0 and {n - 1}")
    return translator.explain(result.text, result.translation, step, None if alternative < 0 else alternative,
                              ig_steps)


def attribution_figure(expl):
    rows = [(METHOD_NAMES[m], a.source.tolist(), None if a.prefix is None else a.prefix.tolist())
            for m, a in expl.methods.items()]
    token = pieces.shown(expl.labels["output_tokens"][expl.step])
    return plots.attribution_rows(rows, expl.labels["source_tokens"], expl.labels["decoder_inputs"][: expl.step + 1],
                                  f"What output piece {expl.step + 1} ({token}) used: shares over the source, then the "
                                  "target prefix")


def source_share_figure(expl):
    labels = {"alti_plus": "ALTI+", "gradient_x_input": "gradient × input"}
    shares = {labels[m]: v for m, v in expl.source_share.items()}
    return plots.source_shares(expl.labels["output_tokens"], shares, LOW_SOURCE_SHARE, expl.step,
                               "How much of each token comes from the source (the rest: the target prefix)")


def continuing_own_words(expl) -> list[int]:
    """Steps whose ALTI+ source share is under LOW_SOURCE_SHARE (Dale et al. 2023: a sign of hallucination)."""
    return [t for t, v in enumerate(expl.source_share["alti_plus"]) if v < LOW_SOURCE_SHARE]




# -----------------------------------------------------------------------------
# Two models side by side: another pair, an imported model, a training snapshot, or the same weights in int8


@functools.lru_cache(maxsize=4)
def int8_copy(translator: Translator) -> Translator:
    """The same checkpoint with int8 feed-forward layers and output projection (CPU), made once."""
    return Translator(quantize_int8(translator.model), translator.tokenizer, translator.metrics,
                      name=f"{translator.name} int8", precision="int8")


def other_model(translators: dict[str, Translator], spec: str) -> Translator:
    """The model a "Compare models" choice names: "pair:KEY" another loaded checkpoint, "int8:KEY" that checkpoint in
    int8, "epoch:KEY:N" its training snapshot after epoch N."""
    kind, key, *rest = spec.split(":")
    if key not in translators or kind not in ("pair", "int8", "epoch"):
        raise InputError(f"no model to compare with called {spec!r}")
    base = translators[key]
    if kind == "int8":
        if base.device.type != "cpu":
            raise InputError("int8 runs on the CPU only")
        return int8_copy(base)
    if kind == "epoch":
        return snapshot(base, int(rest[0]))
    return base


@dataclass
class Comparison:
    """The same sentence through two models: each translation, and each model's maps on its own translation."""

    first: Translation
    second: Translation
    first_maps: AttentionMaps
    second_maps: AttentionMaps
    second_name: str

    @property
    def same_tokens(self) -> bool:
        return (self.first_maps.source_tokens, self.first_maps.target_tokens) == (
            self.second_maps.source_tokens, self.second_maps.target_tokens)


def compare(result: Result, other: Translator, name: str) -> Comparison:
    second = other.translate(result.text, result.options)
    return Comparison(result.translation, second, result.maps, other.attention(result.text, second), name)


def comparison_figure(cmp: Comparison, kind: str, layer: int, first_name: str):
    """Both models' maps of one kind and layer (mean of heads), and their difference where both read the same
    tokens on both axes; else each map beside the other on its own tokens."""
    panels = []
    for name, maps in ((first_name, cmp.first_maps), (cmp.second_name, cmp.second_maps)):
        weights = getattr(maps, kind)  # (L, H, q, k)
        at = min(layer, weights.size(0) - 1)
        queries, keys = axis_tokens(maps, kind)
        panels.append((f"{name}, layer {at + 1}", weights[at].mean(dim=0), queries, keys))
    if cmp.same_tokens:
        panels.append(("difference (first − second)", panels[0][1] - panels[1][1], panels[0][2], panels[0][3]))
    return plots.side_by_side(panels, f"{KIND_NAMES[kind]}: mean of heads"
                              + ("" if cmp.same_tokens else " (different tokens: each map on its own)"))


# -----------------------------------------------------------------------------
# The views' opening texts: every number in them read from the checkpoint or the settings, never typed in


def listed(numbers: list[int]) -> str:
    """[1, 2, 4, 8, 131, 132, 133] -> "1, 2, 4, 8 and 131-133" (runs of three or more as a range)."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    parts = [f"{r[0]}-{r[-1]}" if len(r) >= 3 else ", ".join(map(str, r)) for r in runs]
    parts = [p for part in parts for p in part.split(", ")]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def timeline_text(translator: Translator, template: str) -> str:
    from transformer.training import timeline

    recorded = timeline.recorded_epochs(translator.metrics)
    return template.format(examples=len(translator.metrics.timeline_sources), recorded=listed(recorded),
                           snapshots=listed(snapshots(translator)) if snapshots(translator) else "none")


def schedule_text(metrics) -> str:
    """Each stage's schedule in words, from the recipe it recorded: warm-up, peak, hold or decay, cool-down."""
    d_model = metrics.model_config.get("d_model")
    if not d_model:
        return "not recorded in this checkpoint"
    parts = []
    for stage, start, end in metrics.stage_epochs():
        c = TrainConfig.from_dict(stage.train_config)
        peak = noam_lr(c.warmup, d_model, c.warmup, c.lr_scale)
        words = (f"epochs {start}-{end}: a warm-up over {c.warmup:,} steps to {peak:.1e}, "
                 + ("held" if c.hold_peak else "then decaying as 1/sqrt(step)")
                 + (f", then falling linearly to 0 over the last {c.cooldown_epochs} epochs" if c.cooldown_epochs else ""))
        parts.append(words)
    return "; ".join(parts)
