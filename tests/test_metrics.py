"""metrics.json's one schema: old files load, nothing is lost on a round trip, stages nest and know their epochs."""
from __future__ import annotations

import json

from transformer.metrics import Metrics, corpora_of

THREE_STAGES = {  # as a third stage writes it, less its rows' details
    "command": "python -m transformer train --data-dir d/multi30k --data-dir d/tatoeba --source-noise 0.3",
    "train_config": {"pair": "en-fr", "epochs": 3, "source_noise": 0.3},
    "epochs": [{"epoch": e, "step": 10 * e} for e in range(1, 9)],
    "first_stage": {"command": "python -m transformer train --data-dir=d/multi30k --data-dir d/tatoeba",
                    "train_config": {"epochs": 2}, "from": "checkpoints/en-fr",
                    "first_stage": {"command": "python -m transformer train --data-dir .data", "data": ["multi30k"],
                                    "train_config": {"epochs": 3}}},
    "a_key_from_the_future": [1, 2],
}


def test_an_old_file_loads_and_round_trips_with_every_key():
    m = Metrics.from_dict(json.loads(json.dumps(THREE_STAGES)))
    assert m.pair == "en-fr" and m.data == ["multi30k", "tatoeba"]  # read from the command: not recorded then
    assert m.extra == {"a_key_from_the_future": [1, 2]} and m.first_stage.extra == {"from": "checkpoints/en-fr"}
    again = m.to_dict()
    assert Metrics.from_dict(again) == m
    assert again["first_stage"]["first_stage"]["data"] == ["multi30k"]  # recorded data wins over the command


def test_stages_nest_first_to_last_and_know_their_epochs():
    m = Metrics.from_dict(THREE_STAGES)
    assert [len(s.command) > 0 for s in m.stages()] == [True, True, True]
    assert m.stages()[0].data == ["multi30k"] and m.stages()[-1] is m
    assert [(start, end) for _, start, end in m.stage_epochs()] == [(1, 3), (4, 5), (6, 8)]
    assert m.trained_on() == ["multi30k", "tatoeba"]


def test_a_checkpoint_without_metrics_reads_as_empty(tmp_path):
    m = Metrics.load(tmp_path)
    assert m == Metrics() and m.stages() == [m] and m.pair == "en-de"
    m.test["x"] = {"bleu": 1.0}
    m.save(tmp_path)
    assert Metrics.load(tmp_path / "metrics.json").test == {"x": {"bleu": 1.0}}


def test_corpora_are_read_from_either_spelling_of_the_option():
    assert corpora_of("train --data-dir ../a/multi30k/ --data-dir=../a/tatoeba") == ["multi30k", "tatoeba"]
    assert corpora_of("train 'unbalanced") == []
