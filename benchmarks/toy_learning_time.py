"""How long the "Train a tiny one" defaults take to learn each toy task here: python benchmarks/toy_learning_time.py

Prints, per task, the first report at which held-out exact match reaches 95 %, its wall time, and the final figures.
"""
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import torch

from transformer.training import live, toy

torch.set_num_threads(2)
for task in toy.TASKS:
    t0, learned = time.perf_counter(), None
    for p in live.train_toy(live.ToySettings(task=task), report_every=50):
        if learned is None and p.accuracy >= 0.95:
            learned = (p.step, time.perf_counter() - t0)
    total = time.perf_counter() - t0
    when = f"95 % at step {learned[0]} after {learned[1]:.1f} s" if learned else "never reached 95 %"
    print(f"{task:12s} {when}; {p.step} steps in {total:.1f} s, final exact match {p.accuracy:.0%}")
