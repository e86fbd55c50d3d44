"""Padded batches of token ids: the padding id always comes from the model's config (an imported model's differs).

Shape legend: B batch, N longest sequence.
"""
from __future__ import annotations

import torch
from torch import Tensor


def pad_batch(seqs: list[list[int]], pad_id: int) -> Tensor:
    """Right-pad id lists with the model's pad id into a (B, N) tensor."""
    n = max(len(s) for s in seqs)
    return torch.tensor([s + [pad_id] * (n - len(s)) for s in seqs], dtype=torch.long)  # (B, N)


def length_sorted_batches(seqs: list[list[int]], batch_size: int) -> list[list[int]]:
    """Indices of `seqs` in batches of at most batch_size, shortest first, so that a batch holds similar lengths."""
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    return [order[k : k + batch_size] for k in range(0, len(order), batch_size)]
