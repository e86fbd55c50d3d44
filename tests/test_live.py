"""Training a tiny model live: settings are bounded, runs repeat by seed, stopping leaves a usable model."""
from __future__ import annotations

import pytest
import torch

from transformer.training import live, toy


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


@pytest.mark.slow
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


def test_a_report_holds_a_copy_that_training_never_touches_and_the_process_rng_is_never_reseeded():
    torch.manual_seed(0)
    reports = []
    for p in live.train_toy(live.ToySettings(steps=40, d_model=32, n_layers=1, seed=5), report_every=20):
        reports.append((p, {k: v.clone() for k, v in p.model.state_dict().items()}))
    (first, weights), (last, _) = reports
    assert not first.model.training and first.model is not last.model
    assert all(torch.equal(v, first.model.state_dict()[k]) for k, v in weights.items())  # 20 more steps later
    assert any(not torch.equal(v, last.model.state_dict()[k]) for k, v in weights.items())
    after = torch.rand(4)
    torch.manual_seed(1234)  # another process state: the run must not care, nor reseed the process
    again = [p.losses for p in live.train_toy(live.ToySettings(steps=40, d_model=32, n_layers=1, seed=5),
                                              report_every=20)]
    assert again[-1] == last.losses  # repeatable by its seed alone
    assert not torch.equal(torch.rand(4), after)  # a reseeded process would draw the same numbers again


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_looking_at_a_model_leaves_it_in_its_mode(mode):
    p = next(live.train_toy(live.ToySettings(steps=10, d_model=32, n_layers=1), report_every=10))
    getattr(p.model, mode)()
    live.look(p.model, "reverse", [4, 5, 6])
    live.accuracy(p.model, "reverse", [[4, 5, 6], [7, 8]])
    assert p.model.training == (mode == "train")


@pytest.mark.slow
@pytest.mark.xdist_group("toy")
@pytest.mark.parametrize("task", ["copy", "reverse"])
def test_the_defaults_learn_the_task(task, toy_run):
    """Copy and reverse reach 95 % exact match on held-out sequences within the default steps, and end near it.
    (Which report first reaches it depends on the CPU: its kernels' last bits steer the trajectory.)"""
    reports = toy_run(task)
    best, last = max(p.accuracy for p in reports), reports[-1]
    assert last.done and best >= 0.95 and last.accuracy >= 0.9, [p.accuracy for p in reports]


def test_how_often_a_run_reports_changes_nothing_of_its_training():
    """What lets one trained toy model serve every test that reads it (conftest's toy_run)."""
    settings = live.ToySettings(steps=30, d_model=32, n_layers=1, task="copy")
    *_, often = live.train_toy(settings, report_every=5)
    *_, once = live.train_toy(settings, report_every=10**9)
    assert often.step == once.step == 30 and often.done and once.done
    assert often.losses == once.losses and often.accuracy == once.accuracy
    assert all(torch.equal(a, b) for a, b in zip(often.model.state_dict().values(), once.model.state_dict().values()))


def test_pausing_between_steps_leaves_the_training_as_it_was():
    settings = live.ToySettings(steps=20, d_model=32, n_layers=1, seed=2)
    plain = [p.losses for p in live.train_toy(settings, report_every=10)]
    paused = [p.losses for p in live.train_toy(settings, report_every=10, pause_s=0.001)]
    assert paused == plain
