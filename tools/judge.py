"""Our held-out class sets' translations that no one has judged yet: list them, and file a reader's verdicts.

    python tools/judge.py --checkpoint checkpoints/en-de > /tmp/to_read.jsonl     # list
    python tools/judge.py --file /tmp/to_read.jsonl                              # file them, once read

Listing translates the labelled set (transformer/training/class_sets.labelled: the first minute, the classroom
corpus's held-out sentences and word frames) greedily, as the class sets and the unsure marks' calibration do, and
prints one JSON line for each translation that neither equals a written reference nor was judged before:
{"lang", "en", "translation", "references", "verdict": null}. A reader of the language reads each against the
English and writes "right" or "wrong" into its verdict, by the rules in data/judged.json's "about"; --file adds
the lines with a verdict to data/judged.json (lines left null stay out) and writes it back one sentence a line.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from transformer.training import class_sets  # noqa: E402

VERDICTS = ("right", "wrong")


def unread(translator) -> list[dict]:
    """The labelled set's translations by `translator` that are neither a written reference nor judged."""
    is_right = class_sets.is_right
    lang = translator.metrics.pair.split("-")[1]
    items = class_sets.labelled(lang, with_judged=False)
    right, wrong = class_sets.judged(lang, "right"), class_sets.judged(lang, "wrong")
    translations = translator.translate_batch([en for en, _ in items])
    return [{"lang": lang, "en": en, "translation": t.text, "references": refs, "verdict": None}
            for (en, refs), t in zip(items, translations)
            if not is_right(t.text, refs) and not is_right(t.text, right.get(en, []) + wrong.get(en, []))]


def file_verdicts(lines: list[dict], path: Path) -> int:
    """Add the read lines (a verdict "right" or "wrong") to the judged file at `path`; returns how many were added.
    A sentence outside the labelled sets, a verdict that is neither, or one against an earlier verdict is refused
    with a plain message, and nothing is written."""
    data = json.loads(path.read_text(encoding="utf-8"))
    held = {lang: {en for en, _ in class_sets.labelled(lang, with_judged=False)} for lang in ("de", "fr")}
    added = 0
    for line in lines:
        lang, verdict = line.get("lang"), line.get("verdict")
        if verdict is None:
            continue
        readable = lang in held and line.get("en") in held[lang] and line.get("translation")
        if verdict not in VERDICTS or not readable:
            raise ValueError(f"cannot file {line!r}: a verdict is right or wrong, on a translation of a sentence of "
                             "the labelled sets")
        other = data.get(lang, {}).get(VERDICTS[verdict == "right"], {}).get(line["en"], [])
        if line["translation"] in other:
            raise ValueError(f"cannot file {line!r}: that translation was judged the other way before")
        texts = data.setdefault(lang, {}).setdefault(verdict, {}).setdefault(line["en"], [])
        if line["translation"] not in texts:
            texts.append(line["translation"])
            added += 1
    path.write_text(layout(data), encoding="utf-8")
    return added


def layout(data: dict) -> str:
    """data/judged.json as it is kept: "about" first, then each language's verdicts, one sentence a line, sorted."""
    dump = lambda x: json.dumps(x, ensure_ascii=False)  # noqa: E731
    blocks = [f' "about": {dump(data.get("about", ""))}']
    for lang in sorted(k for k in data if k != "about"):
        verdicts = []
        for verdict in VERDICTS:
            lines = [f"   {dump(en)}: {dump(texts)}" for en, texts in sorted(data[lang].get(verdict, {}).items())]
            verdicts.append(f'  "{verdict}": {{\n' + ",\n".join(lines) + "\n  }")
        blocks.append(f' "{lang}": {{\n' + ",\n".join(verdicts) + "\n }")
    return "{\n" + ",\n".join(blocks) + "\n}\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", help="list this checkpoint's translations not yet judged")
    ap.add_argument("--file", type=Path, help="add the verdicts of these JSON lines to data/judged.json")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    if args.file:
        lines = [json.loads(x) for x in args.file.read_text(encoding="utf-8").splitlines() if x.strip()]
        print(f"{file_verdicts(lines, class_sets.JUDGED)} verdicts added to {class_sets.JUDGED}", file=sys.stderr)
    if args.checkpoint:
        import torch

        from transformer import Translator

        torch.set_num_threads(args.threads)
        rows = unread(Translator.load(args.checkpoint, device="cpu"))
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        print(f"{args.checkpoint}: {len(rows)} translations to read", file=sys.stderr)
    if not (args.file or args.checkpoint):
        ap.error("name --checkpoint to list, or --file to file verdicts")


if __name__ == "__main__":
    main()
