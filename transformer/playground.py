"""What the app shows, computed without gradio: one translation plus everything its views need.

Every map and every layer input comes from forward hooks (Translator.inspect); nothing is threaded
through forward's return values.
"""
from __future__ import annotations

import difflib
import html
import json
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import torch

from . import plots
from .capture import KINDS, parse_head
from .decoding import DecodeOptions
from .translator import Inspection, Translation, Translator

KIND_NAMES = {"encoder": "encoder self-attention", "decoder": "decoder self-attention (masked)",
              "cross": "cross-attention (decoder -> encoder)"}


@dataclass
class Result:
    """One user's current translation and what the hooks saw; lives in that user's gr.State."""

    pair: str
    text: str
    translation: Translation
    inspection: Inspection
    options: DecodeOptions = DecodeOptions()

    @property
    def maps(self):
        return self.inspection.maps


def run(translator: Translator, pair: str, text: str, options: DecodeOptions = DecodeOptions()) -> Result:
    """Translate, then one hooked teacher-forced pass over the result for the maps and layer inputs."""
    translation = translator.translate(text, options)
    inspection = translator.inspect(text, translation)
    return Result(pair, text, translation, inspection, options)


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
        if time.time() - old.stat().st_mtime > keep_s:
            old.unlink(missing_ok=True)
    path = folder / f"attention-{uuid.uuid4().hex[:12]}.json"
    path.write_text(json.dumps(attention_payload(result.maps)))
    return path


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


def ablate(translator: Translator, result: Result, heads: list[str]) -> tuple[Translation, str]:
    """Re-translate with the chosen heads switched off; returns the new translation and a marked-up diff."""
    chosen = [parse_head(h) for h in heads]
    after = translator.translate(result.text, result.options, ablate=chosen)
    return after, token_diff(result.translation.target_tokens, after.target_tokens)


def token_diff(before: list[str], after: list[str]) -> str:
    """Both token sequences as HTML, with removed tokens struck out and added ones highlighted."""
    def span(tok: str, cls: str) -> str:
        return f'<span class="tok {cls}">{html.escape(tok.replace("▁", " ").strip() or tok)}</span>'

    old, new = [], []
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
        old += [span(t, "same" if op == "equal" else "removed") for t in before[a0:a1]]
        new += [span(t, "same" if op == "equal" else "added") for t in after[b0:b1]]
    changed = sum(1 for s in new if '"tok added"' in s) + sum(1 for s in old if '"tok removed"' in s)
    return (f'<div class="diff"><div><b>with every head</b>: {" ".join(old)}</div>'
            f'<div><b>with the chosen heads off</b>: {" ".join(new)}</div>'
            f"<div>{changed} token{'s' if changed != 1 else ''} changed</div></div>")


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


def model_card(translator: Translator, pair: str) -> str:
    cfg, metrics = translator.cfg, translator.metrics
    breakdown = parameter_breakdown(translator)
    total = sum(n for _, n in breakdown)
    rows = "\n".join(f"| {name} | {n:,} | {100 * n / total:.1f}% |" for name, n in breakdown)
    config = "\n".join(f"| `{k}` | {v} |" for k, v in cfg.to_dict().items())
    test = metrics.get("test", {})
    scores = "\n".join(f"| {name} | {s.get('bleu_lc', float('nan')):.2f} | {s.get('bleu', float('nan')):.2f} | "
                       f"{s.get('chrf', float('nan')):.2f} |" for name, s in test.items()) or "| (not recorded) | | | |"
    trained = metrics.get("train_wall_s")
    how = (f"`{metrics.get('command', 'unknown command')}` on {metrics.get('hardware', 'unknown hardware')}"
           + (f", {trained / 60:.0f} minutes, {len(metrics.get('epochs', []))} epochs" if trained else ""))
    return f"""### {pair.upper()} checkpoint `{translator.name}`

Running on **{translator.device}** in **{translator.precision}**{' (feed-forward layers and output projection)' if translator.precision == 'int8' else ''} with {total:,} parameters; {'pre-norm' if cfg.norm_first else 'post-norm (as in the paper)'}.

| component | parameters | share |
| --- | ---: | ---: |
{rows}

| config | value |
| --- | --- |
{config}

**Test scores** (Multi30k test 2016, sacreBLEU):

| decoding | BLEU lowercased | BLEU cased | chrF |
| --- | ---: | ---: | ---: |
{scores}

**Trained with** {how}.
"""


