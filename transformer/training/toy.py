"""Toy sequence tasks for training a tiny Transformer in seconds: what attention must learn is known in advance.

Sequences are symbols (ids from FIRST_SYMBOL on) of length 3-12; the model's special ids (pad, <s>, </s>, unk)
stay below FIRST_SYMBOL, so a tiny ModelConfig with vocab_size = FIRST_SYMBOL + n_symbols fits every task.
"""
from __future__ import annotations

import torch
from torch import Tensor

from ..tokenizer import pad_batch

from ..errors import InputError
from ..config import ModelConfig

FIRST_SYMBOL = 4
SYMBOLS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _swap_halves(seq: list[int]) -> list[int]:
    half = len(seq) // 2
    return seq[half:] + seq[:half]


TASKS = {  # name: (what the output is, the function); the attention it needs is in the name
    "copy": ("the input again: cross-attention on the diagonal", lambda s: list(s)),
    "reverse": ("the input backwards: the anti-diagonal", lambda s: s[::-1]),
    "sort": ("the symbols in order: each step looks up the next-smallest symbol, wherever it is", sorted),
    "swap halves": ("the second half, then the first: two diagonals, jumping half-way", _swap_halves),
}


def target_of(task: str, seq: list[int]) -> list[int]:
    if task not in TASKS:
        raise InputError(f"unknown task {task!r}; choose one of: {', '.join(TASKS)}")
    return TASKS[task][1](seq)


def random_sequences(n: int, n_symbols: int, min_len: int, max_len: int,
                     generator: torch.Generator) -> list[list[int]]:
    lengths = torch.randint(min_len, max_len + 1, (n,), generator=generator).tolist()
    return [torch.randint(FIRST_SYMBOL, FIRST_SYMBOL + n_symbols, (L,), generator=generator).tolist()
            for L in lengths]


def make_batch(task: str, seqs: list[list[int]], cfg: ModelConfig) -> tuple[Tensor, Tensor]:
    """src (B, S): sequence + </s>, padded; tgt (B, T): <s> + target + </s>, padded (the ids are cfg's)."""
    srcs = [s + [cfg.eos_id] for s in seqs]
    tgts = [[cfg.bos_id] + target_of(task, s) + [cfg.eos_id] for s in seqs]
    return pad_batch(srcs, cfg.pad_id), pad_batch(tgts, cfg.pad_id)  # (B, S), (B, T)


def spell(ids: list[int]) -> str:
    """Symbols as letters; special ids dropped."""
    return " ".join(SYMBOLS[i - FIRST_SYMBOL] for i in ids if i >= FIRST_SYMBOL)


def parse(text: str, n_symbols: int) -> list[int]:
    """'C A B' or 'CAB' -> ids; a plain message for anything else."""
    letters = [c for c in text.upper() if not c.isspace()]
    allowed = SYMBOLS[:n_symbols]
    bad = sorted({c for c in letters if c not in allowed})
    if bad:
        raise InputError(f"use only the symbols {' '.join(allowed)} (not {' '.join(bad)})")
    if not letters:
        raise InputError("type a sequence of symbols, e.g. " + " ".join(allowed[:5]))
    return [FIRST_SYMBOL + SYMBOLS.index(c) for c in letters]
