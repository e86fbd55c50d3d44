"""How well a checkpoint knows the classroom corpus's held-out everyday words, by how often the corpora say them.

    python tools/rare_words.py --checkpoint checkpoints/en-de --data-dir ../shared/data

The held-out words of data/classroom/words.tsv are never trained in their frames: what the model knows of them
comes from the corpora. Each word's frames are translated greedily and counted right as the class sets count them
(a written reference or a translation judged right, data/judged.json); the words are grouped by how often the
corpora's English training sentences hold them (the word, or with -s / -es; a phrase as a whole).
"""
from __future__ import annotations

import argparse
import collections
import gzip
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from transformer import Translator  # noqa: E402
from transformer.training.class_sets import CLASSROOM, rightness  # noqa: E402
from transformer.training.data import held_out, word_frames  # noqa: E402

BINS = ((0, 10, "fewer than 10"), (10, 100, "10 to 99"), (100, None, "100 or more"))


def occurrences(english: str, words: collections.Counter, text: str) -> int:
    """How many times the corpora's English says `english` (lowercase): a word with its plurals, a phrase whole."""
    w = english.lower()
    if " " in w:
        return len(re.findall(r"\b" + re.escape(w) + r"\b", text))
    return words[w] + words[w + "s"] + words[w + "es"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--data-dir", type=Path, required=True, help="the folder holding multi30k/ and tatoeba/")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    tr = Translator.load(args.checkpoint, device="cpu")
    lang = tr.metrics.pair.split("-")[1]
    files = [args.data_dir / "multi30k" / "train.en.gz"] + sorted((args.data_dir / "tatoeba").glob("*/train.en.gz"))
    text = "\n".join(gzip.open(f, "rt", encoding="utf-8").read().lower() for f in files)
    words = collections.Counter(re.findall(r"[a-z']+", text))

    src, tgt, keys = word_frames(CLASSROOM / "words.tsv", lang)
    frames: dict[str, list[tuple[str, list[str]]]] = collections.defaultdict(list)
    for s, t, key in zip(src, tgt, keys):
        if held_out(key):
            refs = next((refs for en, refs in frames[key] if en == s), None)
            if refs is None:
                frames[key].append((s, [t]))
            else:
                refs.append(t)
    counts = {key: occurrences(key, words, text) for key in frames}
    print(f"{args.checkpoint}: {len(frames)} held-out words, in the English of {len(files)} training files")
    for low, high, name in BINS:
        keys = [k for k in frames if counts[k] >= low and (high is None or counts[k] < high)]
        items = [item for k in keys for item in frames[k]]
        hyps = [t.text for t in tr.translate_batch([en for en, _ in items])] if items else []
        r = rightness(items, hyps, lang)
        print(f"  said {name:>13} times: {len(keys):3d} words, {r['right_judged']} of {len(items)} frames right "
              f"({100 * r['right_judged'] / max(1, len(items)):.0f} %; {r['right']} by the written references)")


if __name__ == "__main__":
    main()
