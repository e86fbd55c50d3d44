"""Forty sentences a class says with words of the classroom corpus's second word list, translated greedily by
one or more checkpoints and counted right by their written references.

    python tools/second_list.py --checkpoint runs/from-f05445f/en-de --checkpoint checkpoints/en-de

The second list of data/classroom/words.tsv trains its words in short frames only ("I have a raccoon."); these
sentences (data/second_list_forty.json) use them elsewhere ("We saw a raccoon in the garden."), so they tell
whether a word learned in a frame is known in a sentence. Each uses a word on the trained side of the split and
none held out, and no sentence is in our classroom files or the corpora (tests/test_train.py). They were written,
with their references, before any model trained on the list had translated them. Printed per checkpoint: how many
are right, then each translation that no reference matched, for a reader.

With `--frames N`, also N of each list's trained frames (the third list's too, data/more_words.tsv) drawn at random
(the same for every checkpoint: seed 0), counted right by their written references: how well each list's words were
learned where they were taught. `--sentences data/third_list_forty.json` translates forty sentences with the third
list's words instead, and `--sentences data/calendar_thirty.json` thirty of months and seasons (the calendar
templates', augment.TEMPLATES["calendar"], said elsewhere).
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from transformer import Translator  # noqa: E402
from transformer.training.class_sets import is_right  # noqa: E402
from transformer.training.data import held_out, word_frames  # noqa: E402

SENTENCES = ROOT / "data" / "second_list_forty.json"
WORDS = ROOT / "data" / "classroom" / "words.tsv"
MORE_WORDS = ROOT / "data" / "more_words.tsv"  # the third list, trained whole (none of it held out)
SECOND_LIST_STARTS = "# More animals"  # the second list's first section, after the first list's words


def trained_frames(lang: str, n: int) -> dict[str, list[tuple[str, str]]]:
    """{"first list": [(English, reference)...], "second list": [...], "third list": [...]}: n trained frames
    of each, drawn at random (the third, data/more_words.tsv, is trained whole)."""
    lines = WORDS.read_text(encoding="utf-8").splitlines()
    start = lines.index(SECOND_LIST_STARTS)
    third = MORE_WORDS.read_text(encoding="utf-8").splitlines()
    drawn = {}
    for name, part in (("first list", lines[:start]), ("second list", lines[start:]), ("third list", third)):
        with tempfile.NamedTemporaryFile("w", suffix=".tsv", encoding="utf-8") as f:
            f.write("\n".join(part) + "\n")
            f.flush()
            src, tgt, words = word_frames(f.name, lang)
        pairs = [(s, t) for s, t, w in zip(src, tgt, words) if not held_out(w)]
        drawn[name] = random.Random(0).sample(pairs, min(n, len(pairs)))
    return drawn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", action="append", required=True, help="a checkpoint folder; may be repeated")
    ap.add_argument("--frames", type=int, default=0, help="also this many trained frames of each word list")
    ap.add_argument("--sentences", type=Path, default=SENTENCES,
                    help="the sentences to translate (data/third_list_forty.json: the third list's words; "
                         "data/calendar_thirty.json: months and seasons)")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    items = json.loads(args.sentences.read_text(encoding="utf-8"))
    for path in args.checkpoint:
        tr = Translator.load(path, device="cpu")
        lang = tr.metrics.pair.split("-")[1]
        hyps = [t.text for t in tr.translate_batch([item["en"] for item in items])]
        wrong = [(item["en"], hyp) for item, hyp in zip(items, hyps) if not is_right(hyp, item[lang])]
        print(f"{path}: {len(items) - len(wrong)} of {len(items)} right by the references")
        for en, hyp in wrong:
            print(f"  {en} -> {hyp}")
        for name, pairs in (trained_frames(lang, args.frames) if args.frames else {}).items():
            hyps = [t.text for t in tr.translate_batch([en for en, _ in pairs])]
            right = sum(is_right(hyp, [ref]) for hyp, (_, ref) in zip(hyps, pairs))
            print(f"  trained frames of the {name}: {right} of {len(pairs)} right by the references")


if __name__ == "__main__":
    main()
