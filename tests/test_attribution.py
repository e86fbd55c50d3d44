"""Attributions of one output token over the source and the target prefix, on tiny random models."""
from __future__ import annotations

import pytest
import torch

from transformer.attribution import attention_norm, gradient_x_input

from conftest import random_tokens


@pytest.fixture
def pair():
    src, tgt = random_tokens(1, 7, 40), random_tokens(1, 5, 40, seed=1)
    tgt[0, 0] = 1  # <s>
    return src, tgt


@pytest.mark.parametrize("method", ["attention_norm", "gradient_x_input"])
def test_shares_cover_the_source_and_the_prefix_sum_to_one_and_are_finite(model, pair, method):
    src, tgt = pair
    for step in range(tgt.size(1)):
        a = (attention_norm(model, src, tgt, step) if method == "attention_norm"
             else gradient_x_input(model, src, tgt, step, token=7))
        assert a.source.shape == (7,) and a.prefix.shape == (step + 1,)
        both = torch.cat([a.source, a.prefix])
        assert bool(torch.isfinite(both).all()) and bool((both >= 0).all())
        assert float(both.sum()) == pytest.approx(1.0, abs=1e-5) and 0 < a.source_share < 1
    assert sum(len(m._forward_hooks) for m in model.modules()) == 0
    assert all(p.grad is None for p in model.parameters())  # the model is left as it was


def test_gradient_x_input_gives_padding_nothing_and_the_model_a_real_gradient(model, pair):
    src, tgt = pair
    src[0, 5:] = 0  # padding: masked from attention, so the prediction cannot depend on it
    a = gradient_x_input(model, src, tgt, step=1, token=9)
    assert float(a.source[5:].sum()) == 0.0 and float(a.source[:5].min()) > 0
    b = gradient_x_input(model, src, tgt, step=1, token=10)
    assert not torch.allclose(a.source, b.source)  # another token's log-probability leans on other inputs


def test_attention_norm_weighs_attention_by_what_the_value_carries(model, pair):
    """Scaling one source token's value vectors to zero removes its share, whatever its attention weight."""
    src, tgt = pair
    before = attention_norm(model, src, tgt, step=2)
    block = model.attention_blocks()["cross"][-1]
    original = block.w_v.forward

    def silence_token_3(x):  # the value projection of source position 3 becomes 0
        out = original(x)
        return out * (torch.arange(out.size(1)) != 3)[None, :, None] if out.size(1) == 7 else out

    block.w_v.forward = silence_token_3
    try:
        after = attention_norm(model, src, tgt, step=2)
    finally:
        del block.w_v.forward
    assert float(before.source[3]) > 0 and float(after.source[3]) == pytest.approx(0.0, abs=1e-7)
