"""The plots the views draw, from data alone: plotly figures, never gradio."""
from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from playground.figures import base, maps, positional, schedule
from playground.figures.steps import step_detail, step_probabilities
from transformer.training.schedule import checkpoint_schedule
from transformer.metrics import Metrics

from conftest import ROOT

M = Metrics.from_dict  # the tests write metrics.json as a dict, as a file holds it


def test_figures_never_import_gradio():
    figures = ", ".join(f"playground.figures.{p.stem}" for p in (ROOT / "playground" / "figures").glob("*.py"))
    code = f"import sys, {figures}, playground.lesson, playground.bertviz_view; print('gradio' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr


def test_labels_count_from_1_write_pieces_as_the_glance_does_and_are_escaped():
    assert base.labels(["<s>", "▁I", "ch", "▁a", "&", "</s>"]) == ["1 start", "2 I", "3 -ch", "4 a", "5 &amp;", "6 end"]
    fig = maps.attention_heatmap(torch.eye(3), ["<s>", "x", "x"], ["▁a", "</s>", "▁<img src=x>"], "t <b>")
    assert list(fig.data[0].x) == ["1 a", "2 end", "3 &lt;img src=x&gt;"]
    assert fig.layout.title.text == "t &lt;b&gt;"


def test_step_and_pe_figures_are_built_from_data():
    from transformer.translator import TokenStep

    steps = [TokenStep("▁Ein", 0.9, [("▁Ein", 0.9), ("▁Der", 0.05)]), TokenStep("</s>", 0.8, [("</s>", 0.8)])]
    fig = step_probabilities(steps)
    assert fig.data[0].z[0][0] == 0.9 and "<b>[Ein]</b>" == fig.data[0].text[0][0]
    assert list(fig.data[0].y) == ["1 Ein", "2 end"]  # steps counted from 1, pieces as the glance writes them
    assert fig.data[0].z[1][0] == 0.8 and fig.layout.width is None  # a row a step: as wide as its box
    guarded = TokenStep("ant", 0.05, [("ant", 0.05), ("▁à", 0.04)], removed=("ev", 0.61))
    drawn = {s.guarded: step_detail(s, torch.rand(2, 3), ["▁a", "b", "</s>"], 11) for s in (steps[0], guarded)}
    said = {g: fig.layout.title.text.replace("<br>", " ") for g, fig in drawn.items()}  # wrapped for its box
    assert "Step 12: chose -ant (p = 0.050); the stutter guard removed -ev (p = 0.610)" == said[True]
    assert "stutter guard" not in said[False]
    bars = drawn[True].data[0]  # the removed piece first, with its probability, crossed; then what it could choose
    assert list(bars.y) == ["-ev ✕", "-ant", "à"] and list(bars.x) == [0.61, 0.05, 0.04]
    assert list(bars.marker.pattern.shape) == ["x", "", ""] and "stutter guard" in bars.customdata[0]
    assert list(drawn[False].data[0].y) == ["Ein", "Der"] and not any(drawn[False].data[0].marker.pattern.shape)
    every = step_probabilities([steps[0], guarded]).data[0]  # the step's hover says what the guard removed
    assert every.customdata[1][0] == "<br>the stutter guard removed -ev (p = 0.610)" and every.customdata[0][0] == ""
    pe = torch.randn(50, 8)
    assert len(positional.pe_curves(pe, [0, 3]).data) == 2
    torch.testing.assert_close(torch.tensor(positional.pe_similarity(pe, 10).data[0].z), pe[:10] @ pe[:10].t())


def test_training_curve_draws_the_checkpoints_own_schedule_with_its_cool_down():

    epochs = [{"epoch": e, "step": 100 * e, "train_loss": 3.0, "val_loss": 2.0, "val_bleu": 10.0 * e} for e in (1, 2, 3, 4)]
    metrics = {"epochs": epochs, "model_config": {"d_model": 128},
               "train_config": {"warmup": 50, "lr_scale": 1.0, "epochs": 4, "cooldown_epochs": 2}}
    steps, rates = schedule.training_curves(M(metrics)).data[0].x, schedule.training_curves(M(metrics)).data[0].y
    by_step = dict(zip(steps, rates))
    # eq. 3 by hand: 128^-0.5 * min(step^-0.5, step * 50^-1.5); after the warm-up the first term is the smaller
    assert by_step[150] == pytest.approx(128**-0.5 * 150**-0.5)  # epoch 2: before the cool-down
    assert by_step[300] == pytest.approx(0.5 * 128**-0.5 * 300**-0.5)  # end of epoch 3: half-way down the cool-down
    assert by_step[400] == 0.0 and rates[-1] < 0.01 * max(rates)  # and at the last step it reaches 0
    metrics["train_config"]["hold_peak"] = True  # a run trained with --hold-peak: flat from warm-up to cool-down
    rate_trace = schedule.training_curves(M(metrics)).data[0]
    by_step = dict(zip(rate_trace.x, rate_trace.y))
    assert by_step[101] == by_step[191] == pytest.approx(128**-0.5 * 50**-0.5)  # the peak, held
    noam = schedule.noam_curves([(128, 50)], ("this checkpoint", M(metrics)))  # the LR view draws the same recipe
    assert [t.name for t in noam.data] == ["d_model=128, warmup=50", "this checkpoint: as trained"]
    assert list(noam.data[1].y) == list(rate_trace.y) and noam.data[1].y[-1] == 0.0 < noam.data[0].y[-1]


def test_a_second_stage_is_drawn_after_the_first_and_a_changed_recipe_from_its_recorded_rates():
    from transformer.training.schedule import learning_rate
    from transformer.config import TrainConfig

    first = {"warmup": 50, "lr_scale": 1.0, "epochs": 2, "cooldown_epochs": 1, "hold_peak": True}
    second = {"warmup": 10, "lr_scale": 0.5, "epochs": 2, "cooldown_epochs": 1, "hold_peak": True}
    peak2 = 0.5 * 32**-0.5 * 10**-0.5
    row = lambda e, step, lr, bleu: {"epoch": e, "step": step, "train_loss": 3.0, "val_loss": 2.0, "lr": lr,
                                     "val_bleu": bleu["m"], "val_bleu_by_corpus": bleu}
    metrics = {"model_config": {"d_model": 32}, "train_config": second, "first_stage": {"train_config": first},
               "epochs": [{"epoch": 1, "step": 100, "train_loss": 3.0, "val_loss": 2.0, "val_bleu": 5.0},
                          {"epoch": 2, "step": 200, "train_loss": 3.0, "val_loss": 2.0, "val_bleu": 9.0},
                          row(3, 40, peak2, {"m": 8.0, "t": 4.0}), row(4, 80, 0.0, {"m": 9.5, "t": 7.0})]}
    fig = schedule.training_curves(M(metrics), mark_epoch=3)
    by_step = dict(zip(fig.data[0].x, fig.data[0].y))
    assert max(by_step) == 280  # the second stage's 80 steps follow the first stage's 200
    assert by_step[220] == pytest.approx(learning_rate(20, 0.5, 32, TrainConfig.from_dict(second)))
    assert by_step[220] == pytest.approx(peak2)  # its own recipe: warmed up again, to its own peak
    assert by_step[150] == pytest.approx(learning_rate(150, 1.5, 32, TrainConfig.from_dict(first)))
    assert 240 in [s.x0 for s in fig.layout.shapes]  # epoch 3 marked at its step counted over both stages
    assert [t.name for t in fig.data[3:]] == ["val BLEU, m (greedy)", "val BLEU, t (greedy)"]
    assert list(fig.data[4].y) == [None, None, 4.0, 7.0]
    # resumed with a longer schedule (a second cycle): its recipe no longer gives the rates it recorded
    metrics["train_config"] = dict(second, epochs=4)
    metrics["epochs"][-1]["lr"] = 0.0  # recorded: the stage fell to 0 at epoch 4, which epochs=4 would not do
    steps, rates = checkpoint_schedule(M(metrics))
    assert steps[-2:] == [240, 280] and rates[-2:] == [peak2, 0.0]


def test_training_curves_mark_the_chosen_epoch():
    metrics = {"train_config": {"epochs": 2, "warmup": 4, "lr_scale": 1.0, "cooldown_epochs": 0, "hold_peak": False},
               "model_config": {"d_model": 32},
               "epochs": [{"epoch": e, "step": 10 * e, "train_loss": 3.0 / e, "val_loss": 2.0 / e, "val_bleu": None}
                          for e in (1, 2)]}
    marks = lambda fig: sorted(s.x0 for s in fig.layout.shapes)
    assert marks(schedule.training_curves(M(metrics))) == []
    assert marks(schedule.training_curves(M(metrics), mark_epoch=2)) == [2, 2, 20]  # step axis, then both epoch axes


def test_positional_figures_name_sines_and_cosines_by_the_models_layout():
    pe = torch.randn(100, 512)
    assert [t.name for t in positional.pe_curves(pe, [0, 1, 256], layout="interleaved").data] == [
        "dimension 1 (sin)", "dimension 2 (cos)", "dimension 257 (sin)"]  # counted from 1, as the page counts
    assert [t.name for t in positional.pe_curves(pe, [0, 1, 256], layout="halves").data] == [
        "dimension 1 (sin)", "dimension 2 (sin)", "dimension 257 (cos)"]
    assert positional.pe_curves(pe, [0]).data[0].x[0] == 1 and positional.pe_similarity(pe).data[0].x[0] == 1
    matrix = positional.pe_matrix(pe).data[0]
    assert matrix.x[0] == 1 and matrix.y[0] == 1 and len(matrix.x) == 512
    assert "Marian" in positional.pe_matrix(pe, layout="halves").layout.title.text


def test_a_toy_tasks_symbols_are_labelled_as_symbols_not_as_pieces_of_a_word():
    """Train a tiny one: each token of a toy task is a whole symbol; the dash ("continues the word before") is for
    sentencepiece's pieces only."""
    fig = maps.attention_heatmap(torch.eye(3), ["<s>", "C", "B"], ["C", "B", "</s>"], "probe", symbols=True)
    assert list(fig.data[0].y) == ["1 start", "2 C", "3 B"] and list(fig.data[0].x) == ["1 C", "2 B", "3 end"]
    assert base.labels(["▁I", "ch"]) == ["1 I", "2 -ch"]  # pieces keep it
