"""Attributions checked where the answer is known: on copy and reverse, output i comes from one source position.

Copy's output i is source token i; reverse's is source token n - 1 - i. A tiny model is trained on the task by the
live view's trainer (to >= 95 % held-out exact match), then each method's top-1 source token is compared with the
true one at every output position of held-out sequences, read teacher-forced with the correct target.

    python tools/alignment.py            # the table in docs/explanations.md (both tasks, 100 sequences each)
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from transformer.training import toy# noqa: E402
from transformer.interpret.attribution import METHODS, attribute, contributions  # noqa: E402
from transformer.training.live import ToySettings, train_toy  # noqa: E402

TRUE_SOURCE = {"copy": lambda n, i: i, "reverse": lambda n, i: n - 1 - i}  # (length, output position) -> source


def trained(task: str, seed: int = 0):
    """The live trainer's defaults on `task`: (model in eval mode, held-out exact match)."""
    *_, last = train_toy(ToySettings(task=task, seed=seed), report_every=10**9)  # one report: the end
    return last.model, last.accuracy


def top_sources(model, seq: list[int], task: str, ig_steps: int = 32) -> dict[str, list[tuple[int, int]]]:
    """Per method and output position: its top-1 source position among all source tokens (</s> included), and
    among the symbols only."""
    src, tgt = toy.make_batch(task, [seq], model.cfg)  # (1, n + 1), (1, n + 2)
    tgt_in = tgt[:, :-1]  # <s> and the target
    rolled = contributions(model, src, tgt_in)  # one hooked pass serves every position
    tops: dict[str, list[tuple[int, int]]] = {m: [] for m in METHODS}
    for i in range(len(seq)):
        found, _ = attribute(model, src, tgt_in, i, int(tgt[0, i + 1]), ig_steps=ig_steps, rolled=rolled)
        for m, a in found.items():
            tops[m].append((int(a.source.argmax()), int(a.source[: len(seq)].argmax())))
    return tops


def alignment_accuracy(model, task: str, seqs: list[list[int]], ig_steps: int = 32) -> dict[str, dict[str, float]]:
    """Per method, the share of output positions whose top-1 source token is the true one: "all" among every source
    token, </s> included; "symbols" among the sequence's symbols only (</s> marks the length, which reverse needs to
    know where to start, so a faithful method may rightly point at it)."""
    hits = {m: {"all": 0, "symbols": 0} for m in METHODS}
    total = 0
    for seq in seqs:
        n = len(seq)
        for m, tops in top_sources(model, seq, task, ig_steps).items():
            for i, (top, top_symbol) in enumerate(tops):
                hits[m]["all"] += top == TRUE_SOURCE[task](n, i)
                hits[m]["symbols"] += top_symbol == TRUE_SOURCE[task](n, i)
        total += n
    return {m: {k: v / total for k, v in h.items()} for m, h in hits.items()}


def held_out(n: int, settings: ToySettings = ToySettings(), seed: int = 12345) -> list[list[int]]:
    """Fresh sequences from their own generator (the shortest may also occur in training: there are only 1,000
    sequences of length 3)."""
    return toy.random_sequences(n, settings.n_symbols, settings.min_len, settings.max_len,
                                torch.Generator().manual_seed(seed))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sequences", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0, help="the trainer's seed")
    parser.add_argument("--ig-steps", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    rows = {}
    for task in TRUE_SOURCE:
        start = time.perf_counter()
        model, exact = trained(task, args.seed)
        trained_s = time.perf_counter() - start
        start = time.perf_counter()
        rows[task] = alignment_accuracy(model, task, held_out(args.sequences), args.ig_steps)
        print(f"{task}: held-out exact match {exact:.1%} (trained in {trained_s:.0f} s), attributions of "
              f"{args.sequences} sequences in {time.perf_counter() - start:.0f} s")
    print("\n| method | " + " | ".join(f"{t}: all tokens | {t}: symbols" for t in rows) + " |\n|---|"
          + "---:|" * 2 * len(rows))
    for m, label in METHODS.items():
        print(f"| {label} | " + " | ".join(f"{rows[t][m]['all']:.1%} | {rows[t][m]['symbols']:.1%}" for t in rows)
              + " |")

if __name__ == "__main__":
    main()
