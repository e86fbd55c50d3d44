"""The benchmark's baselines compute what ours computes, so its ratios compare like with like."""
from __future__ import annotations

import pytest
import torch

from transformer import Transformer, greedy
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
