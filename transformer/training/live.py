"""Train a tiny Transformer on a toy task in front of the class: the real model, loss, schedule and train_step.

`train_toy` is a generator: it trains and, every `report_every` steps, yields a `Progress` with the curves so
far, the model's output and attention (from hooks) on a probe sequence and its accuracy on held-out sequences.
Nothing here imports gradio; the app's "Train a tiny one" view streams these.
"""
from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch

from . import toy
from ..interpret.capture import AttentionMaps, capture_attention
from ..config import ModelConfig
from ..decoding import greedy
from ..errors import InputError
from ..model import Transformer
from .schedule import noam_lr
from .train import make_optimizer, train_step

LIMITS = {  # what a shared server allows: (smallest, largest)
    "d_model": (16, 128), "n_heads": (1, 8), "n_layers": (1, 3), "warmup": (10, 2000), "peak_lr": (1e-4, 1e-2),
    "steps": (10, 3000), "seed": (0, 2**31 - 1), "n_symbols": (3, 20),
}


@dataclass(frozen=True)
class ToySettings:
    """Defaults under which copy and reverse reach 95 % held-out exact match by step 400 (seeds 0-2 on two CPU cores;
    the 1,200 steps take 26-29 s). Gradients are clipped at norm 1: without it a late spike could undo it."""

    task: str = "reverse"
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2  # encoder and decoder each
    warmup: int = 100
    peak_lr: float = 3e-3
    hold_peak: bool = False  # False: Noam's 1/sqrt(step) decay after the warm-up; True: held at the peak
    steps: int = 1200
    seed: int = 0
    n_symbols: int = 10
    batch_size: int = 64
    min_len: int = 3
    max_len: int = 12

    def __post_init__(self) -> None:
        if self.task not in toy.TASKS:
            raise InputError(f"choose a task: {', '.join(toy.TASKS)}")
        for name, (low, high) in LIMITS.items():
            value = getattr(self, name)
            if not low <= value <= high:
                raise InputError(f"{name.replace('_', ' ')} must be between {low} and {high} (got {value})")
        if self.d_model % self.n_heads:
            raise InputError(f"d_model ({self.d_model}) must be divisible by the number of heads ({self.n_heads})")

    def model_config(self) -> ModelConfig:
        return ModelConfig(vocab_size=toy.FIRST_SYMBOL + self.n_symbols, d_model=self.d_model, n_heads=self.n_heads,
                           n_encoder_layers=self.n_layers, n_decoder_layers=self.n_layers, d_ff=2 * self.d_model,
                           dropout=0.0, max_len=self.max_len + 4)

    def lr(self, step: int) -> float:
        """The paper's schedule, scaled so that its peak (at the end of the warm-up) is peak_lr."""
        scale = self.peak_lr / noam_lr(self.warmup, self.d_model, self.warmup)
        return noam_lr(step, self.d_model, self.warmup, scale, self.hold_peak)


@dataclass
class Progress:
    step: int
    losses: list[float]  # per step: label-smoothed loss per target token
    rates: list[float]  # per step
    accuracy: float  # exact-match on the held-out sequences
    probe: list[int]
    output: list[int]  # greedy output for the probe
    maps: AttentionMaps  # the probe teacher-forced with its expected target, through hooks
    model: Transformer = field(repr=False)  # a copy of the weights at this report, in eval mode: the training
    # goes on with its own module, so a user may run this one meanwhile
    done: bool = False


@torch.no_grad()
def look(model: Transformer, task: str, probe: list[int]) -> tuple[list[int], AttentionMaps]:
    """Greedy output for `probe`, and the attention of the probe read with its correct target (hooks).
    The model is left in the mode it came in."""
    training = model.training
    model.eval()
    try:
        src, tgt = toy.make_batch(task, [probe], model.cfg)
        output = greedy(model, src, max_len=len(probe) + 2)[0].tokens
        with capture_attention(model) as recorder:
            model(src, tgt[:, :-1])
    finally:
        model.train(training)
    maps = recorder.sentence(0)
    maps.source_tokens = [toy.spell([i]) or "</s>" for i in src[0].tolist()]
    maps.target_tokens = ["<s>"] + [toy.spell([i]) for i in tgt[0, 1:-1].tolist()]
    return output, maps


@torch.no_grad()
def accuracy(model: Transformer, task: str, seqs: list[list[int]]) -> float:
    training = model.training
    model.eval()
    src, _ = toy.make_batch(task, seqs, model.cfg)
    hyps = greedy(model, src, max_len=[len(s) + 2 for s in seqs])
    model.train(training)
    return sum(h.tokens == toy.target_of(task, s) for h, s in zip(hyps, seqs)) / len(seqs)


def train_toy(settings: ToySettings, probe: list[int] | None = None, report_every: int = 50,
              stop: Callable[[], bool] = lambda: False, pause_s: float = 0.0) -> Iterator[Progress]:
    """Train from scratch; yields progress every `report_every` steps and once at the end (or when stop()).
    pause_s: a sleep after every step, so that a server's other requests get the interpreter in between."""
    s = settings
    g = torch.Generator().manual_seed(s.seed)  # the run's own random numbers: the process's RNG is left alone
    held_out = toy.random_sequences(200, s.n_symbols, s.min_len, s.max_len, torch.Generator().manual_seed(s.seed + 1))
    probe = probe or held_out[0]
    model = Transformer(s.model_config())
    model.init_weights(g)
    optimizer = make_optimizer(model)
    model.train()
    losses, rates = [], []
    for step in range(1, s.steps + 1):
        src, tgt = toy.make_batch(s.task, toy.random_sequences(s.batch_size, s.n_symbols, s.min_len, s.max_len, g),
                                 model.cfg)
        loss, n = train_step(model, optimizer, src, tgt, s.lr(step), 0.1, model.cfg.pad_id, clip_norm=1.0)
        losses.append(float(loss) / int(n))
        rates.append(s.lr(step))
        if pause_s:
            time.sleep(pause_s)
        done = step == s.steps or stop()
        if done or step % report_every == 0:
            output, maps = look(model, s.task, probe)
            kept = copy.deepcopy(model).eval()  # tiny: copying costs far less than the 50 steps between reports
            yield Progress(step, list(losses), list(rates), accuracy(model, s.task, held_out), probe, output, maps,
                           kept, done)
        if done:
            model.eval()
            return
