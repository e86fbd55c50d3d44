"""What the app shows, computed without gradio: one translation plus everything its views need.

Every map and every layer input comes from forward hooks (Translator.inspect); nothing is threaded
through forward's return values. The views (views/) turn these numbers into HTML and Markdown.
"""
from __future__ import annotations

import difflib
import functools
import hashlib
import json
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

import torch

from . import mechanics, plots
from .attribution import METHODS
from .capture import KINDS, parse_head
from .decoding import DecodeOptions
from .errors import InputError
from .timeline import lens_over_epochs, snapshots
from .translator import Inspection, Translation, Translator

KIND_NAMES = {"encoder": "encoder self-attention", "decoder": "decoder self-attention (masked)",
              "cross": "cross-attention (decoder -> encoder)"}


# The three families panel runs the user's sentence in one batch with this one: the shorter of the two is padded
NEIGHBOUR = "Two dogs are running through a field of tall grass while a man watches."


@functools.lru_cache(maxsize=16)
def neighbour_translation(translator: Translator) -> Translation:
    """NEIGHBOUR's greedy translation by this model (the same every time, so made once)."""
    return translator.translate(NEIGHBOUR)


@dataclass
class Result:
    """One user's current translation and what the hooks saw; lives in that user's gr.State."""

    pair: str
    text: str
    translation: Translation
    inspection: Inspection
    options: DecodeOptions = DecodeOptions()
    batch: list[dict] | None = None  # Translator.inspect_batch of [text, NEIGHBOUR]: masks with padding

    @property
    def maps(self):
        return self.inspection.maps

    @property
    def key(self) -> str:
        """The same for the same pair, text and decoding options: what caches of its views are keyed by."""
        return result_key(self.pair, self.text, self.options)


def result_key(pair: str, text: str, options: DecodeOptions) -> str:
    return hashlib.sha1(repr((pair, text, options)).encode("utf-8", "replace")).hexdigest()[:20]


class SharedCache:
    """A bounded map from keys to values that are the same for every user: each is computed once, even when many
    requests ask for it at the same moment (the others wait for the first); least recently used entries go first,
    and an entry older than `ttl_s` (when given) is computed again."""

    def __init__(self, size: int, ttl_s: float | None = None):
        self.size, self.ttl_s = size, ttl_s
        self.entries: OrderedDict[Hashable, tuple[float, object]] = OrderedDict()  # key -> (made at, value)
        self.pending: dict[Hashable, Future] = {}
        self.lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: Hashable, make: Callable[[], object]):
        with self.lock:
            entry = self.entries.get(key)
            if entry is not None and (self.ttl_s is None or time.monotonic() - entry[0] < self.ttl_s):
                self.entries.move_to_end(key)
                self.hits += 1
                return entry[1]
            future, owner = self.pending.get(key), False
            if future is None:
                future, owner = self.pending.setdefault(key, Future()), True
                self.misses += 1
        if not owner:
            return future.result()  # another request is computing it: wait for that one
        try:
            value = make()
        except BaseException as e:
            with self.lock:
                self.pending.pop(key, None)
            future.set_exception(e)
            raise
        with self.lock:
            self.entries[key] = (time.monotonic(), value)
            self.entries.move_to_end(key)
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)
            self.pending.pop(key, None)
        future.set_result(value)
        return value


def run(translator: Translator, pair: str, text: str, options: DecodeOptions = DecodeOptions(),
        cache: SharedCache | None = None) -> Result:
    """Translate, then hooked teacher-forced passes: the sentence alone (maps, layer inputs, Q/K/V), and the
    sentence in a padded batch with NEIGHBOUR (the masks as a batch applies them). Beam search keeps its tree.
    cache: results shared between users (every strategy is repeatable: sampling draws from its seed)."""
    if cache is not None:
        return cache.get(result_key(pair, text, options), lambda: run(translator, pair, text, options))
    translation = translator.translate(text, options, record_tree=options.strategy == "beam")
    inspection = translator.inspect(text, translation, internals=True)
    batch = translator.inspect_batch([text, NEIGHBOUR], [translation, neighbour_translation(translator)])
    return Result(pair, text, translation, inspection, options, batch)


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
        return plots.heads_grid(weights[layer], queries, keys, f"{name}, layer {layer}: every head")
    if head == "average":
        return plots.attention_heatmap(weights[layer].mean(0), queries, keys, f"{name}, layer {layer}, mean of heads")
    return plots.attention_heatmap(weights[layer, int(head)], queries, keys, f"{name}, layer {layer}, head {head}")


def attention_payload(maps) -> dict:
    """The maps as nested lists (L, H, query, key) with their token labels, for JSON."""
    return {k: [[[[round(p, 5) for p in row] for row in head] for head in layer] for layer in getattr(maps, k).tolist()]
            for k in KINDS} | {"source_tokens": maps.source_tokens, "target_tokens": maps.target_tokens}


def write_attention_json(result: Result, folder: str | Path, keep_s: float = 3600.0) -> Path:
    """Write the maps for download under a fresh name; files older than keep_s are removed first."""
    folder = Path(folder)
    for old in folder.glob("attention-*.json"):
        try:
            if time.time() - old.stat().st_mtime > keep_s:
                old.unlink(missing_ok=True)
        except FileNotFoundError:  # another request pruned it between the listing and the look
            pass
    path = folder / f"attention-{uuid.uuid4().hex[:12]}.json"
    path.write_text(json.dumps(attention_payload(result.maps)))
    return path


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
    return [(f"{i} {t}", i) for i, t in enumerate(queries)]


def inside_head(translator: Translator, result: Result, kind: str, layer: int, head: int, query: int):
    """eq. 1 worked through for one query token of one head, from the hooked tensors: (figure, walk, reasons),
    reasons[j] saying why key j was masked ("" where it was not)."""
    attn = attention_block(translator, kind, layer)
    walk = mechanics.walk_head(result.inspection.internals[kind][layer], head, query, attn.w_o.weight, attn.w_o.bias)
    queries, keys = axis_tokens(result.maps, kind)
    reasons = ["" if ok else "future (causal mask)" for ok in walk.allowed.tolist()]
    title = f"{KIND_NAMES[kind]}, layer {layer}, head {head}: query {query} {queries[query]}"
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


def write_rollout_json(result: Result, folder: str | Path) -> Path:
    """The rollout matrices with their tokens, for download (pruned with the attention files)."""
    payload = {kind: {"last_layer_mean": [[round(p, 5) for p in r] for r in last.tolist()],
                      "rollout": [[round(p, 5) for p in r] for r in rolled.tolist()], "tokens": tokens}
               for kind, (last, rolled, tokens) in rollout_maps(result).items()}
    path = Path(folder) / f"attention-rollout-{uuid.uuid4().hex[:12]}.json"
    path.write_text(json.dumps(payload))
    return path


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
    cfg = translator.cfg
    layers = {"encoder": cfg.n_encoder_layers, "decoder": cfg.n_decoder_layers, "cross": cfg.n_decoder_layers}
    return [f"{kind}:{i}:{h}" for kind in KINDS for i in range(layers[kind]) for h in range(cfg.n_heads)]


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
        if parts[0] == "embed":
            key = "shared embedding (encoder in, decoder in, output projection)"
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
    return [(f"{i}: {t}", i) for i, t in enumerate(output_tokens(result))]


def lens_of(translator: Translator, result: Result):
    return translator.lens(result.text, result.translation)


def alternative_choices(translator: Translator, lens, step: int) -> list[tuple[str, int]]:
    """The step's other top-5 tokens by the model's own distribution (the lens's last layer), for the contrastive
    question; -1 asks no contrastive question."""
    log_probs = lens.log_probs[-1, step]  # (V,)
    best = [i for i in log_probs.topk(6).indices.tolist() if i != lens.chosen[step]][:5]
    piece = translator.tokenizer.sp.id_to_piece
    return [("none", -1)] + [(f"{piece(i)} (p = {float(log_probs[i].exp()):.2f})", i) for i in best]


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
    rows = [(METHODS[m], a.source.tolist(), None if a.prefix is None else a.prefix.tolist())
            for m, a in expl.methods.items()]
    token = expl.labels["output_tokens"][expl.step]
    return plots.attribution_rows(rows, expl.labels["source_tokens"], expl.labels["decoder_inputs"][: expl.step + 1],
                                  f"What output token {expl.step} ({token}) used: shares over the source, then the "
                                  "target prefix")


def source_share_figure(expl):
    shares = {"ALTI+": expl.source_share["alti_plus"], "gradient × input": expl.source_share["gradient_x_input"]}
    return plots.source_shares(expl.labels["output_tokens"], shares, LOW_SOURCE_SHARE, expl.step,
                               "How much of each token comes from the source (the rest: the target prefix)")


def continuing_own_words(expl) -> list[int]:
    """Steps whose ALTI+ source share is under LOW_SOURCE_SHARE (Dale et al. 2023: a sign of hallucination)."""
    return [t for t, v in enumerate(expl.source_share["alti_plus"]) if v < LOW_SOURCE_SHARE]


def write_used_json(expl, lens, training, folder: str | Path) -> Path:
    """Every number of the "What the model used" view: the attributions, the deletion test, the source shares,
    the logit lens (top-1 per layer and step, p of the final token) and the lens over training."""
    ids, probs = lens.top()
    payload = expl.to_dict() | {"lens": {
        "top_ids": ids.tolist(), "top_prob": [[round(float(p), 5) for p in row] for row in probs],
        "final_token_prob": [[round(float(p), 5) for p in row] for row in lens.chosen_prob()],
        "first_top1_layer": lens.first_top1_layer()}}
    if training is not None:
        stages, shares = training
        payload["lens_over_training"] = {"stages": stages, "top1_is_final_share": shares.tolist()}
    path = Path(folder) / f"what-the-model-used-{uuid.uuid4().hex[:12]}.json"
    path.write_text(json.dumps(payload))
    return path
