"""The shipped checkpoints: they load, translate val sentences sensibly and score above a floor on val.

Floors (checkpoints/floors.json, next to what was measured) sit 10 or more points below each checkpoint's
scores and far above what a broken model gets: an under-trained model that writes fluent German ignoring
the source scores BLEU about 9 on val, a random one about 0. So they catch a broken model, a wrong
tokenizer or a decoding regression without flaking on thread-count noise.
"""
from __future__ import annotations

import json

import pytest
from sacrebleu.metrics import CHRF

from transformer.data import read_pair
from transformer.evaluate import score_translations

from conftest import DATA_DIR, SHIPPED, shipped_pairs

FLOORS = json.loads((SHIPPED / "floors.json").read_text()) if (SHIPPED / "floors.json").is_file() else {}
pytestmark = pytest.mark.slow
needs_data = pytest.mark.skipif(not DATA_DIR.is_dir(), reason="needs ../shared/data/multi30k")


def test_every_pair_has_a_floor_and_a_small_checkpoint():
    assert shipped_pairs(), "no checkpoints shipped"
    for pair in shipped_pairs():
        assert pair in FLOORS, f"checkpoints/floors.json has no floor for {pair}"
        size = sum(p.stat().st_size for p in (SHIPPED / pair).iterdir() if p.is_file())
        assert size <= 10 * 1024 * 1024, f"{pair} is {size / 2**20:.1f} MiB; a Space takes 10 MB without LFS"


@needs_data
@pytest.mark.parametrize("pair", shipped_pairs())
def test_a_handful_of_val_sentences_translate_sensibly(translators, pair):
    src, ref = read_pair(DATA_DIR, "val", *pair.split("-"))
    chrf, scores = CHRF(), []
    for s, r in zip(src[:8], ref[:8]):
        out = translators[pair].translate(s, "beam", beam_size=4).text
        assert out[:1].isupper(), out  # keeps case
        if s.rstrip()[-1:] in ".!?":
            assert out.rstrip()[-1:] in ".!?", out  # and the sentence's final punctuation
        scores.append(chrf.sentence_score(out, [r]).score)
        assert scores[-1] >= FLOORS[pair]["sentence_chrf_min"], (s, out, r)
    assert sum(scores) / len(scores) >= FLOORS[pair]["sentence_chrf_mean"], scores


@needs_data
@pytest.mark.parametrize("pair", shipped_pairs())
def test_a_hundred_val_sentences_score_above_the_floor(translators, pair):
    src, ref = read_pair(DATA_DIR, "val", *pair.split("-"))
    hyps = [t.text for t in translators[pair].translate_batch(src[100:200], "beam", beam_size=4)]
    scores = score_translations(hyps, ref[100:200])
    assert scores["bleu"] >= FLOORS[pair]["val100_bleu"], scores
    assert scores["chrf"] >= FLOORS[pair]["val100_chrf"], scores
