"""What a checkpoint costs the page against another one: a translation with its hooked pass and the glance, as the
page's Translate makes them (playground.context.run, then glance.figure), on one thread, side by side in one run.

    python benchmarks/checkpoint_cost.py --before b0e78b9 [--pair en-de] [--repeats 5] [--parts] [--grow 1280:5:4]

--before: a commit whose checkpoints/PAIR is compared with the one in checkpoints/ (taken from git). The sentences:
the page's examples, the ten typed and the ten first-minute sentences (data/); each is timed for both
checkpoints in turn, alternating which goes first, and the median over sentences and repeats is printed.

--parts also prints where each click's time goes: decoding the translation, the hooked teacher-forced pass, the
glance. --grow D_FF:ENCODER:DECODER times, as "now", the checkpoint grown to that shape (train.grow, untrained: a
model's cost does not depend on its weights), to choose a shape before training one."""
from __future__ import annotations

import argparse
import dataclasses
import io
import json
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from playground import context  # noqa: E402
from playground.figures import glance  # noqa: E402
from transformer import Translator  # noqa: E402
from transformer.checkpoint import load_checkpoint, save_checkpoint  # noqa: E402
from transformer.training.train import grow  # noqa: E402
from transformer.words import WORDS  # noqa: E402

PARTS = ("decoding", "hooked pass", "glance")


def from_git(commit: str, pair: str, into: Path) -> Path:
    """checkpoints/PAIR as it was at `commit` (model, config, vocabulary, metrics, the words of its training pairs
    where it kept them; not its timeline)."""
    kept = subprocess.run(["git", "ls-tree", "--name-only", commit, f"checkpoints/{pair}/"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.split()
    names = [f"checkpoints/{pair}/{f}" for f in ("model.safetensors", "config.json", "spm.model", "metrics.json", WORDS)]
    names = [name for name in names if name in kept]
    archive = subprocess.run(["git", "archive", commit, *names], cwd=ROOT, check=True, capture_output=True).stdout
    tarfile.open(fileobj=io.BytesIO(archive)).extractall(into, filter="data")
    return into / "checkpoints" / pair


def grown(checkpoint: Path, shape: str, into: Path) -> Path:
    """`checkpoint` grown to `shape` ("d_ff:encoder layers:decoder layers"), written as a checkpoint in `into`."""
    d_ff, encoder, decoder = (int(n) for n in shape.split(":"))
    model, tokenizer, metrics = load_checkpoint(checkpoint)
    cfg = dataclasses.replace(model.cfg, d_ff=d_ff, n_encoder_layers=encoder, n_decoder_layers=decoder)
    into.mkdir(parents=True)
    save_checkpoint(into, grow(model, cfg), tokenizer, metrics, fp16=True)
    if (checkpoint / WORDS).is_file():  # what the page's checks under a translation read
        shutil.copy(checkpoint / WORDS, into / WORDS)
    return into


def timed(translator: Translator) -> Translator:
    """`translator`, its translate() keeping how long its last call took (`translate.seconds`): the click's decoding,
    timed inside the page's own context.run."""
    translate = translator.translate

    def timed_translate(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return translate(*args, **kwargs)
        finally:
            timed_translate.seconds = time.perf_counter() - t0

    translator.translate = timed_translate
    return translator


def once(translator: Translator, pair: str, text: str) -> list[float]:
    """Seconds of one click's parts (PARTS): context.run (its translate() timed apart: timed()), then the glance."""
    t0 = time.perf_counter()
    result = context.run(translator, pair, text)
    t1 = time.perf_counter()
    glance.figure(result)
    decoding = translator.translate.seconds
    return [decoding, t1 - t0 - decoding, time.perf_counter() - t1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--pair", default="en-de")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--parts", action="store_true", help="also the median of each part of the click")
    parser.add_argument("--grow", metavar="D_FF:ENCODER:DECODER", help="time the checkpoint grown to this shape")
    args = parser.parse_args()
    torch.set_num_threads(1)
    sentences = [s for name in ("assets/examples.json", "data/typed_ten.json", "data/first_ten.json")
                 for s in json.loads((ROOT / name).read_text(encoding="utf-8"))]
    with tempfile.TemporaryDirectory() as tmp:
        now = ROOT / "checkpoints" / args.pair
        if args.grow:
            now = grown(now, args.grow, Path(tmp) / "grown")
        models = {"before": timed(Translator.load(from_git(args.before, args.pair, Path(tmp)), device="cpu")),
                  "now": timed(Translator.load(now, device="cpu"))}
        seconds = {name: [] for name in models}
        for name, translator in models.items():  # warm-up: first calls and imports out of the way
            once(translator, args.pair, sentences[0])
        for r in range(args.repeats):
            for i, text in enumerate(sentences):
                order = list(models) if (r + i) % 2 == 0 else list(models)[::-1]
                for name in order:
                    seconds[name].append(once(models[name], args.pair, text))
    median = {name: statistics.median(sum(p) for p in s) * 1000 for name, s in seconds.items()}
    print(f"{args.pair}, {len(sentences)} sentences x {args.repeats}, one thread: translation + hooked pass + glance")
    for name, ms in median.items():
        parts = ", ".join(f"{part} {statistics.median(p[i] for p in seconds[name]) * 1000:.1f}"
                          for i, part in enumerate(PARTS))
        print(f"  {name:6s} median {ms:7.1f} ms" + (f"  (medians: {parts} ms)" if args.parts else ""))
    print(f"  now / before: {median['now'] / median['before']:.2f}x")


if __name__ == "__main__":
    main()
