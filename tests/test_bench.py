"""The benchmark's baselines compute what ours computes, so its ratios compare like with like."""
from __future__ import annotations

import pytest
import torch

from transformer import Transformer, Translator, greedy
from transformer.bench import TorchTransformer, Uncached, marian_copy, percentile

from conftest import random_tokens, tiny_config


def test_uncached_decoder_gives_the_cached_result(model):
    src = random_tokens(3, 7, 40)
    src[2, 4:] = 0
    fast, slow = greedy(model, src, 12), greedy(Uncached(model), src, 12)
    assert [h.tokens for h in fast] == [h.tokens for h in slow]
    for a, b in zip(fast, slow):
        assert a.score == pytest.approx(b.score, abs=1e-4)


def test_marian_with_our_weights_computes_our_log_probabilities():
    pytest.importorskip("transformers")
    torch.manual_seed(0)
    model = Transformer(tiny_config()).eval()
    hf = marian_copy(model)
    src, tgt = random_tokens(2, 7, 40), random_tokens(2, 5, 40, seed=1)
    src[1, 5:] = 0
    with torch.no_grad():
        ours = model(src, tgt)
        logits = hf(input_ids=src, attention_mask=src.ne(0), decoder_input_ids=tgt).logits
    torch.testing.assert_close(logits.log_softmax(-1), ours, atol=1e-4, rtol=1e-4)


def test_torch_transformer_baseline_has_our_size():
    cfg = tiny_config()
    ours, base = Transformer(cfg), TorchTransformer(cfg)
    n = lambda m: sum(p.numel() for p in m.parameters())
    assert n(base) == n(ours)  # same layers, same widths, same tied embedding
    out = base(random_tokens(2, 6, 40), random_tokens(2, 4, 40, seed=1))
    torch.testing.assert_close(out.exp().sum(-1), torch.ones(2, 4), atol=1e-5, rtol=0)


def test_percentile():
    xs = list(range(1, 101))
    assert percentile(xs, 50) == 50 and percentile(xs, 95) == 95 and percentile([3.0], 95) == 3.0


@pytest.mark.slow
def test_engine_turns_run_every_setting_in_its_own_process(tokenizer, tmp_path):
    pytest.importorskip("ctranslate2", reason="ctranslate2 is not installed "
                        "(pip install -r requirements-ctranslate2.txt)")
    from transformer import save_checkpoint
    from transformer.bench import ENGINE_KEYS, ENGINE_SETTINGS, engine_turns

    from conftest import synthetic_pairs

    torch.manual_seed(0)
    save_checkpoint(tmp_path / "en-de", Transformer(tiny_config(vocab_size=len(tokenizer))).eval(), tokenizer)
    texts = synthetic_pairs(8, seed=3)[0]
    r = engine_turns(str(tmp_path / "en-de"), texts[:3], texts, turns=1)
    assert [(x["engine"], x["compute_type"], x["workers"], x["threads"]) for x in r["rows"]] == ENGINE_SETTINGS
    assert all(x["greedy_p50_ms"] > 0 and x["beam4_sentences_per_s"] > 0 for x in r["rows"])
    ours = {x["threads"]: x["greedy_p50_ms"] for x in r["rows"] if x["engine"] == "ours"}
    assert (r["greedy_ms_1thread"], r["greedy_ms_2threads"]) == (ours[1], ours[2])
    best = r["best"]
    ratio = best["ours_greedy"]["greedy_p50_ms"] / best["ct2_greedy"]["greedy_p50_ms"]
    assert r["ct2_greedy_speedup"] == pytest.approx(ratio)
    assert best["ours_greedy"]["greedy_p50_ms"] == min(ours.values()) and set(ENGINE_KEYS) <= set(r)


def test_engine_jobs_travel_in_a_file_and_a_failing_child_shows_its_stderr(tmp_path):
    import sys

    from transformer.bench import run_job

    job = {"sentences": ["A man in a blue shirt is riding a bike down the street."] * 4000}  # 230 kB of JSON
    count = "import json, sys; job = json.load(open(sys.argv[1])); print(json.dumps({'n': len(job['sentences'])}))"
    assert run_job([sys.executable, "-c", count], job, tmp_path / "job.json", tmp_path, 1) == {"n": 4000}
    broken = "import sys; sys.exit('the engine could not start')"
    with pytest.raises(RuntimeError, match="exit code 1:\n.*the engine could not start"):
        run_job([sys.executable, "-c", broken], job, tmp_path / "job.json", tmp_path, 1)


# -----------------------------------------------------------------------------
# Each measurement of `python -m transformer bench`, once, on a tiny model: every figure it reports is there and
# positive, so a refactor that breaks one (an undefined name, a changed signature) fails here, not after minutes


@pytest.fixture
def measured(translator):
    from conftest import synthetic_pairs

    pytest.importorskip("transformers")
    src, tgt = synthetic_pairs(60)
    tr = Translator(translator.model, translator.tokenizer, name="tiny")
    return tr, src, tgt, marian_copy(tr.model)


def positive(d: dict, *keys: str) -> None:
    for key in keys:
        assert d[key] > 0, key


def test_bench_decoding_latency_compares_cached_uncached_and_hf(measured):
    from transformer.bench import batch1_cases, decoding_latency

    tr, src, _, hf = measured
    r = decoding_latency(tr, batch1_cases(tr, src[:3]), hf)
    positive(r, "greedy_speedup_vs_uncached", "greedy_speedup_vs_hf", "beam_speedup_vs_hf")
    assert r["hf_same_greedy_tokens"] is True  # post-norm: our weights in HF give our tokens
    assert set(r["greedy_latency_ms"]) == {"ours", "ours_uncached", "hf"}


def test_bench_throughput_runs_both_engines_over_the_same_sentences(measured):
    from transformer.bench import throughput

    tr, src, _, hf = measured
    r = throughput(tr, src[:10], hf)
    assert r["throughput"]["sentences"] == 10
    positive(r["throughput"], "ours_sentences_per_s", "hf_sentences_per_s")
    positive(r, "throughput_speedup_vs_hf")


def test_bench_int8_reports_speed_and_bleu(measured):
    from transformer.bench import batch1_cases, int8_comparison

    tr, src, tgt, _ = measured
    r = int8_comparison(tr, src[:8], batch1_cases(tr, src[:2]), src[:8], tgt[:8])
    positive(r, "int8_speedup", "int8_speedup_batch1")
    assert r["int8_bleu"]["sentences"] == 8 and r["int8_bleu_delta"] == r["int8_bleu"]["int8"] - r["int8_bleu"]["fp32"]


def test_bench_training_speed_against_torch_transformer(measured):
    from transformer.bench import training_speed

    tr, src, tgt, _ = measured
    r = training_speed(tr, src, tgt, n_batches=5, max_tokens=128)
    positive(r["training"], "ours_tokens_per_s", "baseline_tokens_per_s", "gemm_peak_gflops")
    positive(r, "train_speedup_vs_baseline", "mfu")
