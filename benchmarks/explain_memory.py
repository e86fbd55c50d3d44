"""Peak memory of "What the model used" at the longest output the page allows (<s> and max_len - 2 pieces).

    python benchmarks/explain_memory.py [--checkpoint checkpoints/en-de] [--ig-steps 64]

Prints the process's resident memory after loading and its peak while explaining the last output token (Linux's
ru_maxrss), for a teacher-forced output of max_len - 2 pieces.
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from transformer import Translator# noqa: E402
from transformer.interpret import analyses  # noqa: E402


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default="checkpoints/en-de")
    parser.add_argument("--ig-steps", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    tr = Translator.load(args.checkpoint, device="cpu")
    longest = tr.cfg.max_len - 2  # <s> and these fill the decoder's positions; its last step predicts </s>
    pieces = [i for i in range(4, tr.cfg.vocab_size) if tr.tokenizer.id_to_piece(i).startswith("▁")][:longest]
    translation = tr.tokenizer.decode(pieces)  # one word-initial piece per position
    text = "A man in a blue shirt is riding a bike down the street while two dogs run beside him."
    analyses.explain(tr, text, "Ein Mann.", 1, ig_steps=4)  # imports and first-call allocations, out of the way
    before = peak_mb()
    start = time.perf_counter()
    last = tr.pair_tensors(text, translation)[1].size(1) - 1  # the last step: </s>
    expl = analyses.explain(tr, text, translation, last, ig_steps=args.ig_steps)
    seconds = time.perf_counter() - start
    print(f"output {len(expl.labels['decoder_inputs'])} decoder inputs, IG {args.ig_steps} steps: "
          f"peak {peak_mb():.0f} MB (after loading and a short explanation: {before:.0f} MB), {seconds:.1f} s")


if __name__ == "__main__":
    main()
