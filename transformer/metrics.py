"""metrics.json: how a checkpoint was made and how it scores. One schema writes it and every reader reads it.

A later training stage keeps the stage it started from under `first_stage` (in this same schema, nested), so a
checkpoint trained in three stages holds all three. Files written before this schema load too: unknown keys are
kept as they were, and `data` (the corpora trained on) is read from the command when it was not recorded.
"""
from __future__ import annotations

import dataclasses
import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from .files import write_json


@dataclass
class Metrics:
    command: str = ""  # the `python -m transformer train ...` that made this stage
    hardware: str = ""
    torch: str = ""
    world_size: int = 1
    parameters: int = 0
    model_config: dict = field(default_factory=dict)
    train_config: dict = field(default_factory=dict)  # TrainConfig.to_dict() of this stage
    data: list[str] = field(default_factory=list)  # the corpora this stage trained on: "multi30k", "tatoeba"
    timeline_sources: list[str] = field(default_factory=list)  # the sentences translated after every epoch
    epochs: list[dict] = field(default_factory=list)  # one row per epoch, every stage's (train.end_of_epoch)
    first_stage: Metrics | None = None  # the stage this one was trained on from
    train_wall_s: float | None = None  # seconds of training steps in this stage
    averaged_epochs: list[int] = field(default_factory=list)
    val_bleu_averaged_greedy: float | None = None
    test: dict[str, dict] = field(default_factory=dict)  # evaluate --record NAME: scores and how they were made
    class_sets: dict[str, dict] = field(default_factory=dict)  # evaluate --class-sets --record: first minute, names, numbers
    unsure: dict = field(default_factory=dict)  # tools/calibrate_unsure.py: the probability under which a piece is marked
    imported: dict | None = None  # an imported OPUS-MT model: its source and licence, instead of a training run
    extra: dict = field(default_factory=dict)  # keys this schema does not know, kept as they were

    # -- reading and writing ---------------------------------------------------------

    @classmethod
    def from_dict(cls, d: dict | None) -> Metrics:
        d = dict(d or {})
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        values = {k: d.pop(k) for k in list(d) if k in known}
        if isinstance(values.get("first_stage"), dict):
            values["first_stage"] = cls.from_dict(values["first_stage"])
        metrics = cls(**values, extra=d)
        if not metrics.data and metrics.command:
            metrics.data = corpora_of(metrics.command)
        return metrics

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("extra", "first_stage")}
        if self.first_stage is not None:
            out["first_stage"] = self.first_stage.to_dict()
        return out | self.extra

    @classmethod
    def load(cls, path: str | Path) -> Metrics:
        """A checkpoint's metrics.json (path: the file or its directory); an empty Metrics when there is none."""
        path = Path(path)
        path = path / METRICS if path.is_dir() else path
        return cls.from_dict(json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else cls()

    def save(self, path: str | Path) -> None:
        path = Path(path)
        write_json(path / METRICS if path.is_dir() else path, self.to_dict())

    # -- what readers ask ------------------------------------------------------------

    @property
    def pair(self) -> str:
        return self.train_config.get("pair", "en-de")

    def stages(self) -> list[Metrics]:
        """The training stages, first to last (this one last)."""
        chain, stage = [], self
        while stage is not None:
            chain.append(stage)
            stage = stage.first_stage
        return chain[::-1]

    def trained_on(self) -> list[str]:
        """Every corpus any stage trained on, in the order first seen."""
        return list(dict.fromkeys(name for stage in self.stages() for name in stage.data))

    def stage_epochs(self) -> list[tuple[Metrics, int, int]]:
        """(stage, its first epoch, its last epoch) per stage, first to last. Each stage numbers its epochs on from
        the stage before and records how many it ran (train_config.epochs); the last one runs to the last row (a
        resumed run may have changed its count)."""
        stages, start, out = self.stages(), 1, []
        last = self.epochs[-1]["epoch"] if self.epochs else start + self.train_config.get("epochs", 1) - 1
        for stage in stages[:-1]:
            end = start + stage.train_config.get("epochs", 0) - 1
            out.append((stage, start, end))
            start = end + 1
        return out + [(stages[-1], start, last)]


METRICS = "metrics.json"


def corpora_of(command: str) -> list[str]:
    """The corpus folders a train command named with --data-dir (for files written before `data` was recorded)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    folders = [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--data-dir"]
    folders += [w.split("=", 1)[1] for w in words if w.startswith("--data-dir=")]
    return list(dict.fromkeys(Path(f.rstrip("/")).name for f in folders))
