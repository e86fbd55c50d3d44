"""Our decoder and trainer beside other engines on the same machine, every ratio measured in one run.

    python benchmarks/engines.py --checkpoint checkpoints/en-de --data-dir ../shared/data/multi30k [--quick] [--threads 2]

- Hugging Face's MarianMTModel.generate with our sizes (our weights copied in when the checkpoint is post-norm, as
  Marian is), forced to generate exactly our output lengths: batch-1 greedy and beam 4, and batched beam 4.
- torch.nn.Transformer of the same size, trained on random unbucketed batches, against our trainer's step on
  bucketed ones.
- CTranslate2 running our exported weights (when ctranslate2 is installed): each engine and thread setting in its
  own process, taking turns, because torch's and CTranslate2's OpenMP pools slow each other down when they share one.

Needs requirements-dev.txt (transformers; ctranslate2 optional). The library's own figures: python -m benchmarks.decoding.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from transformer import Transformer, Translator, decoding  # noqa: E402
from transformer.tokenizer import pad_batch  # noqa: E402
from benchmarks.decoding import (clock, decoding_latency, latency, step_limit, throughput,  # noqa: E402
                               train_speed, training_batches, workload)
from transformer.interop.marian import marian_copy  # noqa: E402


class TorchTransformer(torch.nn.Module):
    """The training baseline: torch.nn.Transformer with the same sizes, tied embeddings and sinusoidal positions."""

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
# Hugging Face's generate, forced to our lengths


def hf_generate(hf, src: Tensor, n: int, beams: int, pad_id: int) -> Tensor:
    """MarianMTModel.generate forced to exactly n new tokens."""
    return hf.generate(src, attention_mask=src.ne(pad_id), max_new_tokens=n, min_new_tokens=n, num_beams=beams,
                       do_sample=False)


@torch.inference_mode()
def hf_latency(tr: Translator, cases: list[tuple[Tensor, int, int]], hf) -> dict:
    """Batch-1 greedy and beam 4 through generate, at the lengths ours reached; whether greedy agrees token for
    token (when our weights were copied in)."""
    cfg = tr.cfg
    same = None if cfg.norm_first else all(
        decoding.greedy(tr.model, x, n)[0].tokens
        == [t for t in hf.generate(x, max_new_tokens=n, do_sample=False)[0, 1:].tolist() if t != cfg.eos_id]
        for x, n, _ in cases[:5])
    return {"hf_weights_copied": not cfg.norm_first, "hf_same_greedy_tokens": same,
            "greedy": latency(lambda c: hf_generate(hf, c[0], c[1], 1, cfg.pad_id), cases),
            "beam4": latency(lambda c: hf_generate(hf, c[0], c[2], 4, cfg.pad_id), cases)}


def hf_throughput(tr: Translator, texts: list[str], steps: list[int], hf) -> dict:
    """Batched beam 4: the sentences grouped by the length we generated, so each batch is forced to that length."""
    groups: dict[int, list[list[int]]] = {}
    for i in sorted(range(len(texts)), key=lambda i: len(tr.source_ids(texts[i])[0])):
        groups.setdefault(steps[i], []).append(tr.source_ids(texts[i])[0])

    def hf_all():
        with torch.inference_mode():
            for n, members in groups.items():
                for k in range(0, len(members), 64):
                    hf_generate(hf, pad_batch(members[k : k + 64], tr.cfg.pad_id), n, 4, tr.cfg.pad_id)  # (B, S)

    seconds = clock(hf_all)
    return {"hf_sentences_per_s": len(texts) / seconds, "hf_tokens_per_s": sum(steps) / seconds}


# -----------------------------------------------------------------------------
# CTranslate2 and our decoder, each setting in its own process

# (engine, compute type, CTranslate2 workers, intra-op threads): every setting tried on this machine
ENGINE_SETTINGS = [("ours", "float32", 1, 1), ("ours", "float32", 1, 2)] + [
    ("ct2", compute, workers, threads)
    for compute in ("float32", "int8") for workers, threads in ((1, 1), (1, 2), (2, 1))]
ENGINE_KEYS = ("greedy_ms_1thread", "greedy_ms_2threads", "ct2_greedy_speedup", "ct2_throughput_speedup",
               "ct2_int8_greedy_speedup", "ct2_int8_throughput_speedup")


def ours_measure(checkpoint: str, sentences: list[str], throughput: list[str], intra_threads: int = 2,
                 rounds: int = 3, **_) -> dict:
    """What ct2_engine.measure measures, for our decoder: batch-1 greedy p50 (ms) and beam-4 sentences/s."""
    torch.set_num_threads(intra_threads)
    tr = Translator.load(checkpoint, device="cpu")
    ids = [torch.tensor([tr.source_ids(s)[0]]) for s in sentences]  # (1, S)
    cases = [(x, step_limit(tr, x)) for x in ids]
    with torch.inference_mode():
        p50s = [latency(lambda c: decoding.greedy(tr.model, *c), cases, warmup=3 if r == 0 else 0)["p50_ms"]
                for r in range(rounds)]
    tr.translate_batch(throughput[:64], strategy="beam", beam_size=4)
    seconds = [clock(lambda: tr.translate_batch(throughput, strategy="beam", beam_size=4, batch_size=64)) for _ in range(rounds)]
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
    from transformer.interop.export import export

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
                command = ([sys.executable, str(ROOT / "transformer" / "interop" / "ct2_engine.py")] if engine == "ct2"
                           else [sys.executable, str(Path(__file__).resolve()), "--turn"])
                result = run_job(command, job, Path(tmp) / "job.json", ROOT, threads)
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


# -----------------------------------------------------------------------------
# The run: every engine on the same sentences, in one process (CTranslate2's in their own)


def run(checkpoint: str, data_dir: str, quick: bool = False, threads: int = 0) -> dict:
    w = workload(checkpoint, data_dir, quick, threads)
    tr, cases, texts = w.tr, w.cases, w.texts
    hf = marian_copy(tr.model)
    ours = decoding_latency(tr, cases)
    theirs = hf_latency(tr, cases, hf)
    ours_throughput, steps = throughput(tr, texts)
    hf_throughput_ = hf_throughput(tr, texts, steps, hf)
    ours_batches, random_batches = training_batches(tr, w.train_src, w.train_tgt, w.n_batches)
    train_cfg = type(tr.cfg)(**{**tr.cfg.to_dict(), "dropout": 0.1})
    ours_tps, _ = train_speed(Transformer(train_cfg), ours_batches)
    base_tps, _ = train_speed(TorchTransformer(train_cfg), random_batches)
    result = {
        "checkpoint": checkpoint, "threads": torch.get_num_threads(), "quick": quick,
        "hf_weights_copied": theirs["hf_weights_copied"], "hf_same_greedy_tokens": theirs["hf_same_greedy_tokens"],
        "greedy_latency_ms": {"ours": ours["greedy_latency_ms"]["ours"], "hf": theirs["greedy"]},
        "beam4_latency_ms": {"ours": ours["beam4_latency_ms"]["ours"], "hf": theirs["beam4"]},
        "throughput": ours_throughput | hf_throughput_,
        "training": {"ours_tokens_per_s": ours_tps, "baseline_tokens_per_s": base_tps},
        "greedy_speedup_vs_hf": theirs["greedy"]["p50_ms"] / ours["greedy_latency_ms"]["ours"]["p50_ms"],
        "beam_speedup_vs_hf": theirs["beam4"]["p50_ms"] / ours["beam4_latency_ms"]["ours"]["p50_ms"],
        "throughput_speedup_vs_hf": ours_throughput["ours_sentences_per_s"] / hf_throughput_["hf_sentences_per_s"],
        "train_speedup_vs_baseline": ours_tps / base_tps,
    }
    engines = engine_turns(checkpoint, w.val_src[: len(cases)], texts)  # CTranslate2 on the same weights
    if engines is not None:
        result["engines"] = engines
        result |= {key: engines[key] for key in ENGINE_KEYS}
    return result


def table(r: dict) -> str:
    g, b, th, tr_ = r["greedy_latency_ms"], r["beam4_latency_ms"], r["throughput"], r["training"]
    rows = [
        ("batch-1 greedy p50 / p95 (ms)", f"ours {g['ours']['p50_ms']:.1f} / {g['ours']['p95_ms']:.1f}",
         f"HF {g['hf']['p50_ms']:.1f} / {g['hf']['p95_ms']:.1f}"),
        ("batch-1 beam 4 p50 / p95 (ms)", f"ours {b['ours']['p50_ms']:.1f} / {b['ours']['p95_ms']:.1f}",
         f"HF {b['hf']['p50_ms']:.1f} / {b['hf']['p95_ms']:.1f}"),
        (f"beam 4 throughput, {th['sentences']} sentences", f"ours {th['ours_sentences_per_s']:.1f} sent/s",
         f"HF {th['hf_sentences_per_s']:.1f} sent/s"),
        ("training (real target tokens/s)", f"ours {tr_['ours_tokens_per_s']:.0f}",
         f"nn.Transformer {tr_['baseline_tokens_per_s']:.0f}"),
    ]
    lines = [f"{a:<38} {b_:<34} {c}" for a, b_, c in rows] + [""]
    lines += [f"{key:<30} {r[key]:.3f}" for key in ("greedy_speedup_vs_hf", "beam_speedup_vs_hf",
                                                    "throughput_speedup_vs_hf", "train_speedup_vs_baseline")]
    if "engines" in r:
        lines += ["", f"{'engine':<8} {'weights':<8} {'workers x threads':<18} {'greedy p50 ms':>14} {'beam 4 sent/s':>14}"]
        lines += [f"{row['engine']:<8} {row['compute_type']:<8} {row['workers']} x {row['threads']:<14} "
                  f"{row['greedy_p50_ms']:>14.2f} {row['beam4_sentences_per_s']:>14.1f}" for row in r["engines"]["rows"]]
        lines += [f"{key:<30} {r[key]:.3f}" for key in ENGINE_KEYS]
    lines.append(f"(our weights copied into HF: {r['hf_weights_copied']}, same greedy tokens: "
                 f"{r['hf_same_greedy_tokens']}; HF is forced to our output lengths)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "en-de"))
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data" / "multi30k"))
    parser.add_argument("--quick", action="store_true", help="fewer sentences and batches (about a minute)")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--turn", type=Path, help=argparse.SUPPRESS)  # one engine turn, in its own process
    args = parser.parse_args()
    if args.turn:
        print(json.dumps(ours_measure(**json.loads(args.turn.read_text()))))
        return
    r = run(args.checkpoint, args.data_dir, args.quick, args.threads)
    print(table(r))
    print(json.dumps(r))


if __name__ == "__main__":
    main()
