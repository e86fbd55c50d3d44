"""What the checkpoint tests measure, one function each, shared by the tests (tests/test_checkpoints.py, which hold
each figure to its floor in checkpoints/floors.json) and by tools/measure_floors.py (which prints them all, so that
the floors can sit well below)."""
from __future__ import annotations

from pathlib import Path

from sacrebleu.metrics import CHRF

from ..translator import Translator
from .data import Corpus, read_pair
from .evaluate import score_translations
from .noise import perturb

TYPED = ("lower", "nopunct", "upper")  # the typed variants: all lowercase, no final punctuation, capitals


def val_sentences(tr: Translator, data_dir: Path | str, n: int = 8) -> list[tuple[str, str, str, float]]:
    """The first n Multi30k val sentences, beam 4: (source, output, reference, sentence chrF) each."""
    src, ref = read_pair(data_dir, "val", *tr.metrics.pair.split("-"))
    chrf = CHRF()
    outs = [tr.translate(s, strategy="beam", beam_size=4).text for s in src[:n]]
    return [(s, o, r, chrf.sentence_score(o, [r]).score) for s, o, r in zip(src, outs, ref)]


def val100(tr: Translator, data_dir: Path | str) -> dict:
    """Multi30k val sentences 100-199, beam 4: BLEU and chrF."""
    src, ref = read_pair(data_dir, "val", *tr.metrics.pair.split("-"))
    return score_translations([t.text for t in tr.translate_batch(src[100:200], strategy="beam", beam_size=4)], ref[100:200])


def tatoeba100(tr: Translator, tatoeba_dir: Path | str, typed: str | None = None) -> dict:
    """Our held-out Tatoeba val split, its first 100 sentences (every reference of each), greedy; `typed`: one of
    TYPED, the sources as a class types them."""
    src, streams = Corpus("tatoeba", Path(tatoeba_dir), *tr.metrics.pair.split("-")).split("val")
    src = [perturb(s, typed) if typed else s for s in src[:100]]
    return score_translations([t.text for t in tr.translate_batch(src, strategy="greedy")],
                              [stream[:100] for stream in streams if any(stream[:100])])


def measure(tr: Translator, data_dir: Path | str, tatoeba_dir: Path | str) -> dict:
    """Every figure floors.json holds a floor for, under the same names."""
    sentences = [chrf for *_, chrf in val_sentences(tr, data_dir)]
    val, everyday = val100(tr, data_dir), tatoeba100(tr, tatoeba_dir)
    return {"sentence_chrf_min": min(sentences), "sentence_chrf_mean": sum(sentences) / len(sentences),
            "val100_bleu": val["bleu"], "val100_chrf": val["chrf"],
            "tatoeba_val100_bleu": everyday["bleu"], "tatoeba_val100_chrf": everyday["chrf"],
            "tatoeba_val100_typed_bleu": min(tatoeba100(tr, tatoeba_dir, how)["bleu"] for how in TYPED)}
