"""The translations of our held-out class sets that no one has judged yet: to read, and to add to data/judged.json.

    python tools/judge.py --checkpoint checkpoints/en-de > /tmp/to_read.jsonl

Translates the labelled set (transformer/training/class_sets.labelled: the first minute, the classroom corpus's
held-out sentences and word frames) greedily, as the class sets and the unsure marks' calibration do, and prints
one JSON line for each translation that is neither equal to a written reference nor already judged right or wrong:
{"en": ..., "translation": ..., "references": [...]}. A reader of the language reads each against the English and
adds it to data/judged.json under "right" or "wrong" (its "about" says how); the counts go to stderr.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from transformer import Translator  # noqa: E402
from transformer.training.class_sets import is_right, judged, labelled  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    tr = Translator.load(args.checkpoint, device="cpu")
    lang = tr.metrics.pair.split("-")[1]
    items = labelled(lang, with_judged=False)
    right, wrong = judged(lang, "right"), judged(lang, "wrong")
    seen = {en: right.get(en, []) + wrong.get(en, []) for en, _ in items}
    translations = tr.translate_batch([en for en, _ in items])
    unread = [(en, t.text, refs) for (en, refs), t in zip(items, translations)
              if not is_right(t.text, refs) and not is_right(t.text, seen[en])]
    for en, text, refs in unread:
        print(json.dumps({"en": en, "translation": text, "references": refs}, ensure_ascii=False))
    print(f"{args.checkpoint}: {len(items)} translations, {len(unread)} to read", file=sys.stderr)


if __name__ == "__main__":
    main()
