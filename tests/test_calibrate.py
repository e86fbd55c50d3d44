"""tools/calibrate_unsure.py's choice of thresholds (Labelled): the right translations' budget is kept, and a second
threshold for several doubtful words is taken only when it flags more wrong translations; the other signals it
measures (--compare) read the model as decoding did."""
import random
import sys
from pathlib import Path

import pytest
import torch
from conftest import tiny_config

from transformer import Translator
from transformer.model import Transformer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from calibrate_unsure import Labelled, least_covered, teacher_forced_probs  # noqa: E402


def test_a_single_doubt_is_marked_below_the_threshold_the_budget_of_right_translations_leaves():
    # right ones: lowest word 0.9 and up, one at 0.3; wrong ones: 0.2-0.35. One right one (of ten) may be flagged.
    right = Labelled([0.9, 0.92, 0.95, 0.97, 0.3, 0.99, 0.91, 0.93, 0.96, 0.98] + [0.2, 0.25, 0.35],
                     [1.0] * 13, [False] * 13, [True] * 10 + [False] * 3)
    below, several = right.thresholds(0.1)
    assert right.flagged(below, several) == (1.0, 0.1)
    below, several = right.thresholds(0.0)  # none of the right ones: the wrong one at 0.35 stays unflagged
    assert right.flagged(below, several) == (2 / 3, 0.0) and below <= 0.3


def test_two_fairly_doubtful_words_are_taken_when_they_flag_what_one_threshold_cannot():
    # the wrong ones have no very unsure word but two under 0.7; the right ones at most one
    lab = Labelled([0.6, 0.65, 0.6, 0.9, 0.95, 0.6], [0.65, 0.69, 0.68, 0.95, 0.97, 0.99], [False] * 6,
                   [False, False, False, True, True, True])
    assert lab.thresholds(0.0, several_too=False)[1] == 0.0
    assert lab.flagged(*lab.thresholds(0.0, several_too=False)) == (0.0, 0.0)  # 0.6 flags a right one too
    below, several = lab.thresholds(0.0)
    assert several > 0.69 and lab.flagged(below, several) == (1.0, 0.0)


def test_the_budget_holds_and_both_thresholds_flag_at_least_as_many_wrong_ones_on_random_sets():
    rng = random.Random(0)
    for _ in range(50):
        n = rng.randint(5, 40)
        lowest = [rng.random() for _ in range(n)]
        second = [min(1.0, x + rng.random()) for x in lowest]
        lab = Labelled(lowest, second, [rng.random() < 0.05 for _ in range(n)], [rng.random() < 0.6 for _ in range(n)])
        share = rng.choice([0.1, 0.13, 0.2])
        if sum(lab.warned[i] for i in range(n) if lab.right[i]) > share * sum(lab.right):
            continue  # the warnings alone spend more than the budget
        one, both = lab.thresholds(share, several_too=False), lab.thresholds(share)
        assert lab.flagged(*one)[1] <= share + 1e-9 and lab.flagged(*both)[1] <= share + 1e-9
        assert lab.flagged(*both)[0] >= lab.flagged(*one)[0]


def test_held_out_thresholds_are_chosen_without_the_fifth_they_flag():
    # wrong ones under 0.3, right ones over 0.6; both wrong ones at 0.28 fall in the fifth i % 5 == 4, so the
    # thresholds chosen on the other four fifths (just above 0.25) miss them, where thresholds chosen on all do not
    lowest = [0.1, 0.2, 0.25, 0.15, 0.28] * 2 + [0.7, 0.8, 0.9, 0.95, 0.65] * 4
    lab = Labelled(lowest, [1.0] * 30, [False] * 30, [False] * 10 + [True] * 20)
    assert lab.flagged(*lab.thresholds(0.0)) == (1.0, 0.0)
    assert lab.held_out(0.0) == (0.8, 0.0) and lab.auc() == 1.0


def test_a_teacher_forced_pass_gives_decodings_probabilities_and_dropout_passes_leave_the_model_in_eval(tokenizer):
    torch.manual_seed(0)
    tr = Translator(Transformer(tiny_config(vocab_size=len(tokenizer), dropout=0.3)), tokenizer)
    t = tr.translate("a man walks in the park", max_len=12)
    decoded = [s.prob for s in t.steps[: len(t.target_ids)]]
    assert len(t.target_ids) > 0 and teacher_forced_probs(tr, t) == pytest.approx(decoded, abs=1e-5)
    torch.manual_seed(1)
    dropped = teacher_forced_probs(tr, t, samples=8)
    assert len(dropped) == len(decoded) and dropped != pytest.approx(decoded, abs=1e-3)
    assert not tr.model.training and teacher_forced_probs(tr, t) == pytest.approx(decoded, abs=1e-5)
    assert 0.0 <= least_covered(tr, t) <= len(t.target_ids) + 1
