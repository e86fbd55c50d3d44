"""Calibrate a checkpoint's unsure marks on our labelled sets, and say how well they separate right from wrong.

    python tools/calibrate_unsure.py --checkpoint checkpoints/en-de [--record] [--data-dir ../shared/data]
                                     [--compare [--second-opinion OTHER_CHECKPOINT]]

The labelled set (transformer/training/class_sets.labelled): the first minute, the classroom corpus's held-out
sentences and one in four of its held-out word frames, translated greedily; a translation is right when it equals
a reference ignoring case and punctuation, or a translation a reader judged right (data/judged.json). A word is
marked when the probabilities of its pieces, multiplied, fall under `below`, or under `several_below` when two or
more words do in a translation no longer than the longest labelled one (`several_words`; unsure_words in
transformer/translator.py); a translation is flagged when a word is marked or the page warns about it (checks:
numbers, names, language, symbols carried over, far from its training data). The pair of thresholds kept flags
the most wrong translations while flagging at most --right-share of the right ones (ties: fewer right ones, then
the one threshold alone).
Printed: the share of wrong and right translations flagged, with `below` alone and with both, the same when the
thresholds are chosen on four fifths of the set and applied to the fifth left out (five times: what a new set may
expect), and the area under the ROC curve of each signal measured (the lowest word probability, the lowest piece
probability, the lowest margin to the runner-up, the mean log-probability, the second-lowest word probability).
--record stores the thresholds and the figures in metrics.json (unsure), where Translator.unsure_below and
unsure_several read them. --data-dir also counts the translations of sentences that appear in none
of the training files (the corpora's training pairs, the phrasebooks) right, by the written references and with
the translations judged right. --compare also measures signals the page does not use, with the same rule
(compare_signals): dropout at inference, a second snapshot's probabilities, the source's coverage.
"""
from __future__ import annotations

import argparse
import bisect
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from playground import doubts  # noqa: E402
from transformer import Translator  # noqa: E402
from transformer.interpret.analyses import attention  # noqa: E402
from transformer.metrics import Metrics  # noqa: E402
from transformer.training.class_sets import is_right, labelled  # noqa: E402
from transformer.training.data import read_classroom  # noqa: E402
from transformer.training.train import training_pairs  # noqa: E402
from transformer.translator import word_probabilities  # noqa: E402


def auc(wrong: list[float], right: list[float]) -> float:
    """The chance that a wrong translation scores lower than a right one (ties count half): 0.5 is no separation."""
    pairs = sum((w < r) + 0.5 * (w == r) for w in wrong for r in right)
    return pairs / max(1, len(wrong) * len(right))


def word_probs(translation, probs: list[float] | None = None) -> list[float]:
    """The probabilities of its words (their pieces' multiplied), as the page's marks read them, lowest first; probs:
    each piece's probability (default: decoding's own)."""
    probs = probs or [s.prob for s in translation.steps[: len(translation.target_ids)]]
    return sorted(p for _, p in word_probabilities(translation.target_tokens, probs))


def lowest_two(words: list[float]) -> tuple[float, float]:
    """The lowest and second-lowest word probability (1.0 where a translation has fewer words)."""
    words = words + [1.0, 1.0]
    return words[0], words[1]


def signals(translation) -> dict[str, float]:
    steps = translation.steps[: len(translation.target_ids)] or translation.steps
    probs = [s.prob for s in steps] or [1.0]
    margins = [s.prob - next((p for tok, p in s.alternatives if tok != s.token), 0.0) for s in steps] or [1.0]
    lowest, second = lowest_two(word_probs(translation))  # a translation of one word (or none) has no second doubt
    return {"lowest word probability": lowest, "lowest probability": min(probs),
            "lowest margin": min(margins),
            "mean log-probability": sum(math.log(max(p, 1e-9)) for p in probs) / len(probs),
            "second-lowest word probability": second}


def teacher_forced_probs(tr: Translator, translation, samples: int = 1) -> list[float]:
    """Each generated piece's probability in a teacher-forced pass; samples > 1: the mean over that many passes with
    dropout on, as in training (dropout at inference)."""
    src, tgt = tr.pair_tensors("", translation)  # (1, S), (1, T)
    follow = torch.tensor(tr.followers(tgt), device=tr.device)  # (T,): what followed each position
    tr.model.train(samples > 1)
    try:
        with torch.no_grad():
            logp = tr.model(src.expand(samples, -1), tgt.expand(samples, -1))  # (K, T, V)
    finally:
        tr.model.eval()
    probs = logp[:, torch.arange(len(follow)), follow].exp().mean(0)  # (K, T) -> (T,)
    return probs[: len(translation.target_ids)].tolist()


def least_covered(tr: Translator, translation) -> float:
    """The least cross-attention a source word received: summed over the target positions, averaged over layers
    and heads (</s> and punctuation left out). A word the translation left out should receive little."""
    cross = attention(tr, "", translation).cross.mean(dim=(0, 1)).sum(0)  # (L, H, T, S) -> (T, S) -> (S,)
    words = [j for j, p in enumerate(translation.source_tokens) if any(c.isalnum() for c in p) and p != "</s>"]
    return min((cross[j].item() for j in words), default=1.0)


def just_above(p: float) -> float:
    """A threshold to three decimals that marks a word of probability p (p < it)."""
    return math.floor(p * 1000 + 1) / 1000


@dataclass
class Labelled:
    """Each labelled translation's lowest and second-lowest word probability, whether the page warned, whether right."""
    lowest: list[float]
    second: list[float]
    warned: list[bool]
    right: list[bool]

    def marked(self, i: int, below: float, several: float = 0.0) -> bool:
        """Translation i flagged: a word under `below`, two words under `several`, or a warning."""
        return self.lowest[i] < below or self.second[i] < several or self.warned[i]

    def flagged(self, below: float, several: float = 0.0, among=None) -> tuple[float, float]:
        """The shares of the wrong and of the right translations among `among` (all) flagged."""
        among = range(len(self.right)) if among is None else among
        wrong = [self.marked(i, below, several) for i in among if not self.right[i]]
        right = [self.marked(i, below, several) for i in among if self.right[i]]
        return sum(wrong) / max(1, len(wrong)), sum(right) / max(1, len(right))

    def thresholds(self, right_share: float, among=None, several_too: bool = True) -> tuple[float, float]:
        """(below, several_below) flagging the most wrong translations among `among` (all) and at most right_share
        of the right ones (ties: fewer right ones, then several_below 0): for each several_below (0: none, or just
        above a translation's second-lowest word), the highest below that the right ones' budget leaves."""
        among = range(len(self.right)) if among is None else among
        allowed = math.floor(right_share * sum(self.right[i] for i in among) + 1e-9)
        candidates = {0.0} | {just_above(self.lowest[i]) for i in among}  # 0.0: no word marked alone
        best = (-1, 0, 0.0, 0.0)  # wrong flagged, -right flagged, below, several_below
        for several in [0.0] + (sorted({just_above(self.second[i]) for i in among}) if several_too else []):
            base = {i: self.second[i] < several or self.warned[i] for i in among}
            spent = sum(base[i] for i in among if self.right[i])
            if spent > allowed:
                break  # a higher several_below flags these and more
            free = sorted(self.lowest[i] for i in among if self.right[i] and not base[i])  # a below over one flags it
            below = max(b for b in candidates if bisect.bisect_left(free, b) <= allowed - spent)
            wrong_n = sum(base[i] or self.lowest[i] < below for i in among if not self.right[i])
            right_n = sum(base[i] or self.lowest[i] < below for i in among if self.right[i])
            if (wrong_n, -right_n) > best[:2]:
                best = (wrong_n, -right_n, below, several)
        return best[2], best[3]

    def held_out(self, right_share: float) -> tuple[float, float]:
        """The shares of the wrong and of the right translations flagged by thresholds chosen on four fifths of the
        set, each fifth in turn: what a new set may expect."""
        n = len(self.right)
        held = {}
        for fold in range(5):
            below, several = self.thresholds(right_share, [i for i in range(n) if i % 5 != fold])
            held |= {i: self.marked(i, below, several) for i in range(fold, n, 5)}
        wrong = [held[i] for i in held if not self.right[i]]
        right = [held[i] for i in held if self.right[i]]
        return sum(wrong) / max(1, len(wrong)), sum(right) / max(1, len(right))

    def auc(self) -> float:
        """The lowest word probability's AUC (auc)."""
        return auc([x for x, r in zip(self.lowest, self.right) if not r],
                   [x for x, r in zip(self.lowest, self.right) if r])


def compare_signals(tr: Translator, translations: list, lab: Labelled, right_share: float,
                    second_opinion: str | None) -> None:
    """Print how other signals than decoding's own word probabilities separate the same labelled translations,
    with the same rule (a word under one threshold, or two under another, or a warning): dropout at inference
    (8 passes averaged; three seeds, to show the noise), another checkpoint's probabilities averaged with this
    one's (a second snapshot), and the source's coverage by cross-attention (its AUC: low coverage = wrong)."""
    print(f"  other signals, thresholds chosen at {100 * right_share:.0f} % of the right translations:\n"
          "  | signal | AUC (lowest word) | wrong / right flagged | chosen on four fifths |\n  | --- | ---: | ---: | ---: |")

    def report(name: str, lowest_second: list[tuple[float, float]]) -> None:
        other = Labelled([x for x, _ in lowest_second], [y for _, y in lowest_second], lab.warned, lab.right)
        wrong, right = other.flagged(*other.thresholds(right_share))
        held_wrong, held_right = other.held_out(right_share)
        print(f"  | {name} | {other.auc():.3f} | {100 * wrong:.1f} / {100 * right:.1f} % | "
              f"{100 * held_wrong:.1f} / {100 * held_right:.1f} % |")

    report("decoding's own probabilities", list(zip(lab.lowest, lab.second)))
    for seed in (0, 1, 2):
        torch.manual_seed(seed)
        report(f"dropout at inference, 8 passes (seed {seed})",
               [lowest_two(word_probs(t, teacher_forced_probs(tr, t, 8))) for t in translations])
    if second_opinion:
        other = Translator.load(second_opinion, device="cpu")
        report(f"averaged with {second_opinion}",
               [lowest_two(word_probs(t, [(a + b) / 2 for a, b in zip(teacher_forced_probs(tr, t),
                                                                      teacher_forced_probs(other, t))]))
                for t in translations])
    covered = [least_covered(tr, t) for t in translations]
    print(f"  AUC of the least-covered source word: "
          f"{auc([c for c, r in zip(covered, lab.right) if not r], [c for c, r in zip(covered, lab.right) if r]):.3f}")


def training_sources(data: Path, pair: str, phrasebook: str) -> set[str]:
    return set(training_pairs([data / "multi30k", data / "tatoeba"], pair, phrasebook)[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", required=True)
    # 0.13, not the goal's 0.15: thresholds chosen at 0.15 flagged 17-18 % of the right translations of the fifth
    # they were not chosen on; at 0.13, 13-15 % (the eighth stage, in git's history of docs/training.md)
    ap.add_argument("--right-share", type=float, default=0.13, help="the most of the right translations flagged")
    ap.add_argument("--record", action="store_true")
    ap.add_argument("--data-dir", type=Path)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--compare", action="store_true", help="also measure other signals (compare_signals)")
    ap.add_argument("--second-opinion", help="with --compare: another checkpoint to average probabilities with")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    tr = Translator.load(args.checkpoint, device="cpu")
    lang = tr.metrics.pair.split("-")[1]
    frames = set(read_classroom(str(ROOT / "data" / "classroom"), lang, "heldout")["words"][0])
    judged_too, references_only = labelled(lang), labelled(lang, with_judged=False)
    keep = [i for i, (en, _) in enumerate(judged_too) if en not in frames or i % 4 == 0]  # frames: one in four
    items = [judged_too[i] for i in keep]
    written = [references_only[i][1] for i in keep]
    translations = tr.translate_batch([en for en, _ in items])
    right = [is_right(t.text, refs) for t, (_, refs) in zip(translations, items)]
    by_written = [is_right(t.text, refs) for t, refs in zip(translations, written)]
    warned = [bool(doubts.warnings_under(tr, en, t)) for t, (en, _) in zip(translations, items)]
    sig = [signals(t) for t in translations]
    n_right, n_wrong = sum(right), len(right) - sum(right)
    print(f"{args.checkpoint}: {len(items)} labelled translations, {n_right} right, {n_wrong} wrong")
    for name in sig[0]:
        a = auc([s[name] for s, r in zip(sig, right) if not r], [s[name] for s, r in zip(sig, right) if r])
        print(f"  AUC {name}: {a:.3f}")

    lab = Labelled([x["lowest word probability"] for x in sig], [x["second-lowest word probability"] for x in sig],
                   warned, right)
    flagged = lab.flagged

    print("  | marked below p | wrong flagged | right flagged |\n  | ---: | ---: | ---: |")
    for b in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7):
        print(f"  | {b:.1f} | {100 * flagged(b)[0]:.0f} % | {100 * flagged(b)[1]:.0f} % |")
    alone, _ = lab.thresholds(args.right_share, several_too=False)
    print(f"  marked below p = {alone:.3f} alone: {100 * flagged(alone)[0]:.1f} % of the wrong translations flagged, "
          f"{100 * flagged(alone)[1]:.1f} % of the right ones")
    below, several = lab.thresholds(args.right_share)
    wrong_share, right_share = flagged(below, several)
    only_marks = [lab.lowest[i] < below or lab.second[i] < several for i in range(len(items))]
    print(f"  marked below p = {below:.3f}, and two or more words below {several:.3f}: {100 * wrong_share:.1f} % of "
          f"the wrong translations flagged, {100 * right_share:.1f} % of the right ones (warnings alone: "
          f"{100 * sum(w for w, r in zip(warned, right) if not r) / max(1, n_wrong):.0f} % / "
          f"{100 * sum(w for w, r in zip(warned, right) if r) / max(1, n_right):.0f} %; marks alone: "
          f"{100 * sum(m for m, r in zip(only_marks, right) if not r) / max(1, n_wrong):.0f} % / "
          f"{100 * sum(m for m, r in zip(only_marks, right) if r) / max(1, n_right):.0f} %)")
    cv_wrong, cv_right = lab.held_out(args.right_share)  # each translation flagged by thresholds it did not set
    print(f"  thresholds chosen on four fifths, applied to the fifth: {100 * cv_wrong:.0f} % of the wrong translations "
          f"flagged, {100 * cv_right:.0f} % of the right ones")
    several_words = max(len(word_probs(t)) for t in translations)  # the longest labelled translation
    figures = {"below": below, "several_below": several, "several_words": several_words, "below_alone": alone,
               "right_share_asked": args.right_share,
               "signal": "the probability of each word (its pieces' probabilities multiplied)",
               "translations": len(items), "right": n_right, "wrong": n_wrong, "wrong_flagged": wrong_share,
               "right_flagged": right_share, "held_out_wrong_flagged": cv_wrong, "held_out_right_flagged": cv_right,
               "auc_lowest_word_probability": lab.auc(),
               "auc_lowest_probability": auc([s["lowest probability"] for s, r in zip(sig, right) if not r],
                                             [s["lowest probability"] for s, r in zip(sig, right) if r])}
    if args.data_dir:
        seen = training_sources(args.data_dir, tr.metrics.pair, tr.metrics.train_config.get("phrasebook", ""))
        unseen = [i for i, (en, _) in enumerate(items) if en not in seen]
        figures |= {"unseen": len(unseen), "unseen_right": sum(by_written[i] for i in unseen),
                    "unseen_right_judged": sum(right[i] for i in unseen)}
        print(f"  in no training file: {figures['unseen_right']} of {len(unseen)} right by the written references "
              f"({100 * figures['unseen_right'] / max(1, len(unseen)):.0f} %), {figures['unseen_right_judged']} with "
              f"the translations judged right ({100 * figures['unseen_right_judged'] / max(1, len(unseen)):.0f} %)")
    if args.compare:
        compare_signals(tr, translations, lab, args.right_share, args.second_opinion)
    if args.record:
        metrics = Metrics.load(args.checkpoint)
        metrics.unsure = figures
        metrics.save(args.checkpoint)
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
