"""python -m benchmarks.decoding: our decoders' and trainer's speed, every ratio measured side by side in one run.

Batch-1 greedy with the KV cache against the same decoder re-run on the whole prefix (uncached), batch-1 beam 4,
batched beam-4 throughput, dynamic int8 (speed on both runs, and its val BLEU), and the trainer's step on bucketed
batches (tokens/s and the share of this machine's GEMM peak). Medians after warm-up.

Other engines (Hugging Face's MarianMTModel.generate, torch.nn.Transformer, CTranslate2) are compared in
benchmarks/engines.py, which reuses these measurements.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
import math
import statistics
import time

import torch
from torch import Tensor

from transformer import decoding
from transformer.decoding import WithoutCache
from transformer.model import Transformer
from transformer.training.data import batch_tensors, bucket_batches, make_example, read_pair
from transformer.training.evaluate import score_translations
from transformer.training.schedule import noam_lr
from transformer.training.train import make_optimizer, train_step
from transformer.translator import Translator, quantize_int8


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, math.ceil(q / 100 * len(xs)) - 1))]


def clock(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# -----------------------------------------------------------------------------
# Measurements


def latency(fn, inputs: list, warmup: int = 3) -> dict:
    for x in inputs[:warmup]:
        fn(x)
    times = [clock(lambda: fn(x)) for x in inputs]
    return {"p50_ms": 1000 * percentile(times, 50), "p95_ms": 1000 * percentile(times, 95), "n": len(times)}


def gemm_peak_flops(n: int = 1024, repeats: int = 20) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
    for _ in range(3):
        a @ b
    return 2 * n**3 / statistics.median(clock(lambda: a @ b) for _ in range(repeats))


def train_speed(model: Transformer, batches: list[tuple[Tensor, Tensor]], warmup: int = 3) -> tuple[float, float]:
    """(real target tokens/s, model FLOP/s) over the given batches, after `warmup` of them, with Adam and the
    paper's loss."""
    assert len(batches) > warmup, f"{len(batches)} batches leave none to time after {warmup} for warm-up"
    cfg = model.cfg
    model.train()
    opt = make_optimizer(model)
    enc_params = sum(p.numel() for p in model.encoder.parameters())
    dec_params = sum(p.numel() for p in model.decoder.parameters()) + model.embed.table.weight.numel()
    tokens = flops = seconds = 0.0
    for i, (src, tgt) in enumerate(batches):
        lr = noam_lr(i + 1, cfg.d_model, 4000)
        t = clock(lambda: train_step(model, opt, src, tgt, lr, 0.1, cfg.pad_id))
        if i >= warmup:
            n_tgt, n_src = int(tgt[:, 1:].ne(cfg.pad_id).sum()), int(src.ne(cfg.pad_id).sum())
            tokens, seconds = tokens + n_tgt, seconds + t
            flops += 6 * (enc_params * n_src + dec_params * n_tgt)
    model.eval()
    return tokens / seconds, flops / seconds


# -----------------------------------------------------------------------------
# The measurements, one function each; run() puts them side by side


def batch1_cases(tr: Translator, sentences: list[str]) -> list[tuple[Tensor, int, int]]:
    """(source (1, S), greedy steps, beam-4 steps) per sentence: the lengths the baselines are forced to."""
    ids = [torch.tensor([tr.source_ids(s)[0]]) for s in sentences]  # (1, S) each
    return [(x, len(decoding.greedy(tr.model, x, step_limit(tr, x))[0].steps),
             len(decoding.beam_search(tr.model, x, step_limit(tr, x), 4, 1.0)[0].steps)) for x in ids]


def step_limit(tr: Translator, src: Tensor) -> int:
    """The most output steps the page allows this source (DecodeOptions' automatic limit)."""
    return decoding.DecodeOptions().length_limit(src.size(1), tr.cfg.max_len)


def int8_comparison(tr: Translator, texts: list[str], cases: list, val_src: list[str], val_ref: list[str]) -> dict:
    """Dynamic int8 of the large Linear layers: speed on the throughput run and at batch 1, and val BLEU."""
    tr8 = Translator(quantize_int8(tr.model), tr.tokenizer, precision="int8")
    times: dict[str, list[float]] = {"fp32": [], "int8": []}
    tr8.translate_batch(texts[:16], strategy="beam", beam_size=4)  # warm-up: the int8 kernels' first call costs extra
    for _ in range(3):  # alternating, so that a noisy neighbour hits both alike
        for name, t in (("int8", tr8), ("fp32", tr)):
            times[name].append(clock(lambda: t.translate_batch(texts, strategy="beam", beam_size=4, batch_size=64)))
    with torch.inference_mode():
        int8 = latency(lambda c: decoding.greedy(tr8.model, c[0], c[1]), cases)
        fp32 = latency(lambda c: decoding.greedy(tr.model, c[0], c[1]), cases)
    bleu32 = score_translations([t.text for t in tr.translate_batch(val_src, strategy="greedy")], val_ref)["bleu"]
    bleu8 = score_translations([t.text for t in tr8.translate_batch(val_src, strategy="greedy")], val_ref)["bleu"]
    return {
        "int8_speedup": statistics.median(times["fp32"]) / statistics.median(times["int8"]),
        "int8_speedup_batch1": fp32["p50_ms"] / int8["p50_ms"],
        "int8_bleu": {"fp32": bleu32, "int8": bleu8, "sentences": len(val_src)},
        "int8_bleu_delta": bleu8 - bleu32,
    }


@torch.inference_mode()
def decoding_latency(tr: Translator, cases: list[tuple[Tensor, int, int]]) -> dict:
    """Batch-1 greedy, cached vs uncached (both forced to the same lengths); batch-1 beam 4."""
    model = tr.model
    uncached = WithoutCache(model)
    ours = latency(lambda c: decoding.greedy(model, c[0], c[1]), cases)
    slow = latency(lambda c: decoding.greedy(uncached, c[0], c[1]), cases)
    beam = latency(lambda c: decoding.beam_search(model, c[0], step_limit(tr, c[0]), 4, 1.0), cases)
    return {"greedy_latency_ms": {"ours": ours, "ours_uncached": slow}, "beam4_latency_ms": {"ours": beam},
            "greedy_speedup_vs_uncached": slow["p50_ms"] / ours["p50_ms"]}


def throughput(tr: Translator, texts: list[str]) -> tuple[dict, list[int]]:
    """Batched beam 4, inputs sorted by length, batches of 64; and each sentence's output length."""
    t0 = time.perf_counter()
    steps = [len(t.steps) for t in tr.translate_batch(texts, strategy="beam", beam_size=4, batch_size=64)]
    seconds = time.perf_counter() - t0
    return {"sentences": len(texts), "ours_sentences_per_s": len(texts) / seconds,
            "ours_tokens_per_s": sum(steps) / seconds}, steps


def training_batches(tr: Translator, train_src: list[str], train_tgt: list[str], n_batches: int,
                     max_tokens: int = 4096) -> tuple[list, list]:
    """Our trainer's bucketed batches, and as many random unbucketed ones of the same mean size (a baseline's)."""
    tok, cfg = tr.tokenizer, tr.cfg
    examples = [make_example(tok.encode(s), tok.encode(t), cfg) for s, t in zip(train_src, train_tgt)]
    buckets = bucket_batches(examples, max_tokens, seed=0)
    per_batch = round(statistics.mean(len(b) for b in buckets))
    shuffled = torch.randperm(len(examples), generator=torch.Generator().manual_seed(0)).tolist()
    random_batches = [shuffled[k : k + per_batch] for k in range(0, per_batch * n_batches, per_batch)]
    return ([batch_tensors(examples, b, cfg.pad_id) for b in buckets[:n_batches]],
            [batch_tensors(examples, b, cfg.pad_id) for b in random_batches if b])


def training_speed(tr: Translator, batches: list) -> dict:
    """Our trainer's step (dropout 0.1, Adam, label smoothing) on bucketed batches: tokens/s and MFU."""
    train_cfg = type(tr.cfg)(**{**tr.cfg.to_dict(), "dropout": 0.1})
    peak = gemm_peak_flops()
    tps, flops = train_speed(Transformer(train_cfg), batches)
    return {"training": {"ours_tokens_per_s": tps, "gemm_peak_gflops": peak / 1e9, "ours_model_gflops": flops / 1e9},
            "mfu": flops / peak}


@dataclass
class Workload:
    """What a benchmark run measures on: the checkpoint and the sentences, cut to the run's size."""

    tr: Translator
    cases: list[tuple[Tensor, int, int]]  # batch-1 latency: val sentences with the lengths decoders are forced to
    texts: list[str]  # the throughput run: test sentences
    val_src: list[str]  # BLEU (int8 against fp32)
    val_ref: list[str]
    train_src: list[str]  # training steps
    train_tgt: list[str]
    n_batches: int


def workload(checkpoint: str, data_dir: str, quick: bool = False, threads: int = 0) -> Workload:
    """Load the checkpoint and its pair's Multi30k splits; quick: 20 latency and 200 throughput and BLEU
    sentences, 3,000 training examples in 12 batches (else 50, the whole test and val sets, 12,000 in 30)."""
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(0)
    tr = Translator.load(checkpoint, device="cpu")
    src_lang, tgt_lang = tr.metrics.pair.split("-")
    val_src, val_ref = read_pair(data_dir, "val", src_lang, tgt_lang)
    test_src, _ = read_pair(data_dir, "test", src_lang, tgt_lang)
    train_src, train_tgt = read_pair(data_dir, "train", src_lang, tgt_lang)
    n_latency, n_throughput, n_bleu, n_train, n_batches = (
        (20, 200, 200, 3000, 12) if quick else (50, len(test_src), len(val_src), 12000, 30))
    return Workload(tr, batch1_cases(tr, val_src[:n_latency]), test_src[:n_throughput], val_src[:n_bleu],
                    val_ref[:n_bleu], train_src[:n_train], train_tgt[:n_train], n_batches)


def run(checkpoint: str, data_dir: str, quick: bool = False, threads: int = 0) -> dict:
    w = workload(checkpoint, data_dir, quick, threads)
    result: dict = {"checkpoint": checkpoint, "threads": torch.get_num_threads(), "quick": quick}
    result |= decoding_latency(w.tr, w.cases)
    result["throughput"], _ = throughput(w.tr, w.texts)
    result |= int8_comparison(w.tr, w.texts, w.cases, w.val_src, w.val_ref)
    ours_batches, _ = training_batches(w.tr, w.train_src, w.train_tgt, w.n_batches)
    result |= training_speed(w.tr, ours_batches)
    return result


RATIOS = ("greedy_speedup_vs_uncached", "int8_speedup", "int8_speedup_batch1", "int8_bleu_delta", "mfu")


def table(r: dict) -> str:
    g, b, th, tr_ = r["greedy_latency_ms"], r["beam4_latency_ms"], r["throughput"], r["training"]
    rows = [
        ("batch-1 greedy p50 / p95 (ms)", f"cached {g['ours']['p50_ms']:.1f} / {g['ours']['p95_ms']:.1f}",
         f"uncached {g['ours_uncached']['p50_ms']:.1f} / {g['ours_uncached']['p95_ms']:.1f}"),
        ("batch-1 beam 4 p50 / p95 (ms)", f"{b['ours']['p50_ms']:.1f} / {b['ours']['p95_ms']:.1f}", ""),
        (f"beam 4 throughput, {th['sentences']} sentences", f"{th['ours_sentences_per_s']:.1f} sent/s, "
         f"{th['ours_tokens_per_s']:.0f} tok/s", ""),
        ("training (real target tokens/s)", f"{tr_['ours_tokens_per_s']:.0f}", ""),
    ]
    lines = [f"{a:<38} {b_:<34} {c}" for a, b_, c in rows] + [""]
    lines += [f"{key:<30} {r[key]:.3f}" for key in RATIOS]
    lines.append(f"(GEMM peak {tr_['gemm_peak_gflops']:.0f} GFLOP/s)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.decoding", description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default="checkpoints/en-de")
    parser.add_argument("--data-dir", default="../shared/data/multi30k")
    parser.add_argument("--quick", action="store_true", help="fewer sentences and batches (under 10 minutes)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: all cores)")
    args = parser.parse_args(argv)
    r = run(args.checkpoint, args.data_dir, args.quick, args.threads)
    print(table(r))
    print(json.dumps(r))


if __name__ == "__main__":
    main()
