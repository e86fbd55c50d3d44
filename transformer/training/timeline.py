"""How a shipped checkpoint learned: what its trainer recorded after every epoch, and its int8 snapshots.

metrics.json keeps, per epoch, the greedy translations of `timeline_sources` (the app's curated examples);
<checkpoint>/timeline/epoch{N}.safetensors keeps the weights at a few early epochs (see train.py).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from ..interpret.capture import AttentionMaps
from ..checkpoint import load_snapshot, snapshot_epochs
from ..errors import InputError
from ..interpret.lens import Lens
from ..metrics import Metrics
from ..interpret import analyses
from ..translator import Translator


@dataclass
class EpochRow:
    source: str
    at_epoch: str  # greedy, after the chosen epoch
    final: str  # greedy, after the last epoch


def recorded_epochs(metrics: Metrics) -> list[int]:
    """The epochs whose translations metrics.json holds (empty for a checkpoint trained without a timeline)."""
    return [row["epoch"] for row in metrics.epochs if row.get("translations")]


def nearest_recorded(metrics: Metrics, epoch: int) -> int:
    """The last epoch at or before `epoch` whose translations were recorded (a second training stage keeps only its
    first stage's snapshot epochs), or the first recorded one."""
    epochs = recorded_epochs(metrics)
    if not epochs:
        raise InputError("this checkpoint was trained without recording a timeline")
    return max((e for e in epochs if e <= epoch), default=epochs[0])


def translations_at(metrics: Metrics, epoch: int) -> list[EpochRow]:
    rows = {row["epoch"]: row for row in metrics.epochs if row.get("translations")}
    if not rows:
        raise InputError("this checkpoint was trained without recording a timeline")
    if not metrics.timeline_sources:
        raise InputError("metrics.json records translations for each epoch but not their sources (timeline_sources)")
    if epoch not in rows:
        raise InputError(f"epoch {epoch} is not recorded; choose one of 1-{max(rows)}")
    last = rows[max(rows)]["translations"]
    now = rows[epoch]["translations"]
    return [EpochRow(src, at, end) for src, at, end in zip(metrics.timeline_sources, now, last)]


def snapshots(translator: Translator) -> list[int]:
    """The epochs whose weights the checkpoint keeps."""
    return snapshot_epochs(translator.path) if translator.path else []


@functools.lru_cache(maxsize=16)
def snapshot(translator: Translator, epoch: int) -> Translator:
    model = load_snapshot(translator.path, epoch, translator.device)
    return Translator(model, translator.tokenizer, translator.metrics, name=f"{translator.name} epoch {epoch}")


def attention_over_epochs(translator: Translator, text: str) -> list[tuple[str, AttentionMaps]]:
    """(label, maps) for every snapshot and for the shipped model, all reading the same sentence pair:
    the source `text` and the shipped model's greedy translation, teacher-forced. Same tokens on every axis,
    so the maps differ only by what each stage of training attends to."""
    final = translator.translate(text)
    return [(label, analyses.attention(t, text, final.text)) for label, t in _stages(translator)]


def lens_over_epochs(translator: Translator, text: str, translation: str) -> list[tuple[str, Lens]]:
    """(label, logit lens) for every snapshot and for the shipped model, on the same pair (`text` and the shipped
    model's `translation`): when in training each decoder layer starts to predict the final choice."""
    return [(label, analyses.lens(t, text, translation)) for label, t in _stages(translator)]


def _stages(translator: Translator) -> list[tuple[str, Translator]]:
    """(label, translator) for every snapshot, then the shipped model."""
    return [(f"epoch {e}", snapshot(translator, e)) for e in snapshots(translator)] + [("shipped", translator)]
