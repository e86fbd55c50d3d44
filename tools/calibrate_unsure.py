"""Calibrate a checkpoint's unsure marks on our labelled sets, and say how well they separate right from wrong.

    python tools/calibrate_unsure.py --checkpoint checkpoints/en-de [--record] [--data-dir ../shared/data]

The labelled set (transformer/training/class_sets.labelled): the first minute, the classroom corpus's held-out
sentences and one in four of its held-out word frames, translated greedily; a translation is right when it equals
a reference ignoring case and punctuation. A word is marked when the probabilities of its pieces, multiplied,
fall under the threshold (unsure_words in transformer/translator.py); a translation is flagged when a word is marked or
the page warns about it (checks: numbers, names, language, symbols carried over, far from its training data). The
threshold kept is the highest whose marks flag at most --right-share of the right translations. Printed: the share
of wrong and right translations flagged, the same when the threshold is chosen on four fifths of the set and
applied to the fifth left out (five times: what a new set may expect), and the area under the ROC curve of each
signal measured (the lowest word probability, the lowest piece probability, the lowest margin to the runner-up,
the mean log-probability). --record stores the threshold and the figures in metrics.json (unsure), where
Translator.unsure_below reads it. --data-dir also counts the translations of sentences that appear in none
of the training files (the corpora's training pairs, the phrasebooks), right and wrong.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from playground import panel  # noqa: E402
from transformer import Translator  # noqa: E402
from transformer.metrics import Metrics  # noqa: E402
from transformer.training.class_sets import is_right, labelled  # noqa: E402
from transformer.training.data import open_corpora, read_classroom  # noqa: E402
from transformer.translator import word_probabilities  # noqa: E402


def auc(wrong: list[float], right: list[float]) -> float:
    """The chance that a wrong translation scores lower than a right one (ties count half): 0.5 is no separation."""
    pairs = sum((w < r) + 0.5 * (w == r) for w in wrong for r in right)
    return pairs / max(1, len(wrong) * len(right))


def lowest_word(translation) -> float:
    """The lowest probability of a word (its pieces' multiplied), as the page's marks read it."""
    probs = [s.prob for s in translation.steps[: len(translation.target_ids)]]
    return min((p for _, p in word_probabilities(translation.target_tokens, probs)), default=1.0)


def signals(translation) -> dict[str, float]:
    steps = translation.steps[: len(translation.target_ids)] or translation.steps
    probs = [s.prob for s in steps] or [1.0]
    margins = [s.prob - next((p for tok, p in s.alternatives if tok != s.token), 0.0) for s in steps] or [1.0]
    return {"lowest word probability": lowest_word(translation), "lowest probability": min(probs),
            "lowest margin": min(margins),
            "mean log-probability": sum(math.log(max(p, 1e-9)) for p in probs) / len(probs)}


def training_sources(data: Path, pair: str) -> set[str]:
    seen = set()
    for corpus in open_corpora([data / "multi30k", data / "tatoeba"], pair):
        seen |= set(corpus.pairs("train")[0])
    lang = pair.split("-")[1]
    for part in read_classroom(f"{ROOT / 'data' / 'phrasebook.txt'},{ROOT / 'data' / 'classroom'}", lang).values():
        seen |= set(part[0])
    return seen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--right-share", type=float, default=0.15, help="the most of the right translations flagged")
    ap.add_argument("--record", action="store_true")
    ap.add_argument("--data-dir", type=Path)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    tr = Translator.load(args.checkpoint, device="cpu")
    lang = tr.metrics.pair.split("-")[1]
    frames = set(read_classroom(str(ROOT / "data" / "classroom"), lang, "heldout")["words"][0])
    items = [it for i, it in enumerate(labelled(lang)) if it[0] not in frames or i % 4 == 0]  # frames: one in four
    translations = tr.translate_batch([en for en, _ in items])
    right = [is_right(t.text, refs) for t, (_, refs) in zip(translations, items)]
    warned = [bool(panel.carried(t) or panel.unfamiliar(tr, en) or panel.warnings(tr, en, t.text))
              for t, (en, _) in zip(translations, items)]
    sig = [signals(t) for t in translations]
    n_right, n_wrong = sum(right), len(right) - sum(right)
    print(f"{args.checkpoint}: {len(items)} labelled translations, {n_right} right, {n_wrong} wrong")
    for name in sig[0]:
        a = auc([s[name] for s, r in zip(sig, right) if not r], [s[name] for s, r in zip(sig, right) if r])
        print(f"  AUC {name}: {a:.3f}")

    def flagged(below: float, among: range | list[int] = range(len(items))) -> tuple[float, float]:
        """The shares of the wrong and of the right translations among `among` flagged with this threshold."""
        marks = {i: sig[i]["lowest word probability"] < below or warned[i] for i in among}
        wrong, right_ = [i for i in among if not right[i]], [i for i in among if right[i]]
        return sum(marks[i] for i in wrong) / max(1, len(wrong)), sum(marks[i] for i in right_) / max(1, len(right_))

    def threshold(among=range(len(items))) -> float:
        """The highest threshold (to three decimals, just above a translation's lowest word) that flags at most
        --right-share of the right translations among `among`."""
        candidates = sorted({math.floor(sig[i]["lowest word probability"] * 1000 + 1) / 1000 for i in among})
        return max((b for b in candidates if flagged(b, among)[1] <= args.right_share), default=0.01)

    print("  | marked below p | wrong flagged | right flagged |\n  | ---: | ---: | ---: |")
    for b in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7):
        print(f"  | {b:.1f} | {100 * flagged(b)[0]:.0f} % | {100 * flagged(b)[1]:.0f} % |")
    below = threshold()
    wrong_share, right_share = flagged(below)
    only_marks = [s["lowest word probability"] < below for s in sig]
    print(f"  marked below p = {below:.3f}: {100 * wrong_share:.0f} % of the wrong translations flagged, "
          f"{100 * right_share:.0f} % of the right ones (warnings alone: "
          f"{100 * sum(w for w, r in zip(warned, right) if not r) / max(1, n_wrong):.0f} % / "
          f"{100 * sum(w for w, r in zip(warned, right) if r) / max(1, n_right):.0f} %; marks alone: "
          f"{100 * sum(m for m, r in zip(only_marks, right) if not r) / max(1, n_wrong):.0f} % / "
          f"{100 * sum(m for m, r in zip(only_marks, right) if r) / max(1, n_right):.0f} %)")
    # chosen on four fifths, applied to the fifth left out: each translation flagged by a threshold it did not set
    held = {}
    for fold in range(5):
        rest = [i for i in range(len(items)) if i % 5 != fold]
        chosen = threshold(rest)
        held |= {i: sig[i]["lowest word probability"] < chosen or warned[i] for i in range(fold, len(items), 5)}
    cv_wrong = sum(held[i] for i in held if not right[i]) / max(1, n_wrong)
    cv_right = sum(held[i] for i in held if right[i]) / max(1, n_right)
    print(f"  threshold chosen on four fifths, applied to the fifth: {100 * cv_wrong:.0f} % of the wrong translations "
          f"flagged, {100 * cv_right:.0f} % of the right ones")
    figures = {"below": below, "signal": "the probability of each word (its pieces' probabilities multiplied)",
               "translations": len(items), "right": n_right, "wrong": n_wrong, "wrong_flagged": wrong_share,
               "right_flagged": right_share, "held_out_wrong_flagged": cv_wrong, "held_out_right_flagged": cv_right,
               "auc_lowest_word_probability": auc([s["lowest word probability"] for s, r in zip(sig, right) if not r],
                                                  [s["lowest word probability"] for s, r in zip(sig, right) if r]),
               "auc_lowest_probability": auc([s["lowest probability"] for s, r in zip(sig, right) if not r],
                                             [s["lowest probability"] for s, r in zip(sig, right) if r])}
    if args.data_dir:
        seen = training_sources(args.data_dir, tr.metrics.pair)
        unseen = [r for (en, _), r in zip(items, right) if en not in seen]
        figures |= {"unseen": len(unseen), "unseen_right": sum(unseen)}
        print(f"  in no training file: {sum(unseen)} of {len(unseen)} right ({100 * sum(unseen) / max(1, len(unseen)):.0f} %)")
    if args.record:
        metrics = Metrics.load(args.checkpoint)
        metrics.unsure = figures
        metrics.save(args.checkpoint)
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
