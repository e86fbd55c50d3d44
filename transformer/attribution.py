"""What one output token used: attributions over the source tokens and the target prefix.

Two of the methods so far, each normalised to sum to 1 over the S source tokens and the t + 1 decoder inputs
(<s> and the tokens before the chosen one):
- attention x norm (Kobayashi et al. 2020): ||alpha * v W^O|| per head, summed over heads, from the last decoder
  layer's cross-attention (source) and self-attention (prefix), read by hooks (capture_internals);
- gradient x input: ||d log p(token) / d embedding  (*)  embedding|| per token, by autograd through the real
  model, the embeddings read by a forward hook on the embedding module.

Shape legend: S source length, T decoder inputs (<s> + translation), D d_model, H heads, Dh head size.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from .capture import capture_internals, capture_outputs


@dataclass
class Attribution:
    """One method's shares of one output token: over the source, then over the decoder's inputs up to it."""

    source: Tensor  # (S,)
    prefix: Tensor  # (t + 1,)

    @property
    def source_share(self) -> float:
        return float(self.source.sum())


def _normalised(source: Tensor, prefix: Tensor) -> Attribution:
    total = (source.sum() + prefix.sum()).clamp_min(1e-12)
    return Attribution(source / total, prefix / total)


@torch.inference_mode()
def attention_norm(model, src: Tensor, tgt_in: Tensor, step: int) -> Attribution:
    """src (1, S), tgt_in (1, T); step t: the token predicted at decoder position t."""
    with capture_internals(model) as recorder:
        model(src, tgt_in)
    inside = recorder.sentence(0)
    blocks = model.attention_blocks()

    def weighted_norms(kind: str) -> Tensor:
        block, seen = blocks[kind][-1], inside[kind][-1]
        H, _, Dh = seen.v.shape
        w_o = block.w_o.weight.detach().float().cpu().view(-1, H, Dh)  # (D, H, Dh): W^O's slice per head
        values = torch.einsum("hkd,ehd->hke", seen.v, w_o)  # (H, Tk, D): each value vector through W^O
        alpha = seen.probs[:, step]  # (H, Tk): the query at `step`
        return (alpha[..., None] * values).norm(dim=-1).sum(dim=0)  # (Tk,)

    return _normalised(weighted_norms("cross"), weighted_norms("decoder")[: step + 1])


def gradient_x_input(model, src: Tensor, tgt_in: Tensor, step: int, token: int) -> Attribution:
    """||grad (*) input|| of log p(token) at decoder position `step`, per embedded source and decoder token."""
    try:
        with torch.enable_grad(), capture_outputs([model.embed], keep_graph=True) as outs:
            log_probs = model(src, tgt_in)  # (1, T, V)
            log_probs[0, step, token].backward()
    finally:
        model.zero_grad(set_to_none=True)
    embedded = outs[0]  # encode() embeds the source first, then the decoder its inputs: (1, S, D), (1, T, D)
    source, target = ((e.grad * e).detach()[0].norm(dim=-1).float().cpu() for e in embedded)  # (S,), (T,)
    return _normalised(source, target[: step + 1])
