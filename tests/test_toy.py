"""The toy tasks a tiny model trains on in the page."""
from __future__ import annotations

import pytest
import torch

from transformer.training import toy
from transformer import ModelConfig


def test_each_task_transforms_the_sequence_as_named():
    seq = [7, 4, 9, 5, 6]
    assert toy.target_of("copy", seq) == [7, 4, 9, 5, 6]
    assert toy.target_of("reverse", seq) == [6, 5, 9, 4, 7]
    assert toy.target_of("sort", seq) == [4, 5, 6, 7, 9]
    assert toy.target_of("swap halves", seq) == [9, 5, 6, 7, 4]
    with pytest.raises(ValueError, match="unknown task"):
        toy.target_of("fly", seq)


def test_random_sequences_respect_lengths_and_symbols_and_repeat_by_seed():
    draw = lambda seed: toy.random_sequences(200, 6, 3, 12, torch.Generator().manual_seed(seed))
    seqs = draw(1)
    assert {len(s) for s in seqs} == set(range(3, 13))
    assert {x for s in seqs for x in s} == set(range(toy.FIRST_SYMBOL, toy.FIRST_SYMBOL + 6))
    assert draw(1) == seqs and draw(2) != seqs


@pytest.mark.parametrize("task", list(toy.TASKS))
def test_batches_frame_and_pad_every_row_with_the_models_ids(task):
    cfg = ModelConfig(vocab_size=12, d_model=8, n_heads=2, pad_id=2, bos_id=3, eos_id=0, unk_id=1)  # not the defaults
    PAD, BOS, EOS = cfg.pad_id, cfg.bos_id, cfg.eos_id
    seqs = [[4, 5, 6], [9, 8, 7, 6, 5]]
    src, tgt = toy.make_batch(task, seqs, cfg)
    assert src.tolist() == [[4, 5, 6, EOS, PAD, PAD], [9, 8, 7, 6, 5, EOS]]
    for row, seq in zip(tgt.tolist(), seqs):
        body = [t for t in row if t != PAD]
        assert body == [BOS] + toy.target_of(task, seq) + [EOS]


def test_typed_sequences_parse_or_say_what_is_wrong():
    assert toy.parse("c a b", 4) == [6, 4, 5] and toy.parse("CAB", 4) == [6, 4, 5]
    assert toy.spell([1, 6, 4, 5, 2]) == "C A B"  # special ids (below FIRST_SYMBOL) are dropped
    with pytest.raises(ValueError, match="only the symbols A B C D"):
        toy.parse("A Z <b>", 4)
    with pytest.raises(ValueError, match="type a sequence"):
        toy.parse("   ", 4)
