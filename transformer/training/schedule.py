"""The learning-rate schedule of §5.3, shared by the trainer and the plots, and the schedule a checkpoint's run
really used, read back from its metrics.json."""
from __future__ import annotations

import bisect

from ..config import TrainConfig
from ..metrics import Metrics


def learning_rate(step: int, progress: float, d_model: int, tcfg: TrainConfig) -> float:
    """The rate a run with recipe `tcfg` uses at `step` (from 1), `progress` epochs into training."""
    rate = noam_lr(step, d_model, tcfg.warmup, tcfg.lr_scale, tcfg.hold_peak)
    return rate * cooldown(progress, tcfg.epochs, tcfg.cooldown_epochs)


def noam_lr(step: int, d_model: int, warmup: int, scale: float = 1.0, hold_peak: bool = False) -> float:
    """lrate = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) (eq. 3); step counts from 1.

    hold_peak (not in the paper): after the warm-up the rate stays at its peak instead of decaying as
    step^-0.5; with `cooldown` this is a warm-up, stable, decay schedule.
    """
    step = max(step, 1)
    if hold_peak:
        step = min(step, warmup)
    return scale * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def cooldown(progress: float, epochs: int, cooldown_epochs: int) -> float:
    """Factor on the rate: 1, then falling linearly to 0 over the last `cooldown_epochs` of `epochs`.

    progress counts epochs done, fractions included (2.5 = half-way through the third epoch). Not in the
    paper: a short run on little data otherwise ends with its rate still high (the first stage's ablations, in git's
    history of docs/training.md, measure what the fall gains).
    """
    if cooldown_epochs <= 0:
        return 1.0
    return min(1.0, max(0.0, (epochs - progress) / cooldown_epochs))


# -----------------------------------------------------------------------------
# The schedule a checkpoint was trained with, from its recipe and the rates its trainer recorded


def training_stages(metrics: Metrics) -> list[tuple[list[dict], dict, int]]:
    """(epoch rows, recipe, steps before the stage) per stage of a checkpoint's training.

    A later stage (trained on from another checkpoint) counts its steps from 0 again and numbers its epochs on from
    the stage before; its rows follow that stage's in metrics.epochs."""
    out, offset = [], 0
    for stage, start, end in metrics.stage_epochs():
        rows = [r for r in metrics.epochs if start <= r["epoch"] <= end]
        if rows:
            out.append((rows, stage.train_config, offset))
            offset += rows[-1]["step"]
    return out


def global_steps(metrics: Metrics) -> dict[int, int]:
    """Epoch -> the step count at its end, counted over every stage."""
    return {row["epoch"]: offset + row["step"] for rows, _, offset in training_stages(metrics) for row in rows}


def checkpoint_schedule(metrics: Metrics, points: int = 400) -> tuple[list[int], list[float]]:
    """The rate a checkpoint's run used at each step, from its recipe in metrics.json (schedule.learning_rate).

    Steps map to epochs through the step count recorded at each epoch's end; a second stage's steps follow the
    first's. Where a stage's recipe does not give the rate the trainer recorded at its epochs' ends (a run
    resumed with a longer schedule: a second cycle of warm rate and fall), that stage is drawn from the recorded
    rates themselves, one point per epoch. ([], []) when not recorded.
    """
    d_model = metrics.model_config.get("d_model")
    stages = training_stages(metrics)
    if not (d_model and stages and all(recipe for _, recipe, _ in stages)):
        return [], []
    last = stages[-1][0][-1]["step"] + stages[-1][2]
    stride = max(1, last // points)
    xs, rates = [], []
    for rows, recipe_dict, offset in stages:
        recipe = TrainConfig.from_dict(recipe_dict)
        ends = [0] + [row["step"] for row in rows]  # the step count at each epoch's end, within the stage

        def rate(s: int) -> float:
            e = max(1, bisect.bisect_left(ends, s))  # step s belongs to the stage's epoch e (1-based)
            return learning_rate(s, e - 1 + (s - ends[e - 1]) / max(1, ends[e] - ends[e - 1]), d_model, recipe)

        recorded = [(row["step"], row["lr"]) for row in rows if row.get("lr") is not None]
        # the scale of a mismatch: the recipe's own peak (a one-epoch stage records only its last, near-0 rate)
        peak = max([lr for _, lr in recorded] + [noam_lr(recipe.warmup, d_model, recipe.warmup, recipe.lr_scale)])
        if any(abs(rate(s) - lr) > 0.02 * peak for s, lr in recorded):  # the recipe changed during the stage
            xs += [offset + s for s, _ in recorded]
            rates += [lr for _, lr in recorded]
            continue
        for s in range(1, ends[-1] + 1, stride):
            xs.append(offset + s)
            rates.append(rate(s))
    return xs, rates
