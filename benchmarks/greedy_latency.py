"""Batch-1 greedy latency of a checkout, the figure the bench reports, for comparing two commits in turn.

    python benchmarks/greedy_latency.py [--code DIR] [--threads 2]

Loads checkpoints/en-de of the code in DIR (default: this checkout), decodes the first 50 val sentences
one at a time to the lengths they reach, and prints the median over 5 rounds of each round's p50 in ms.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--code", type=Path, default=ROOT, help="a checkout of this project")
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data" / "multi30k")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    sys.path.insert(0, str(args.code))
    import torch

    from transformer import Translator, greedy
    from transformer.training.data import read_pair

    torch.set_num_threads(args.threads)
    tr = Translator.load(args.code / "checkpoints" / "en-de", device="cpu")
    sentences, _ = read_pair(args.data_dir, "val", "en", "de")
    ids = [torch.tensor([tr.source_ids(s)[0]]) for s in sentences[:50]]
    lengths = [len(greedy(tr.model, x, 2 * x.size(1) + 10)[0].steps) for x in ids]

    def round_p50() -> float:
        times = []
        for x, n in zip(ids, lengths):
            t0 = time.perf_counter()
            greedy(tr.model, x, n)
            times.append(time.perf_counter() - t0)
        return 1000 * statistics.median(times)

    round_p50()  # warm-up
    print(f"batch-1 greedy p50 {statistics.median(round_p50() for _ in range(5)):.2f} ms")


if __name__ == "__main__":
    main()
