"""The learning-rate schedule of §5.3, shared by the trainer and the plots."""
from __future__ import annotations

from ..config import TrainConfig


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
    paper: a short run on little data otherwise ends with its rate still high (docs/training.md's ablations measure
    what the fall gains).
    """
    if cooldown_epochs <= 0:
        return 1.0
    return min(1.0, max(0.0, (epochs - progress) / cooldown_epochs))
