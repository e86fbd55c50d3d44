"""benchmarks/engines.py: its baselines compute what ours computes, so its ratios compare like with like; each
measurement runs once on a tiny model."""
from __future__ import annotations

import sys

import pytest
import torch

from benchmarks.engines import TorchTransformer, hf_latency, hf_throughput, run_job
from transformer import Transformer, Translator
from benchmarks.decoding import batch1_cases, throughput

from conftest import random_tokens, synthetic_pairs, tiny_config


def test_torch_transformer_baseline_has_our_size():
    cfg = tiny_config()
    ours, base = Transformer(cfg), TorchTransformer(cfg)
    n = lambda m: sum(p.numel() for p in m.parameters())
    assert n(base) == n(ours)  # same layers, same widths, same tied embedding
    out = base(random_tokens(2, 6, 40), random_tokens(2, 4, 40, seed=1))
    torch.testing.assert_close(out.exp().sum(-1), torch.ones(2, 4), atol=1e-5, rtol=0)


def test_hf_generate_runs_at_our_lengths_and_gives_our_tokens(translator):
    pytest.importorskip("transformers")
    from transformer.interop.marian import marian_copy

    src, _ = synthetic_pairs(20)
    tr = Translator(translator.model, translator.tokenizer, name="tiny")
    hf = marian_copy(tr.model)
    r = hf_latency(tr, batch1_cases(tr, src[:3]), hf)
    assert r["hf_same_greedy_tokens"] is True  # post-norm: our weights in HF give our tokens
    assert r["greedy"]["p50_ms"] > 0 and r["beam4"]["p50_ms"] > 0
    ours, steps = throughput(tr, src[:10])
    theirs = hf_throughput(tr, src[:10], steps, hf)
    assert theirs["hf_sentences_per_s"] > 0 and theirs["hf_tokens_per_s"] > 0


def test_engine_jobs_travel_in_a_file_and_a_failing_child_shows_its_stderr(tmp_path):
    job = {"sentences": ["A man in a blue shirt is riding a bike down the street."] * 4000}  # 230 kB of JSON
    count = "import json, sys; job = json.load(open(sys.argv[1])); print(json.dumps({'n': len(job['sentences'])}))"
    assert run_job([sys.executable, "-c", count], job, tmp_path / "job.json", tmp_path, 1) == {"n": 4000}
    broken = "import sys; sys.exit('the engine could not start')"
    with pytest.raises(RuntimeError, match="exit code 1:\n.*the engine could not start"):
        run_job([sys.executable, "-c", broken], job, tmp_path / "job.json", tmp_path, 1)


@pytest.mark.slow
def test_engine_turns_run_every_setting_in_its_own_process(tokenizer, tmp_path):
    pytest.importorskip("ctranslate2", reason="ctranslate2 is not installed "
                        "(pip install -r requirements-ctranslate2.txt)")
    from benchmarks.engines import ENGINE_KEYS, ENGINE_SETTINGS, engine_turns
    from transformer import save_checkpoint

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
