"""Decoding strategies as plain functions over `model.encode` and `model.decode_step`.

Any object with those two methods, `new_cache(src)` and a `cfg` with pad/bos/eos ids can be decoded
(the tests use a hand-written probability table). Every strategy returns, per sentence, a Hypothesis
whose steps record the chosen token, its probability and the top alternatives at that step.

Shape legend: B batch, K beam size, S source length, V vocabulary, A alternatives kept per step.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import Tensor

N_ALTERNATIVES = 5


@dataclass
class Step:
    token: int
    prob: float  # the model's probability of `token` at this step (before temperature or truncation)
    alternatives: list[tuple[int, float]]  # the most probable tokens at this step, best first


@dataclass
class Hypothesis:
    tokens: list[int]  # generated ids, without <s> and </s>
    steps: list[Step] = field(default_factory=list)  # one per generated token, </s> included when reached
    score: float = 0.0  # sum of log-probabilities (beam search: divided by length ** length_penalty)


class StepLog:
    """Per-row record of the decoding steps, kept as tensors and reordered with the beams."""

    def __init__(self, batch: int, device: torch.device):
        self.tokens = torch.empty(batch, 0, dtype=torch.long, device=device)  # (B, t)
        self.probs = torch.empty(batch, 0, device=device)  # (B, t)
        self.alt_ids = torch.empty(batch, 0, N_ALTERNATIVES, dtype=torch.long, device=device)  # (B, t, A)
        self.alt_probs = torch.empty(batch, 0, N_ALTERNATIVES, device=device)  # (B, t, A)

    def append(self, log_probs: Tensor, chosen: Tensor) -> None:
        """log_probs (B, V) of this step, chosen (B,) the token picked per row."""
        alt_lp, alt_ids = log_probs.topk(min(N_ALTERNATIVES, log_probs.size(-1)), dim=-1)  # (B, A)
        if alt_ids.size(1) < N_ALTERNATIVES:  # a toy vocabulary smaller than A
            fill = N_ALTERNATIVES - alt_ids.size(1)
            alt_ids = torch.cat([alt_ids, alt_ids[:, :1].expand(-1, fill)], dim=1)
            alt_lp = torch.cat([alt_lp, torch.full_like(alt_lp[:, :1], float("-inf")).expand(-1, fill)], dim=1)
        self.tokens = torch.cat([self.tokens, chosen[:, None]], dim=1)
        self.probs = torch.cat([self.probs, log_probs.gather(1, chosen[:, None]).exp()], dim=1)
        self.alt_ids = torch.cat([self.alt_ids, alt_ids[:, None]], dim=1)
        self.alt_probs = torch.cat([self.alt_probs, alt_lp.exp()[:, None]], dim=1)

    def select(self, index: Tensor) -> "StepLog":
        """A new log holding rows `index` of this one (how beams inherit their parents' history)."""
        out = StepLog(0, self.tokens.device)
        for name in ("tokens", "probs", "alt_ids", "alt_probs"):
            setattr(out, name, getattr(self, name).index_select(0, index))
        return out

    def hypothesis(self, row: int, length: int, eos_id: int, score: float) -> Hypothesis:
        """The first `length` steps of `row` as a Hypothesis (tokens stop before </s>)."""
        toks = self.tokens[row, :length].tolist()
        probs = self.probs[row, :length].tolist()
        alt_ids, alt_probs = self.alt_ids[row, :length].tolist(), self.alt_probs[row, :length].tolist()
        steps = [
            Step(t, p, [(a, q) for a, q in zip(ids, ps) if q > 0.0])
            for t, p, ids, ps in zip(toks, probs, alt_ids, alt_probs)
        ]
        return Hypothesis([t for t in toks if t != eos_id], steps, score)


def _forbid_special(log_probs: Tensor, cfg) -> Tensor:
    """<pad> and <s> are never generated."""
    log_probs = log_probs.clone()
    log_probs[:, [cfg.pad_id, cfg.bos_id]] = float("-inf")
    return log_probs


# -----------------------------------------------------------------------------
# One token at a time: greedy and sampling share the loop


def _decode_one_path(model, src: Tensor, max_len: int, choose: Callable[[Tensor], Tensor]) -> list[Hypothesis]:
    cfg = model.cfg
    B = src.size(0)
    memory = model.encode(src)  # (B, S, D)
    cache = model.new_cache(src)
    tokens = torch.full((B, 1), cfg.bos_id, dtype=torch.long, device=src.device)  # (B, 1)
    log = StepLog(B, src.device)
    score = torch.zeros(B, device=src.device)
    rows = torch.arange(B)  # which sentence each batch row is decoding
    hyps: list[Hypothesis | None] = [None] * B
    for t in range(max_len):
        log_probs = _forbid_special(model.decode_step(tokens, memory, cache), cfg)  # (n, V)
        chosen = choose(log_probs)  # (n,)
        log.append(log_probs, chosen)
        score += log_probs.gather(1, chosen[:, None]).squeeze(1)
        ended = chosen.eq(cfg.eos_id) | (t == max_len - 1)  # (n,)
        for i in ended.nonzero().flatten().tolist():
            hyps[int(rows[i])] = log.hypothesis(i, t + 1, cfg.eos_id, float(score[i]))
        if ended.all():
            break
        if ended.any():  # finished sentences leave the batch, their cache rows too
            keep = (~ended).nonzero().squeeze(1)  # (n',)
            memory, score, rows, chosen = memory.index_select(0, keep), score[keep], rows[keep], chosen[keep]
            cache.reorder(keep, cross=True)
            log = log.select(keep)
        tokens = chosen[:, None]  # (n, 1): only the new token; the cache holds the rest
    return hyps


@torch.inference_mode()
def greedy(model, src: Tensor, max_len: int) -> list[Hypothesis]:
    """Pick the most probable token at every step. src (B, S) -> one Hypothesis per row."""
    return _decode_one_path(model, src, max_len, lambda log_probs: log_probs.argmax(dim=-1))


def filter_logits(log_probs: Tensor, temperature: float, top_k: int = 0, top_p: float = 1.0) -> Tensor:
    """Scaled logits with everything outside the top-k / nucleus (top-p) set at -inf. (B, V) -> (B, V)."""
    logits = log_probs / temperature
    if top_k > 0:
        kth = logits.topk(min(top_k, logits.size(-1)), dim=-1).values[:, -1:]  # (B, 1)
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, order = logits.sort(dim=-1, descending=True)  # (B, V)
        cum = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        outside = cum - sorted_logits.softmax(dim=-1) >= top_p  # mass before this token already reaches p
        sorted_logits = sorted_logits.masked_fill(outside, float("-inf"))
        logits = torch.full_like(logits, float("-inf")).scatter(1, order, sorted_logits)
    return logits


@torch.inference_mode()
def sample(
    model,
    src: Tensor,
    max_len: int,
    generator: torch.Generator,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
) -> list[Hypothesis]:
    """Random sampling from softmax(logits / temperature), optionally restricted to top-k / top-p.

    The generator makes samples repeatable (never the global RNG). Temperature 0 is greedy.
    """
    if temperature == 0:
        return greedy(model, src, max_len)

    def choose(log_probs: Tensor) -> Tensor:
        probs = filter_logits(log_probs, temperature, top_k, top_p).softmax(dim=-1)  # (B, V)
        return torch.multinomial(probs, 1, generator=generator).squeeze(1)

    return _decode_one_path(model, src, max_len, choose)


# -----------------------------------------------------------------------------
# Beam search


@torch.inference_mode()
def beam_search(model, src: Tensor, max_len: int, beam_size: int = 4, length_penalty: float = 1.0) -> list[Hypothesis]:
    """Batched beam search; a finished hypothesis scores sum(log p) / length ** length_penalty.

    A sentence stops when `beam_size` hypotheses have ended with </s> (or at max_len). The KV cache
    follows the surviving beams through `index_select`.
    """
    cfg = model.cfg
    B, K, dev = src.size(0), beam_size, src.device
    memory = model.encode(src).repeat_interleave(K, dim=0)  # (B*K, S, D)
    cache = model.new_cache(src.repeat_interleave(K, dim=0))
    tokens = torch.full((B * K, 1), cfg.bos_id, dtype=torch.long, device=dev)  # (B*K, 1)
    log = StepLog(B * K, dev)
    scores = torch.zeros(B, K, device=dev)
    scores[:, 1:] = float("-inf")  # all beams start identical: keep only the first alive
    finished: list[list[Hypothesis]] = [[] for _ in range(B)]
    active = list(range(B))  # the sentences still decoding, in batch order; each owns K rows
    for t in range(max_len):
        n = len(active)
        log_probs = _forbid_special(model.decode_step(tokens, memory, cache), cfg)  # (n*K, V)
        V = log_probs.size(-1)
        cand = (scores[:, :, None] + log_probs.view(n, K, V)).view(n, K * V)  # (n, K*V)
        top_scores, top_idx = cand.topk(2 * K, dim=-1)  # (n, 2K): enough that K of them continue
        parent = (torch.arange(n, device=dev)[:, None] * K + top_idx // V).view(-1)  # (n*2K,) rows of this step
        tok = top_idx % V  # (n, 2K)
        cand_log = log.select(parent)
        cand_log.append(log_probs.index_select(0, parent), tok.view(-1))
        # Candidates ending now become finished hypotheses; only those ranked among the first K count.
        is_eos = tok.eq(cfg.eos_id) | (t == max_len - 1)  # at the bound, every candidate ends
        ends = is_eos & top_scores.isfinite()
        ends[:, K:] = False
        for i, j in ends.nonzero().tolist():
            hyps = finished[active[i]]
            if len(hyps) < K:
                score = float(top_scores[i, j]) / (t + 1) ** length_penalty
                hyps.append(cand_log.hypothesis(i * 2 * K + j, t + 1, cfg.eos_id, score))
        keep = [i for i in range(n) if len(finished[active[i]]) < K]  # sentences with K endings are done
        if not keep:
            break
        # The best K continuing candidates of every sentence still decoding become its beams.
        scores, order = top_scores.masked_fill(is_eos, float("-inf")).topk(K, dim=-1)  # (n, K)
        kept = torch.tensor(keep, device=dev)
        scores, order = scores[kept], order[kept]  # (n', K)
        rows = (kept[:, None] * 2 * K + order).view(-1)  # (n'*K,) rows of cand_log
        log = cand_log.select(rows)
        new_parent = parent.index_select(0, rows)
        if len(keep) < n:  # rows leave the batch: the encoder side follows
            memory = memory.index_select(0, new_parent)
        cache.reorder(new_parent, cross=len(keep) < n)
        tokens = tok.view(-1).index_select(0, rows)[:, None]  # (n'*K, 1)
        active = [active[i] for i in keep]
    return [max(hyps, key=lambda h: h.score) if hyps else Hypothesis([]) for hyps in finished]
