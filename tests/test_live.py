"""Training a tiny model live: settings are bounded, runs repeat by seed, stopping leaves a usable model."""
from __future__ import annotations

import pytest
import torch

from transformer import live, toy


def test_settings_out_of_range_get_a_plain_message():
    for bad, message in ((dict(steps=100_000), "steps must be between"), (dict(d_model=64, n_heads=3), "divisible"),
                         (dict(peak_lr=1.0), "peak lr must be between"), (dict(task="fly"), "choose a task")):
        with pytest.raises(ValueError, match=message):
            live.ToySettings(**bad)


def test_the_schedule_peaks_at_the_chosen_rate_and_holds_or_decays():
    held, noam = live.ToySettings(warmup=100, peak_lr=2e-3, hold_peak=True), live.ToySettings(warmup=100, peak_lr=2e-3)
    assert held.lr(100) == pytest.approx(2e-3) and noam.lr(100) == pytest.approx(2e-3)
    assert held.lr(50) == pytest.approx(1e-3)  # linear warm-up
    assert held.lr(400) == pytest.approx(2e-3) and noam.lr(400) == pytest.approx(1e-3)  # (100/400)^0.5


def test_the_same_seed_gives_the_same_curve_and_another_seed_another():
    run = lambda seed: [p.losses for p in live.train_toy(live.ToySettings(steps=30, seed=seed), report_every=10)][-1]
    assert run(3) == run(3)
    assert run(3) != run(4)


def test_progress_reports_hooked_attention_and_stopping_leaves_a_usable_model():
    reports = []
    stop = lambda: len(reports) >= 2
    for p in live.train_toy(live.ToySettings(steps=500, d_model=32, n_layers=1), report_every=10, stop=stop):
        reports.append(p)
    assert [p.step for p in reports] == [10, 20, 21] and reports[-1].done  # stopped one step after the 2nd report
    p = reports[-1]
    S, T = len(p.probe) + 1, len(p.probe) + 1  # probe + </s>; <s> + target
    assert p.maps.cross.shape == (1, 4, T, S) and p.maps.encoder.shape == (1, 4, S, S)
    assert torch.allclose(p.maps.cross.sum(-1), torch.ones(())), "rows of a softmax"
    assert len(p.losses) == len(p.rates) == 21
    output, maps = live.look(p.model, "reverse", [4, 5, 6])  # the stopped model still runs
    assert all(toy.FIRST_SYMBOL <= t < toy.FIRST_SYMBOL + 10 for t in output)
    assert maps.target_tokens == ["<s>", "C", "B", "A"]


@pytest.mark.slow
@pytest.mark.parametrize("task", ["copy", "reverse"])
def test_the_defaults_learn_the_task(task):
    """Copy and reverse to at least 95 % exact match on held-out sequences within the default steps."""
    last = None
    for last in live.train_toy(live.ToySettings(task=task), report_every=400):
        pass
    assert last.done and last.accuracy >= 0.95, last.accuracy
