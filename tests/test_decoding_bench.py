"""`python -m benchmarks.decoding`: its uncached baseline (decoding.WithoutCache) computes what ours computes, and each measurement runs once
on a tiny model with every figure it reports there and positive, so a refactor that breaks one (an undefined name,
a changed signature) fails here, not after minutes."""
from __future__ import annotations

import pytest

from transformer import Translator, greedy
from transformer.decoding import WithoutCache
from benchmarks.decoding import (batch1_cases, decoding_latency, int8_comparison, percentile, table,
                               throughput, training_batches, training_speed)

from conftest import random_tokens, synthetic_pairs


def test_uncached_decoder_gives_the_cached_result(model):
    src = random_tokens(3, 7, 40)
    src[2, 4:] = 0
    fast, slow = greedy(model, src, 12), greedy(WithoutCache(model), src, 12)
    assert [h.tokens for h in fast] == [h.tokens for h in slow]
    for a, b in zip(fast, slow):
        assert a.score == pytest.approx(b.score, abs=1e-4)


def test_percentile():
    xs = list(range(1, 101))
    assert percentile(xs, 50) == 50 and percentile(xs, 95) == 95 and percentile([3.0], 95) == 3.0


@pytest.fixture
def measured(translator):
    src, tgt = synthetic_pairs(60)
    return Translator(translator.model, translator.tokenizer, name="tiny"), src, tgt


def positive(d: dict, *keys: str) -> None:
    for key in keys:
        assert d[key] > 0, key


def test_every_measurement_once_and_the_table_of_them(measured):
    tr, src, tgt = measured
    cases = batch1_cases(tr, src[:3])
    r = {"checkpoint": "tiny", "threads": 1, "quick": True} | decoding_latency(tr, cases)
    positive(r, "greedy_speedup_vs_uncached")
    assert set(r["greedy_latency_ms"]) == {"ours", "ours_uncached"}
    r["throughput"], steps = throughput(tr, src[:10])
    assert r["throughput"]["sentences"] == 10 == len(steps) and all(n > 0 for n in steps)
    positive(r["throughput"], "ours_sentences_per_s", "ours_tokens_per_s")
    r |= int8_comparison(tr, src[:8], batch1_cases(tr, src[:2]), src[:8], tgt[:8])
    positive(r, "int8_speedup", "int8_speedup_batch1")
    assert r["int8_bleu"]["sentences"] == 8 and r["int8_bleu_delta"] == r["int8_bleu"]["int8"] - r["int8_bleu"]["fp32"]
    ours, baseline = training_batches(tr, src, tgt, n_batches=5, max_tokens=128)
    assert len(ours) == 5 and len(baseline) == 5
    r |= training_speed(tr, ours)
    positive(r["training"], "ours_tokens_per_s", "gemm_peak_gflops")
    positive(r, "mfu")
    assert "greedy_speedup_vs_uncached" in table(r) and "mfu" in table(r)
