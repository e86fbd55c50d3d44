"""Inside one head, the families' masks and attention rollout: re-derived from hooked tensors, checked against them."""
from __future__ import annotations

import pytest
import torch

from transformer import Translator
from transformer.interpret.capture import KINDS
from transformer.interpret.mechanics import ALLOWED, CAUSAL, PADDING, mask_reasons, rollout, walk_head
from transformer.interpret import analyses

from conftest import SHIPPED


def check_every_head(translator, text):
    result = translator.translate(text)
    inspection = analyses.inspect(translator, text, result, internals=True)
    worst = 0.0
    for kind in KINDS:
        maps = getattr(inspection.maps, kind)  # (L, H, q, k): what the Attention view draws
        for layer, attn in enumerate(translator.model.attention_blocks()[kind]):
            inside = inspection.internals[kind][layer]
            for head in range(translator.cfg.n_heads):
                for query in range(maps.size(2)):
                    walk = walk_head(inside, head, query, attn.w_o.weight, attn.w_o.bias)
                    torch.testing.assert_close(walk.weights, maps[layer, head, query], atol=1e-6, rtol=0)
                    assert walk.row_error < 1e-6 and walk.output_error < 1e-5
                    assert walk.mix_error < 1e-6 * max(1.0, float(walk.output.abs().max())) * 10  # fp32 sums
                    assert walk.shares.sum() == pytest.approx(1.0, abs=1e-5)
                    worst = max(worst, walk.row_error)
            if kind == "decoder":  # the causal mask, as the block received it
                assert torch.equal(inside.allowed, torch.ones_like(inside.allowed).tril())
            else:
                assert bool(inside.allowed.all())  # one sentence: nothing to mask
    return worst


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_inside_one_head_rederives_the_hooked_rows_and_outputs(tokenizer, norm_first):
    from transformer import Transformer

    from conftest import tiny_config

    torch.manual_seed(0)
    tr = Translator(Transformer(tiny_config(vocab_size=len(tokenizer), norm_first=norm_first)), tokenizer)
    assert check_every_head(tr, "A man walks in the park.") < 1e-6


@pytest.mark.skipif(not (SHIPPED / "en-de").is_dir(), reason="needs the shipped checkpoint")
def test_inside_one_head_on_the_shipped_checkpoint():
    tr = Translator.load(SHIPPED / "en-de", device="cpu")
    assert check_every_head(tr, "Two young children are playing with a red ball in the park.") < 1e-6


def test_walk_head_refuses_positions_outside_the_sentence(translator):
    inside = analyses.inspect(translator, "A dog.", translator.translate("A dog."), internals=True).internals["cross"][0]
    attn = translator.model.decoder.layers[0].cross_attn
    with pytest.raises(ValueError, match="head must be from 0 to 3"):
        walk_head(inside, 9, 0, attn.w_o.weight, attn.w_o.bias)
    with pytest.raises(ValueError, match="query must be a position"):
        walk_head(inside, 0, 99, attn.w_o.weight, attn.w_o.bias)


def test_a_padded_batch_shows_padding_and_the_causal_mask(translator):
    texts = ["A dog.", "A big red dog runs in the park with a small child."]
    short, long = analyses.inspect_batch(translator, texts, ["Ein Hund.", "Ein großer roter Hund läuft im Park."])
    assert short["source_pad"].any() and not long["source_pad"].any()
    enc = short["encoder"][0].allowed  # (S, S) with S the longer source
    assert torch.equal(enc, ~short["source_pad"][None, :].expand_as(enc))
    reasons = mask_reasons(short["decoder"][0].allowed, short["target_pad"])
    T = reasons.size(0)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    assert bool((reasons[future & ~short["target_pad"][None, :]] == CAUSAL).all())
    assert bool((reasons[:, short["target_pad"]] == PADDING).all()) == bool(short["target_pad"].any())
    assert bool((reasons[~future & ~short["target_pad"][None, :]] == ALLOWED).all())
    cross = mask_reasons(short["cross"][0].allowed, short["source_pad"])
    assert set(cross.unique().tolist()) == {ALLOWED, PADDING}


def test_rollout_rows_sum_to_one_and_match_a_hand_computed_example():
    maps = torch.softmax(torch.randn(3, 2, 5, 5), dim=-1)
    r = rollout(maps)
    torch.testing.assert_close(r.sum(-1), torch.ones(5))
    # Two layers, one head each, two tokens: A1 = [[1, 0], [.5, .5]], A2 = [[.2, .8], [0, 1]]
    a1, a2 = torch.tensor([[1.0, 0.0], [0.5, 0.5]]), torch.tensor([[0.2, 0.8], [0.0, 1.0]])
    # With the residual: (A1 + I) / 2 = [[1, 0], [.25, .75]], (A2 + I) / 2 = [[.6, .4], [0, 1]], product A2' A1'
    expected = torch.tensor([[0.7, 0.3], [0.25, 0.75]])
    torch.testing.assert_close(rollout(torch.stack([a1[None], a2[None]])), expected)
    causal = torch.softmax(torch.randn(2, 2, 4, 4).masked_fill(~torch.ones(4, 4, dtype=torch.bool).tril(), -1e9), -1)
    assert bool((rollout(causal).triu(1).abs() < 1e-6).all())  # the decoder's rollout stays causal
