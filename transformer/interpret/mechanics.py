"""How the numbers are made: one head's arithmetic, the masks the three attention families applied, and
attention rollout. Every tensor here was recorded by forward hooks on the real modules (capture.capture_internals);
the arithmetic below re-derives the attention row and the head's output from them, and says how far off it is.

Shape legend: L layers, H heads, Tq queries, Tk keys, D d_model, Dh head size (d_k = d_v = D / H).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from .capture import AttentionInternals
from ..errors import InputError


@dataclass
class HeadWalk:
    """eq. 1 for one query token of one head, step by step, with the hooked values beside the re-derived ones."""

    q: Tensor  # (Dh,) the query vector of the chosen token: its row of Q W_i^Q
    keys: Tensor  # (Tk, Dh) K W_i^K, every position the query may look at
    values: Tensor  # (Tk, Dh) V W_i^V
    scores: Tensor  # (Tk,) q . k_j
    scaled: Tensor  # (Tk,) divided by sqrt(d_k)
    allowed: Tensor  # (Tk,) bool: what the mask the module received lets through
    masked: Tensor  # (Tk,) scaled, with -inf where not allowed
    weights: Tensor  # (Tk,) softmax of masked: the re-derived attention row
    hooked_weights: Tensor  # (Tk,) the same row as the attn_probs tap saw it (the Attention view's row)
    head_output: Tensor  # (Dv,) weights @ values
    hooked_head_output: Tensor  # (Dv,) this head's slice of what entered W^O
    contributions: Tensor  # (H, D): each head's slice of the concatenation times its slice of W^O
    mixed: Tensor  # (D,) the contributions summed, plus W^O's bias
    output: Tensor  # (D,) what W^O gave out for this token, as its hook saw it
    d_k: int

    @property
    def row_error(self) -> float:
        return float((self.weights - self.hooked_weights).abs().max())

    @property
    def output_error(self) -> float:
        return float((self.head_output - self.hooked_head_output).abs().max())

    @property
    def mix_error(self) -> float:
        return float((self.mixed - self.output).abs().max())

    @property
    def shares(self) -> Tensor:
        """(H,) each head's part of the mixed output: the norm of its contribution over the sum of the norms."""
        norms = self.contributions.norm(dim=-1)
        return norms / norms.sum().clamp_min(1e-12)


def walk_head(inside: AttentionInternals, head: int, query: int, w_o: Tensor, b_o: Tensor) -> HeadWalk:
    """Re-derive softmax(q K^T / sqrt(d_k)) and the head's output for one query from one block's hooked tensors.

    w_o (D, D) and b_o (D,) are the block's output projection parameters (Concat(heads) W^O, §3.2.2).
    """
    H = inside.q.size(0)
    if not 0 <= head < H:
        raise InputError(f"head must be from 0 to {H - 1}; got {head}")
    if not 0 <= query < inside.q.size(1):
        raise InputError(f"query must be a position from 0 to {inside.q.size(1) - 1}; got {query}")
    q, keys, values = inside.q[head, query], inside.k[head], inside.v[head]  # (Dh,), (Tk, Dh), (Tk, Dh)
    d_k = q.size(0)
    # Every query of the head at once, then this query's row: the same products in the same order as the
    # model's batched eq. 1, so the two agree to the last bits rather than to fp32 rounding of the scores.
    scores = (inside.q[head] @ keys.T)[query]  # (Tq, Tk) -> (Tk,): q . k_j for every key j
    scaled = scores / math.sqrt(d_k)
    allowed = inside.allowed[query]  # (Tk,)
    masked = scaled.masked_fill(~allowed, float("-inf"))
    weights = masked.softmax(dim=-1)
    head_output = weights @ values  # (Dv,)
    Dh = values.size(-1)
    concat = inside.concat[query]  # (H * Dh,) what entered W^O
    per_head = concat.view(H, Dh)  # (H, Dh)
    w = w_o.detach().float().cpu().view(w_o.size(0), H, Dh)  # (D, H, Dh): W^O's columns, grouped by head
    contributions = torch.einsum("hd,ohd->ho", per_head, w)  # (H, D)
    mixed = contributions.sum(dim=0) + b_o.detach().float().cpu()  # (D,) Concat(heads) W^O + b^O
    return HeadWalk(q, keys, values, scores, scaled, allowed, masked, weights, inside.probs[head, query],
                    head_output, per_head[head], contributions, mixed, inside.output[query], d_k)


# -----------------------------------------------------------------------------
# The three families


FAMILIES = {
    "encoder": "bidirectional: every source token sees every other (encoder-only models such as BERT use this)",
    "decoder": "causal: target token t sees tokens 0..t, never the future (decoder-only models such as GPT use this)",
    "cross": "cross: every target token sees the whole source (only encoder-decoder models have it; "
             "this model uses all three)",
}

ALLOWED, CAUSAL, PADDING = 0, 1, 2  # what mask_reasons writes in each cell


def mask_reasons(allowed: Tensor, key_pad: Tensor) -> Tensor:
    """(Tq, Tk): ALLOWED where the mask the module received let attention through; where it did not, why:
    PADDING when the key is a padding position, else CAUSAL (the key lies in the query's future)."""
    reasons = torch.full(allowed.shape, ALLOWED, dtype=torch.long)
    reasons[~allowed] = CAUSAL
    reasons[~allowed & key_pad[None, :]] = PADDING
    return reasons


# -----------------------------------------------------------------------------
# Attention rollout (Abnar & Zuidema 2020)


def rollout(maps: Tensor) -> Tensor:
    """(L, H, T, T) self-attention maps -> (T, T) rollout: per layer the heads' mean plus the identity for the
    residual connection, rows renormalised, multiplied from the first layer up (A_L ... A_1)."""
    eye = torch.eye(maps.size(-1), dtype=maps.dtype)
    layers = [(m.mean(dim=0) + eye) / (m.mean(dim=0) + eye).sum(dim=-1, keepdim=True) for m in maps]  # (T, T) each
    return chain(layers)


def chain(layers: list[Tensor]) -> Tensor:
    """C_L ... C_1 of per-layer (T, T) token-to-token matrices: what each token at the top owes each input token."""
    out = torch.eye(layers[0].size(0), dtype=layers[0].dtype)
    for c in layers:
        out = c @ out
    return out
