"""python -m transformer bench: decoding and training speed, every ratio measured side by side in one run.

Compared: our KV-cached decoder, our decoder re-run on the whole prefix, Hugging Face's
MarianMTModel.generate with the same sizes (our weights copied in when the checkpoint is post-norm, as
Marian is) forced to generate exactly our output lengths, dynamic int8 (on the throughput run and at
batch 1), and for training torch.nn.Transformer of the same size on random unbucketed batches. Medians
after warm-up.

Then CTranslate2 running our exported weights (when ctranslate2 is installed): each engine and thread
setting in its own process, taking turns, because torch's and CTranslate2's OpenMP pools slow each
other down when they share one.
"""
from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor

from . import decoding
from .batching import pad_batch
from .model import KVCache, Transformer
from .training.data import batch_tensors, bucket_batches, make_example, read_pair
from .training.evaluate import score_translations
from .training.schedule import noam_lr
from .training.train import make_optimizer, train_step
from .translator import Translator, quantize_int8


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, math.ceil(q / 100 * len(xs)) - 1))]


def clock(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# -----------------------------------------------------------------------------
# Baselines


class PrefixCache(KVCache):
    """A cache that keeps only the prefix tokens, so the decoder is re-run over all of them."""

    prefix: Tensor | None = None


class Uncached:
    """Our model without the KV cache: every step re-runs the decoder over the whole prefix."""

    def __init__(self, model: Transformer):
        self.model, self.cfg = model, model.cfg

    def encode(self, src: Tensor) -> Tensor:
        return self.model.encode(src)

    def new_cache(self, src: Tensor) -> PrefixCache:
        return PrefixCache(self.cfg.n_decoder_layers, src.ne(self.cfg.pad_id))

    def decode_step(self, tokens: Tensor, memory: Tensor, cache: PrefixCache) -> Tensor:
        cache.prefix = tokens if cache.prefix is None else torch.cat([cache.prefix, tokens], dim=1)  # (B, t)
        m = self.model
        T = cache.prefix.size(1)
        x = m.decoder(m.positional(m.embed(cache.prefix)), memory, cache.memory_mask, m.causal_mask(T, tokens.device))
        return m.generator(x[:, -1])  # (B, V)


def marian_copy(model: Transformer):
    """transformers' MarianMTModel with our sizes; our weights and positional table when the model is post-norm."""
    from transformers import MarianConfig, MarianMTModel

    c = model.cfg
    config = MarianConfig(
        vocab_size=c.vocab_size, decoder_vocab_size=c.vocab_size, d_model=c.d_model,
        encoder_layers=c.n_encoder_layers, decoder_layers=c.n_decoder_layers,
        encoder_attention_heads=c.n_heads, decoder_attention_heads=c.n_heads,
        encoder_ffn_dim=c.d_ff, decoder_ffn_dim=c.d_ff, activation_function="relu",
        max_position_embeddings=c.max_len, scale_embedding=True, share_encoder_decoder_embeddings=True,
        tie_word_embeddings=True, pad_token_id=c.pad_id, eos_token_id=c.eos_id, bos_token_id=c.bos_id,
        decoder_start_token_id=c.bos_id, forced_eos_token_id=None, dropout=0.0, attention_dropout=0.0,
        activation_dropout=0.0,
    )
    hf = MarianMTModel(config).eval()
    if c.norm_first:  # Marian is post-norm: same sizes and cost, but our pre-norm weights would not fit
        return hf
    from .interop.marian import parameter_names

    ours = model.state_dict()
    state = {theirs: ours[name] for name, theirs in parameter_names(c).items() if name in ours}
    for side in ("encoder", "decoder"):
        state[f"model.{side}.embed_tokens.weight"] = ours["embed.table.weight"]
        state[f"model.{side}.embed_positions.weight"] = model.positional.pe[: c.max_len]
    state["lm_head.weight"] = ours["embed.table.weight"]
    missing, unexpected = hf.load_state_dict(state, strict=False)
    assert not unexpected and set(missing) <= {"final_logits_bias"}, (missing, unexpected)
    return hf


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


class TorchTransformer(torch.nn.Module):
    """The baseline: torch.nn.Transformer with the same sizes, tied embeddings and sinusoidal positions."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        ours = Transformer(cfg)
        self.embed, self.positional = ours.embed, ours.positional
        self.core = torch.nn.Transformer(cfg.d_model, cfg.n_heads, cfg.n_encoder_layers, cfg.n_decoder_layers,
                                         cfg.d_ff, cfg.dropout, batch_first=True, norm_first=cfg.norm_first)
        if not cfg.norm_first:  # nn.Transformer always adds final norms; post-norm (the paper) has none
            self.core.encoder.norm = self.core.decoder.norm = None
        self.encoder, self.decoder = self.core.encoder, self.core.decoder  # for train_speed's FLOP count

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        T = tgt.size(1)
        causal = torch.nn.Transformer.generate_square_subsequent_mask(T)
        x = self.core(self.positional(self.embed(src)), self.positional(self.embed(tgt)), tgt_mask=causal,
                      src_key_padding_mask=src.eq(self.cfg.pad_id), tgt_key_padding_mask=tgt.eq(self.cfg.pad_id),
                      memory_key_padding_mask=src.eq(self.cfg.pad_id), tgt_is_causal=True)
        return torch.log_softmax(F.linear(x, self.embed.table.weight), dim=-1)


# -----------------------------------------------------------------------------
# The run


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


def hf_generate(hf, src: Tensor, n: int, beams: int, pad_id: int) -> Tensor:
    """MarianMTModel.generate forced to exactly n new tokens."""
    return hf.generate(src, attention_mask=src.ne(pad_id), max_new_tokens=n, min_new_tokens=n, num_beams=beams,
                       do_sample=False)


@torch.inference_mode()
def decoding_latency(tr: Translator, cases: list[tuple[Tensor, int, int]], hf) -> dict:
    """Batch-1 greedy: cached vs uncached vs HF generate (forced to our lengths); beam 4: ours vs HF."""
    model, cfg = tr.model, tr.cfg
    same = None if cfg.norm_first else all(
        decoding.greedy(model, x, n)[0].tokens
        == [t for t in hf.generate(x, max_new_tokens=n, do_sample=False)[0, 1:].tolist() if t != cfg.eos_id]
        for x, n, _ in cases[:5])
    uncached = Uncached(model)
    ours = latency(lambda c: decoding.greedy(model, c[0], c[1]), cases)
    slow = latency(lambda c: decoding.greedy(uncached, c[0], c[1]), cases)
    theirs = latency(lambda c: hf_generate(hf, c[0], c[1], 1, cfg.pad_id), cases)
    beam_ours = latency(lambda c: decoding.beam_search(model, c[0], step_limit(tr, c[0]), 4, 1.0), cases)
    beam_theirs = latency(lambda c: hf_generate(hf, c[0], c[2], 4, cfg.pad_id), cases)
    return {
        "hf_weights_copied": not cfg.norm_first,
        "hf_same_greedy_tokens": same,
        "greedy_latency_ms": {"ours": ours, "ours_uncached": slow, "hf": theirs},
        "beam4_latency_ms": {"ours": beam_ours, "hf": beam_theirs},
        "greedy_speedup_vs_uncached": slow["p50_ms"] / ours["p50_ms"],
        "greedy_speedup_vs_hf": theirs["p50_ms"] / ours["p50_ms"],
        "beam_speedup_vs_hf": beam_theirs["p50_ms"] / beam_ours["p50_ms"],
    }


def throughput(tr: Translator, texts: list[str], hf) -> dict:
    """Batched beam 4. Ours: inputs sorted by length, batches of 64. HF: the same sentences grouped by the length
    we generated, so each batch can be forced to exactly that many tokens."""
    t0 = time.perf_counter()
    steps = [len(t.steps) for t in tr.translate_batch(texts, "beam", beam_size=4, batch_size=64)]
    t_ours = time.perf_counter() - t0
    groups: dict[int, list[list[int]]] = {}
    for i in sorted(range(len(texts)), key=lambda i: len(tr.source_ids(texts[i])[0])):
        groups.setdefault(steps[i], []).append(tr.source_ids(texts[i])[0])

    def hf_all():
        with torch.inference_mode():
            for n, members in groups.items():
                for k in range(0, len(members), 64):
                    hf_generate(hf, pad_batch(members[k : k + 64], tr.cfg.pad_id), n, 4, tr.cfg.pad_id)  # (B, S)

    t_hf = clock(hf_all)
    return {
        "throughput": {"sentences": len(texts), "ours_sentences_per_s": len(texts) / t_ours,
                       "ours_tokens_per_s": sum(steps) / t_ours, "hf_sentences_per_s": len(texts) / t_hf,
                       "hf_tokens_per_s": sum(steps) / t_hf},
        "throughput_speedup_vs_hf": t_hf / t_ours,
    }


def int8_comparison(tr: Translator, texts: list[str], cases: list, val_src: list[str], val_ref: list[str]) -> dict:
    """Dynamic int8 of the large Linear layers: speed on the throughput run and at batch 1, and val BLEU."""
    tr8 = Translator(quantize_int8(tr.model), tr.tokenizer, precision="int8")
    times: dict[str, list[float]] = {"fp32": [], "int8": []}
    tr8.translate_batch(texts[:16], "beam", beam_size=4)  # warm-up: the int8 kernels' first call costs extra
    for _ in range(3):  # alternating, so that a noisy neighbour hits both alike
        for name, t in (("int8", tr8), ("fp32", tr)):
            times[name].append(clock(lambda: t.translate_batch(texts, "beam", beam_size=4, batch_size=64)))
    with torch.inference_mode():
        int8 = latency(lambda c: decoding.greedy(tr8.model, c[0], c[1]), cases)
        fp32 = latency(lambda c: decoding.greedy(tr.model, c[0], c[1]), cases)
    bleu32 = score_translations([t.text for t in tr.translate_batch(val_src, "greedy")], val_ref)["bleu"]
    bleu8 = score_translations([t.text for t in tr8.translate_batch(val_src, "greedy")], val_ref)["bleu"]
    return {
        "int8_speedup": statistics.median(times["fp32"]) / statistics.median(times["int8"]),
        "int8_speedup_batch1": fp32["p50_ms"] / int8["p50_ms"],
        "int8_bleu": {"fp32": bleu32, "int8": bleu8, "sentences": len(val_src)},
        "int8_bleu_delta": bleu8 - bleu32,
    }


def training_speed(tr: Translator, train_src: list[str], train_tgt: list[str], n_batches: int,
                   max_tokens: int = 4096) -> dict:
    """Our trainer's step on bucketed batches vs torch.nn.Transformer of the same size on random unbucketed ones."""
    tok, cfg = tr.tokenizer, tr.cfg
    examples = [make_example(tok.encode(s), tok.encode(t), cfg) for s, t in zip(train_src, train_tgt)]
    buckets = bucket_batches(examples, max_tokens, seed=0)
    ours_batches = [batch_tensors(examples, b, cfg.pad_id) for b in buckets[:n_batches]]
    per_batch = round(statistics.mean(len(b) for b in buckets))
    shuffled = torch.randperm(len(examples), generator=torch.Generator().manual_seed(0)).tolist()
    random_batches = [shuffled[k : k + per_batch] for k in range(0, per_batch * n_batches, per_batch)]
    base_batches = [batch_tensors(examples, b, cfg.pad_id) for b in random_batches if b]
    train_cfg = type(cfg)(**{**cfg.to_dict(), "dropout": 0.1})
    peak = gemm_peak_flops()
    ours_tps, ours_flops = train_speed(Transformer(train_cfg), ours_batches)
    base_tps, _ = train_speed(TorchTransformer(train_cfg), base_batches)
    return {
        "training": {"ours_tokens_per_s": ours_tps, "baseline_tokens_per_s": base_tps,
                     "gemm_peak_gflops": peak / 1e9, "ours_model_gflops": ours_flops / 1e9},
        "train_speedup_vs_baseline": ours_tps / base_tps,
        "mfu": ours_flops / peak,
    }


def run(checkpoint: str, data_dir: str, quick: bool = False, threads: int = 0) -> dict:
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
    hf = marian_copy(tr.model)
    cases = batch1_cases(tr, val_src[:n_latency])
    texts = test_src[:n_throughput]
    result: dict = {"checkpoint": checkpoint, "threads": torch.get_num_threads(), "quick": quick}
    result |= decoding_latency(tr, cases, hf)
    result |= throughput(tr, texts, hf)
    result |= int8_comparison(tr, texts, cases, val_src[:n_bleu], val_ref[:n_bleu])
    result |= training_speed(tr, train_src[:n_train], train_tgt[:n_train], n_batches)
    engines = engine_turns(checkpoint, val_src[:n_latency], texts)  # CTranslate2 on the same weights
    if engines is not None:
        result["engines"] = engines
        for key in ENGINE_KEYS:
            result[key] = engines[key]
    return result


ENGINE_KEYS = ("greedy_ms_1thread", "greedy_ms_2threads", "ct2_greedy_speedup", "ct2_throughput_speedup",
               "ct2_int8_greedy_speedup", "ct2_int8_throughput_speedup")


# -----------------------------------------------------------------------------
# Engines side by side, each in its own process

# (engine, compute type, CTranslate2 workers, intra-op threads): every setting tried on this machine
ENGINE_SETTINGS = [("ours", "float32", 1, 1), ("ours", "float32", 1, 2)] + [
    ("ct2", compute, workers, threads)
    for compute in ("float32", "int8") for workers, threads in ((1, 1), (1, 2), (2, 1))]


def ours_measure(checkpoint: str, sentences: list[str], throughput: list[str], intra_threads: int = 2,
                 rounds: int = 3, **_) -> dict:
    """What ct2_engine.measure measures, for our decoder: batch-1 greedy p50 (ms) and beam-4 sentences/s."""
    torch.set_num_threads(intra_threads)
    tr = Translator.load(checkpoint, device="cpu")
    ids = [torch.tensor([tr.source_ids(s)[0]]) for s in sentences]  # (1, S)
    cases = [(x, decoding.DecodeOptions().length_limit(x.size(1), tr.cfg.max_len)) for x in ids]
    with torch.inference_mode():
        p50s = [latency(lambda c: decoding.greedy(tr.model, *c), cases, warmup=3 if r == 0 else 0)["p50_ms"]
                for r in range(rounds)]
    tr.translate_batch(throughput[:64], "beam", beam_size=4)
    seconds = [clock(lambda: tr.translate_batch(throughput, "beam", beam_size=4, batch_size=64)) for _ in range(rounds)]
    return {"greedy_p50_ms": statistics.median(p50s), "beam4_sentences_per_s": len(throughput) / min(seconds)}


def run_job(command: list[str], job: dict, job_file: Path, cwd: Path, threads: int) -> dict:
    """Run one engine turn in its own process. The job goes in a file (a thousand sentences overflow one command-line
    argument); a child that fails raises with the end of its stderr."""
    job_file.write_text(json.dumps(job))
    done = subprocess.run(command + [str(job_file)], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "OMP_NUM_THREADS": str(threads)})
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[1:])} failed with exit code {done.returncode}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def engine_turns(checkpoint: str, sentences: list[str], throughput: list[str], turns: int = 2) -> dict | None:
    """Every ENGINE_SETTINGS row in a fresh process, all rows in turn, `turns` times; None without ctranslate2."""
    from .interop.export import export

    here = Path(__file__).resolve().parent
    with tempfile.TemporaryDirectory() as tmp:
        try:
            model_dir = export(checkpoint, Path(tmp) / "ct2")
        except ValueError as e:  # ctranslate2 missing, or a checkpoint it cannot express
            print(f"(CTranslate2 columns skipped: {e})", file=sys.stderr)
            return None
        runs: dict[tuple, list[dict]] = {}
        for _ in range(turns):
            for engine, compute, workers, threads in ENGINE_SETTINGS:
                job = {"checkpoint": str(checkpoint), "model": str(model_dir), "sentences": sentences,
                       "throughput": throughput, "compute_type": compute, "inter_threads": workers,
                       "intra_threads": threads}
                command = ([sys.executable, str(here / "interop" / "ct2_engine.py")] if engine == "ct2"
                           else [sys.executable, "-m", "transformer.bench"])
                result = run_job(command, job, Path(tmp) / "job.json", here.parent, threads)
                runs.setdefault((engine, compute, workers, threads), []).append(result)
    rows = [{"engine": e, "compute_type": c, "workers": w, "threads": t,
             "greedy_p50_ms": statistics.median(r["greedy_p50_ms"] for r in rs),
             "beam4_sentences_per_s": statistics.median(r["beam4_sentences_per_s"] for r in rs)}
            for (e, c, w, t), rs in runs.items()]

    def best(engine: str, compute: str) -> tuple[dict, dict]:
        mine = [r for r in rows if r["engine"] == engine and r["compute_type"] == compute]
        return (min(mine, key=lambda r: r["greedy_p50_ms"]), max(mine, key=lambda r: r["beam4_sentences_per_s"]))

    (ours_g, ours_t), (ct2_g, ct2_t) = best("ours", "float32"), best("ct2", "float32")
    int8_g, int8_t = best("ct2", "int8")
    by_threads = {r["threads"]: r["greedy_p50_ms"] for r in rows if r["engine"] == "ours"}
    return {
        "rows": rows,
        "best": {"ours_greedy": ours_g, "ours_throughput": ours_t, "ct2_greedy": ct2_g, "ct2_throughput": ct2_t,
                 "ct2_int8_greedy": int8_g, "ct2_int8_throughput": int8_t},
        "greedy_ms_1thread": by_threads[1],
        "greedy_ms_2threads": by_threads[2],
        "ct2_greedy_speedup": ours_g["greedy_p50_ms"] / ct2_g["greedy_p50_ms"],
        "ct2_throughput_speedup": ct2_t["beam4_sentences_per_s"] / ours_t["beam4_sentences_per_s"],
        "ct2_int8_greedy_speedup": ours_g["greedy_p50_ms"] / int8_g["greedy_p50_ms"],
        "ct2_int8_throughput_speedup": int8_t["beam4_sentences_per_s"] / ours_t["beam4_sentences_per_s"],
    }


def table(r: dict) -> str:
    g, b, th, tr_ = r["greedy_latency_ms"], r["beam4_latency_ms"], r["throughput"], r["training"]
    rows = [
        ("batch-1 greedy p50 / p95 (ms)", f"ours {g['ours']['p50_ms']:.1f} / {g['ours']['p95_ms']:.1f}",
         f"uncached {g['ours_uncached']['p50_ms']:.1f} / {g['ours_uncached']['p95_ms']:.1f}",
         f"HF {g['hf']['p50_ms']:.1f} / {g['hf']['p95_ms']:.1f}"),
        ("batch-1 beam 4 p50 / p95 (ms)", f"ours {b['ours']['p50_ms']:.1f} / {b['ours']['p95_ms']:.1f}", "",
         f"HF {b['hf']['p50_ms']:.1f} / {b['hf']['p95_ms']:.1f}"),
        (f"beam 4 throughput, {th['sentences']} sentences", f"ours {th['ours_sentences_per_s']:.1f} sent/s, "
         f"{th['ours_tokens_per_s']:.0f} tok/s", "", f"HF {th['hf_sentences_per_s']:.1f} sent/s, {th['hf_tokens_per_s']:.0f} tok/s"),
        ("training (real target tokens/s)", f"ours {tr_['ours_tokens_per_s']:.0f}", "",
         f"nn.Transformer {tr_['baseline_tokens_per_s']:.0f}"),
    ]
    lines = [f"{a:<38} {b_:<34} {c:<24} {d}" for a, b_, c, d in rows]
    lines.append("")
    for key in ("greedy_speedup_vs_uncached", "greedy_speedup_vs_hf", "beam_speedup_vs_hf", "throughput_speedup_vs_hf",
                "int8_speedup", "int8_speedup_batch1", "int8_bleu_delta", "train_speedup_vs_baseline", "mfu"):
        lines.append(f"{key:<30} {r[key]:.3f}")
    if "engines" in r:
        lines.append("")
        lines.append(f"{'engine':<8} {'weights':<8} {'workers x threads':<18} "
                     f"{'greedy p50 ms':>14} {'beam 4 sent/s':>14}")
        for row in r["engines"]["rows"]:
            lines.append(f"{row['engine']:<8} {row['compute_type']:<8} {row['workers']} x {row['threads']:<14} "
                         f"{row['greedy_p50_ms']:>14.2f} {row['beam4_sentences_per_s']:>14.1f}")
        for key in ENGINE_KEYS:
            lines.append(f"{key:<30} {r[key]:.3f}")
    lines.append(f"(GEMM peak {tr_['gemm_peak_gflops']:.0f} GFLOP/s; our weights copied into HF: {r['hf_weights_copied']}, "
                 f"same greedy tokens: {r['hf_same_greedy_tokens']}; HF is forced to our output lengths)")
    return "\n".join(lines)


def main(checkpoint: str, data_dir: str, quick: bool, threads: int) -> None:
    r = run(checkpoint, data_dir, quick, threads)
    print(table(r))
    print(json.dumps(r))


if __name__ == "__main__":  # one engine turn of engine_turns, in its own process: the job file is the argument
    print(json.dumps(ours_measure(**json.loads(Path(sys.argv[1]).read_text()))))
