"""Activation patching (causal tracing) for an encoder-decoder, and DecoderLens.

**Patching.** Two sentences that differ in one thing ("He is a doctor." / "She is a doctor.") are translated; at
the first target position where the translations differ, both runs are teacher-forced on the same target prefix,
and the measure is the logit difference there, log p(the first's piece) - log p(the second's). A patch runs one
sentence (the receiver) with one component's activation copied from the run on the other (the donor) and scores
the share of the difference between the two runs it carries:

    share = (m_patched - m_receiver) / (m_donor - m_receiver)

0: the patch changes nothing; 1: the receiver now behaves as the donor. **Denoising** puts the first sentence's
activation into the second sentence's run (does this part suffice to bring the first translation back?);
**noising** puts the second's into the first's (does this part carry enough to break it?).

Sites, each swept in one batched teacher-forced pass with every patch a row (Meng et al. 2022; Heimersheim & Nanda
2024 on reading the results):
- "encoder": the residual stream after each encoder layer, at one source position (both sources must have the
  same number of pieces, so that positions align);
- "decoder": the residual stream after each decoder layer, at one target position (the prefix is shared);
- "heads:encoder", "heads:decoder", "heads:cross": one head's output before W^O, at every position (encoder heads
  need the same number of source pieces too).

**DecoderLens** (Langedijk et al. 2023): the translation the decoder writes when it reads encoder layer k's output
(through the encoder's final norm, where the model has one) as its memory.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor

from ..errors import InputError
from ..model import KINDS, Transformer
from .capture import attention_names, hooks, record

DIRECTIONS = ("denoising", "noising")  # first into second, second into first
SITES = ("encoder", "decoder") + tuple(f"heads:{kind}" for kind in KINDS)


@dataclass
class PrefixRun:
    """One sentence teacher-forced on the shared prefix: what a patch can copy from it, and its measure."""

    src: Tensor  # (1, S)
    measure: float  # log p(first's piece) - log p(second's piece) at the last prefix position
    encoder: list[Tensor]  # per encoder layer, its output (1, S, D)
    decoder: list[Tensor]  # per decoder layer, its output (1, T, D)
    heads: dict[str, list[Tensor]]  # per kind, per layer: W^O's input, the heads side by side (1, T_q, D)


@dataclass
class Patching:
    """The sweeps of one minimal pair in one direction: scores[site] is (layers, positions or heads)."""

    direction: str
    prefix: list[int]  # <s> and the target pieces both translations share
    first_token: int  # what the first sentence's translation writes next
    second_token: int  # what the second's writes instead
    first_measure: float  # the measure on the first sentence's run (the clean one)
    second_measure: float  # on the second's (the corrupted one)
    scores: dict[str, Tensor] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # site -> a reason code ("source_lengths_differ")
    labels: dict = field(default_factory=dict)  # the pieces and translations, when the caller knows them

    def to_dict(self) -> dict:
        return {"direction": self.direction, "prefix": self.prefix, "first_token": self.first_token,
                "second_token": self.second_token, "first_measure": round(self.first_measure, 6),
                "second_measure": round(self.second_measure, 6),
                "scores": {site: [[round(v, 5) for v in row] for row in s.tolist()] for site, s in self.scores.items()},
                "skipped": self.skipped, **self.labels}


@torch.inference_mode()
def run_on_prefix(model: Transformer, src: Tensor, tgt_in: Tensor, first: int, second: int) -> PrefixRun:
    """The run of `src` on the prefix tgt_in (1, T): every activation a patch may copy, and the measure."""
    layers = {site: site_names(model, site) for site in ("encoder", "decoder")}
    heads = {kind: site_names(model, f"heads:{kind}") for kind in KINDS}
    with record(model, layers["encoder"] + layers["decoder"]) as outs, \
            record(model, [n for names in heads.values() for n in names], inputs=True) as calls:
        lp = model.log_probs_at(src, tgt_in, torch.tensor([tgt_in.size(1) - 1]))  # (1, V)
    return PrefixRun(src, float(lp[0, first] - lp[0, second]),
               *([outs[name][0] for name in layers[site]] for site in ("encoder", "decoder")),
               {kind: [calls[name][0][0][0] for name in names] for kind, names in heads.items()})  # W^O's input


def site_names(model: Transformer, site: str) -> list[str]:
    """The modules a site's patches hook, by name: the layers (residual stream), or each block's W^O (heads)."""
    if site in ("encoder", "decoder"):
        return [f"{site}.layers.{i}" for i in range(len(getattr(model, site).layers))]
    return [f"{name}.w_o" for name in attention_names(model)[site.split(":")[1]]]


def donor_acts(run: PrefixRun, site: str) -> list[Tensor]:
    return run.encoder if site == "encoder" else run.decoder if site == "decoder" else run.heads[site.split(":")[1]]


@torch.inference_mode()
def patched(model: Transformer, site: str, receiver: PrefixRun, donor: PrefixRun, tgt_in: Tensor, first: int,
            second: int, patches: list[tuple[int, list[int]]]) -> Tensor:
    """The receiver run with each patch in a row of its own (layer, the positions or heads it takes from the donor),
    after one unpatched row, in one teacher-forced pass: the measure of every row, (1 + len(patches),)."""
    cfg, dk = model.cfg, model.cfg.d_model // model.cfg.n_heads
    acts, heads = donor_acts(donor, site), site.startswith("heads:")
    N = 1 + len(patches)
    by_layer: dict[int, list[tuple[int, list[int]]]] = {}
    for row, (layer, where) in enumerate(patches, start=1):
        by_layer.setdefault(layer, []).append((row, where))

    def hook(layer: int):
        donor_act = acts[layer][0].to(tgt_in.device)  # (P, D): per position; for heads, W^O's input

        def residual(module, inputs, output):  # output (N, P, D): a row takes the donor's state at its positions
            output = output.clone()
            for row, where in by_layer[layer]:
                output[row, where] = donor_act[where].to(output.dtype)
            return output

        def head(module, inputs, output):  # W^O again, on its input with a row's heads the donor's
            x = inputs[0].clone().view(N, inputs[0].size(1), cfg.n_heads, dk)  # (N, T, D) -> (N, T, H, d_k)
            theirs = donor_act.to(x.dtype).view(-1, cfg.n_heads, dk)  # (T, D) -> (T, H, d_k)
            for row, where in by_layer[layer]:
                x[row, :, where] = theirs[:, where]
            return F.linear(x.view(N, x.size(1), -1), module.weight, module.bias)  # (N, T, H * d_k) -> (N, T, D)
        return head if heads else residual

    names = site_names(model, site)
    src, tgt = receiver.src.expand(N, -1), tgt_in.expand(N, -1)  # (N, S), (N, T)
    with hooks(model, {names[layer]: hook(layer) for layer in by_layer}):
        lp = model.log_probs_at(src, tgt, torch.full((N,), tgt.size(1) - 1, device=tgt.device))  # (N, V)
    return (lp[:, first] - lp[:, second]).float().cpu()  # (N,)


def shares(measured: Tensor, donor: PrefixRun) -> Tensor:
    """What each patched row carries of the difference between the runs: 0 nothing, 1 all. measured: patched's."""
    return (measured[1:] - measured[0]) / (donor.measure - measured[0])


def sweep(model: Transformer, site: str, receiver: PrefixRun, donor: PrefixRun, tgt_in: Tensor, first: int,
          second: int) -> Tensor:
    """Every single patch of `site`, one position (or head) of one layer each: their shares, (layers, width)."""
    width = {"encoder": receiver.src.size(1), "decoder": tgt_in.size(1)}.get(site, model.cfg.n_heads)
    layers = len(site_names(model, site))
    patches = [(layer, [j]) for layer in range(layers) for j in range(width)]
    measured = patched(model, site, receiver, donor, tgt_in, first, second, patches)
    return shares(measured, donor).view(layers, width)


def first_difference(a: list[int], b: list[int], eos: int) -> int:
    """The first target position where two translations differ (an ended one writes </s>)."""
    a, b = a + [eos], b + [eos]
    for t, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return t
    raise InputError("both sentences translate to the same pieces: there is no difference to trace; "
                     "change a word that changes the translation")


def patch(model: Transformer, first_src: Tensor, second_src: Tensor, first_out: list[int], second_out: list[int],
          direction: str = "denoising", sites: tuple[str, ...] = SITES, labels: dict | None = None) -> Patching:
    """Sweep `sites` for the pair (sources (1, S1) and (1, S2), their translations' pieces) in one direction.
    labels: the pieces and translations, when the caller knows them."""
    if direction not in DIRECTIONS:
        raise InputError(f"direction is one of {', '.join(DIRECTIONS)}; got {direction!r}")
    unknown = [s for s in sites if s not in SITES]
    if unknown:
        raise InputError(f"no site {unknown[0]!r}; the sites are {', '.join(SITES)}")
    cfg = model.cfg
    t = first_difference(first_out, second_out, cfg.eos_id)
    a, b = (first_out + [cfg.eos_id])[t], (second_out + [cfg.eos_id])[t]
    prefix = [cfg.bos_id] + first_out[:t]
    tgt_in = torch.tensor([prefix], device=first_src.device)  # (1, T)
    first, second = run_on_prefix(model, first_src, tgt_in, a, b), run_on_prefix(model, second_src, tgt_in, a, b)
    receiver, donor = (second, first) if direction == "denoising" else (first, second)
    out = Patching(direction, prefix, a, b, first.measure, second.measure, labels=labels or {})
    for site in sites:
        if site in ("encoder", "heads:encoder") and first_src.size(1) != second_src.size(1):
            out.skipped[site] = "source_lengths_differ"  # positions do not align
            continue
        out.scores[site] = sweep(model, site, receiver, donor, tgt_in, a, b)
    return out


# -----------------------------------------------------------------------------
# DecoderLens


class ReadsLayer:
    """The model with its decoder reading encoder layer k's output as memory: what decoding functions call."""

    def __init__(self, model: Transformer, layer: int):
        self.model, self.cfg, self.layer = model, model.cfg, layer

    def encode(self, src: Tensor) -> Tensor:
        name = f"encoder.layers.{self.layer}"
        with record(self.model, [name]) as seen:
            self.model.encode(src)
        weight = next(self.model.parameters())
        return self.model.encoder.final_norm(seen[name][0].to(weight))  # (B, S, D), as the encoder gives memory

    def decode_step(self, tokens: Tensor, memory: Tensor, cache) -> Tensor:
        return self.model.decode_step(tokens, memory, cache)


def decoder_lens(model: Transformer, src: Tensor, max_len: int, run_limits=None) -> list:
    """The greedy translation (a decoding.Hypothesis) when the decoder reads each encoder layer's output, layer by
    layer, for src (1, S); the last one is the model's own. run_limits: decoding's stutter guard, or None."""
    from ..decoding import greedy

    return [greedy(ReadsLayer(model, k), src, max_len, run_limits)[0] for k in range(model.cfg.n_encoder_layers)]
