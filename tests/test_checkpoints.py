"""The shipped checkpoints: they load, translate val sentences sensibly and score above a floor on val.

Floors (checkpoints/floors.json, next to what was measured) sit 10 or more points below each checkpoint's
scores and far above what a broken model gets: an under-trained model that writes fluent German ignoring
the source scores BLEU about 9 on val, a random one about 0. So they catch a broken model, a wrong
tokenizer or a decoding regression without flaking on thread-count noise.
"""
from __future__ import annotations

import json

import pytest
import torch

from transformer.training import floors

from conftest import DATA_DIR, SHIPPED, shipped_pairs

FLOORS = json.loads((SHIPPED / "floors.json").read_text()) if (SHIPPED / "floors.json").is_file() else {}
pytestmark = pytest.mark.slow
needs_data = pytest.mark.skipif(not DATA_DIR.is_dir(), reason="needs ../shared/data/multi30k")
TATOEBA = DATA_DIR.parent / "tatoeba"
needs_tatoeba = pytest.mark.skipif(not TATOEBA.is_dir(), reason="needs ../shared/data/tatoeba")


def test_every_pair_has_a_floor_and_a_small_checkpoint():
    assert shipped_pairs(), "no checkpoints shipped"
    for pair in shipped_pairs():
        assert pair in FLOORS, f"checkpoints/floors.json has no floor for {pair}"
        size = sum(p.stat().st_size for p in (SHIPPED / pair).rglob("*") if p.is_file())  # the timeline too
        assert size <= 60 * 1024 * 1024, f"{pair} is {size / 2**20:.1f} MiB; a shipped pair stays under 60 MiB"


@needs_data
@needs_tatoeba
@pytest.mark.parametrize("pair", shipped_pairs())
def test_every_shipped_pair_keeps_the_words_its_training_pairs_write(pair):
    """words.json (the page's "left in English" and "made up") holds every word the corpora's training pairs write,
    counted as count-words counts them; the classroom corpus adds its own (compared as subsets: it may grow after
    training)."""
    from transformer.training.train import training_pairs
    from transformer.words import TrainingWords

    kept = TrainingWords.load(SHIPPED / pair)
    corpora = TrainingWords.count(*training_pairs([DATA_DIR, TATOEBA], pair), pair.split("-")[1])
    assert corpora.english <= kept.english and corpora.both <= kept.both and corpora.written <= kept.written
    assert kept.language == corpora.language
    assert {"tom", "pizza"} <= kept.both and "because" in kept.english - kept.both


@needs_data
@pytest.mark.parametrize("pair", shipped_pairs())
def test_a_handful_of_val_sentences_translate_sensibly(translators, pair):
    made = floors.val_sentences(translators[pair], DATA_DIR)
    for s, out, r, chrf in made:
        assert out[:1].isupper(), out  # keeps case
        if s.rstrip()[-1:] in ".!?":
            assert out.rstrip()[-1:] in ".!?", out  # and the sentence's final punctuation
        assert chrf >= FLOORS[pair]["sentence_chrf_min"], (s, out, r)
    assert sum(chrf for *_, chrf in made) / len(made) >= FLOORS[pair]["sentence_chrf_mean"], made


@needs_data
@pytest.mark.parametrize("pair", shipped_pairs())
def test_a_hundred_val_sentences_score_above_the_floor(translators, pair):
    scores = floors.val100(translators[pair], DATA_DIR)
    assert scores["bleu"] >= FLOORS[pair]["val100_bleu"], scores
    assert scores["chrf"] >= FLOORS[pair]["val100_chrf"], scores


@needs_tatoeba
@pytest.mark.parametrize("pair", shipped_pairs())
def test_a_hundred_everyday_sentences_score_above_the_floor(translators, pair):
    """Our held-out Tatoeba val split (every reference of a sentence): the models know everyday language too."""
    scores = floors.tatoeba100(translators[pair], TATOEBA)
    assert scores["bleu"] >= FLOORS[pair]["tatoeba_val100_bleu"], scores
    assert scores["chrf"] >= FLOORS[pair]["tatoeba_val100_chrf"], scores


@needs_tatoeba
@pytest.mark.parametrize("pair", shipped_pairs())
def test_everyday_sentences_typed_in_a_hurry_score_above_the_floor(translators, pair):
    """The same hundred sentences all lowercase, with no final punctuation, and in capitals."""
    for how in floors.TYPED:
        assert floors.tatoeba100(translators[pair], TATOEBA, how)["bleu"] >= FLOORS[pair]["tatoeba_val100_typed_bleu"], how


@pytest.mark.parametrize("pair", shipped_pairs())
def test_the_timeline_was_recorded_and_its_snapshots_are_small(translators, pair):
    """Every epoch's translations of the curated examples, and int8 snapshots under 20 MB in all."""
    from transformer.training import timeline

    tr = translators[pair]
    epochs = timeline.recorded_epochs(tr.metrics)
    # A later stage records all of its own epochs, numbered on from the stage before; of the earlier stages, the
    # translations made at their snapshots are kept. A snapshot is kept while it reads the shipped vocabulary.
    _, first, last = tr.metrics.stage_epochs()[-1]
    start = first - 1
    this_stage = list(range(start + 1, last + 1))
    assert epochs[len(epochs) - len(this_stage):] == this_stage and all(e <= start for e in epochs[:-len(this_stage)])
    assert set(timeline.snapshots(tr)) <= set(epochs)
    examples = json.loads((SHIPPED.parent / "assets" / "examples.json").read_text())
    assert tr.metrics.timeline_sources == examples
    first, last = timeline.translations_at(tr.metrics, 1), timeline.translations_at(tr.metrics, epochs[-1])
    assert [r.final for r in first] == [r.at_epoch for r in last]
    assert sum(r.at_epoch == r.final for r in first) <= 1  # epoch 1 does not translate yet
    size = sum(p.stat().st_size for p in (SHIPPED / pair / "timeline").iterdir())
    assert timeline.snapshots(tr) and size < 20 * 1024 * 1024
    stages = timeline.attention_over_epochs(tr, examples[0])
    assert [label for label, _ in stages] == [f"epoch {e}" for e in timeline.snapshots(tr)] + ["shipped"]
    shapes = {tuple(m.cross.shape) for _, m in stages}
    assert len(shapes) == 1  # one sentence pair read by every stage
    for _, maps in stages:
        assert torch.allclose(maps.cross.sum(-1), torch.ones(()), atol=1e-4)
    early, shipped = stages[0][1].cross[-1].mean(0), stages[-1][1].cross[-1].mean(0)
    assert not torch.allclose(early, shipped, atol=0.05)  # training changed where it looks
