"""What the "What the model used" view costs on this machine: opening it, picking a token, and its parts.

    python benchmarks/used_cost.py [--threads 1]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import app  # noqa: E402
from playground import context  # noqa: E402
from transformer.interpret.attribution import contributions, integrated_gradients  # noqa: E402
from transformer.interpret import analyses  # noqa: E402

FIRST = "A man in a blue shirt is riding a bike down the street past two old women."
SECOND = "Two young girls are playing with a ball in the park near a fountain."


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1, help="as the app serves (app.py --threads)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    translators, _ = app.load_translators(ROOT / "checkpoints", "cpu")
    view = app.build_page(translators).views["used"]
    tr = translators["en-de"]
    first, second = (context.run(tr, "en-de", text) for text in (FIRST, SECOND))
    print(f"open the tab, first time after start-up: {timed(lambda: view.fill(first, {view.ig_steps: 64})):.2f} s")
    print(f"open the tab, a new translation ({len(second.translation.target_tokens) + 1} output tokens): "
          f"{timed(lambda: view.fill(second, {view.ig_steps: 64})):.2f} s")
    picks = [timed(lambda: view.pick_step(second, step, -1, 64)) for step in range(1, 8)]
    print(f"pick another output token (median of 7): {statistics.median(picks):.2f} s")
    print(f"the same token again, for anyone: {timed(lambda: view.pick_step(second, 3, -1, 64)) * 1000:.2f} ms")
    for steps in (16, 256):
        print(f"integrated-gradient steps {steps}: {timed(lambda: view.redraw(second, 3, -1, steps)):.2f} s")
    src, tgt = tr.pair_tensors(second.text, second.translation)
    parts = {"ALTI+ and rollout, every step": lambda: contributions(tr.model, src, tgt),
             "integrated gradients, 64 steps": lambda: integrated_gradients(tr.model, src, tgt, 3, int(tgt[0, 4])),
             "logit lens": lambda: analyses.lens(tr, second.text, second.translation)}
    for name, fn in parts.items():
        fn()
        print(f"{name}: {timed(fn) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
