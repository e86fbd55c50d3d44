"""benchmarks/checkpoint_cost.py: a checkpoint grown for timing (--grow) translates as the one it grew from, in its
new shape, and a click's parts (--parts) are each measured."""
from __future__ import annotations

import torch

from benchmarks.checkpoint_cost import PARTS, grown, once, timed
from transformer import Translator
from transformer.checkpoint import save_checkpoint
from transformer.model import Transformer

from conftest import synthetic_pairs, tiny_config


def test_a_grown_checkpoint_translates_as_before_and_each_part_is_timed(tokenizer, tmp_path):
    torch.manual_seed(0)
    model = Transformer(tiny_config(vocab_size=len(tokenizer), norm_first=True)).eval()
    save_checkpoint(tmp_path / "small", model, tokenizer, fp16=True)  # as grown() saves it
    small = Translator.load(tmp_path / "small", device="cpu")
    big = Translator.load(grown(tmp_path / "small", "96:3:2", tmp_path / "big"), device="cpu")
    assert (big.cfg.d_ff, big.cfg.n_encoder_layers, big.cfg.n_decoder_layers) == (96, 3, 2)
    assert sum(p.numel() for p in big.model.parameters()) > sum(p.numel() for p in small.model.parameters())
    for text in synthetic_pairs(5, seed=3)[0]:
        assert big.translate(text).target_tokens == small.translate(text).target_tokens
    seconds = once(timed(big), "en-de", synthetic_pairs(1)[0][0])
    assert len(seconds) == len(PARTS) and all(s > 0 for s in seconds)
