"""Attributions of one output token over the source and the target prefix, on tiny random models."""
from __future__ import annotations

import json

import pytest
import torch

from transformer import Transformer
from transformer.attribution import (METHODS, alti_block, attention_norm, contributions,
                                     decoder_rollout, deletion_test, explain, gradient_source_shares, gradient_x_input,
                                     integrated_gradients)
from transformer.capture import capture_attention, hide_source
from transformer.errors import InputError

from conftest import random_tokens, tiny_config


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


def hooks_left(model) -> int:
    return sum(len(m._forward_hooks) for m in model.modules())


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_every_method_covers_the_source_and_the_prefix_sums_to_one_and_is_finite(pair, norm_first):
    torch.manual_seed(0)
    model = Transformer(tiny_config(norm_first=norm_first)).eval()
    src, tgt = pair
    chosen = tgt[0, 1:].tolist() + [2]
    for step in (0, 2, 4):
        expl = explain(model, src, tgt, chosen, step, ig_steps=16)
        assert set(expl.methods) == set(METHODS)
        for name, a in expl.methods.items():
            both = a.source if a.prefix is None else torch.cat([a.source, a.prefix])
            assert a.source.shape == (7,) and (a.prefix is None) == (name == "attention"), name
            assert a.prefix is None or a.prefix.shape == (step + 1,), name
            assert bool(torch.isfinite(both).all()) and bool((both >= 0).all()), name
            assert float(both.sum()) == pytest.approx(1.0, abs=1e-5), name
        assert len(expl.source_share["alti_plus"]) == len(expl.source_share["gradient_x_input"]) == 5
        json.dumps(expl.to_dict())  # every number can be downloaded
    assert hooks_left(model) == 0 and all(p.grad is None for p in model.parameters())


def test_integrated_gradients_are_complete_with_enough_steps(model, pair):
    src, tgt = pair
    coarse, fine = (integrated_gradients(model, src, tgt, 3, token=11, n_steps=n) for n in (4, 256))
    assert coarse.gap == pytest.approx(fine.gap)  # log p(input) - log p(baseline) does not depend on the steps
    assert fine.completeness_error < 0.01 * abs(fine.gap)
    assert fine.completeness_error < coarse.completeness_error
    for bad in (3, 257):
        with pytest.raises(InputError, match="between 4 and 256"):
            integrated_gradients(model, src, tgt, 3, token=11, n_steps=bad)


def test_contrastive_gradients_explain_the_difference_of_two_log_probabilities(model, pair):
    """Gradients are linear in the target: IG of log p(a) - log p(b) is IG(a) - IG(b), point by point."""
    src, tgt = pair
    a, b, both = (integrated_gradients(model, src, tgt, 2, token=t, alternative=alt, n_steps=32)
                  for t, alt in ((11, None), (12, None), (11, 12)))
    assert both.gap == pytest.approx(a.gap - b.gap, abs=1e-5)
    assert both.total == pytest.approx(a.total - b.total, abs=1e-4)
    plain, contrast = gradient_x_input(model, src, tgt, 2, 11), gradient_x_input(model, src, tgt, 2, 11, 12)
    assert not torch.allclose(plain.source, contrast.source)


def test_alti_block_gives_each_input_its_closeness_to_the_output():
    torch.manual_seed(0)
    resid, per_key = torch.randn(3, 8), torch.randn(3, 4, 8)
    per_key[:, 2] = 0  # a key that adds nothing gets nothing, whatever its attention weight was
    c = alti_block(resid, per_key, torch.zeros(8))
    assert c.shape == (3, 5) and torch.allclose(c.sum(-1), torch.ones(3)) and bool((c >= 0).all())
    assert float(c[:, 3].abs().max()) == 0.0
    alone = alti_block(resid, torch.zeros(3, 4, 8), torch.zeros(8))  # the output is the residual alone
    assert torch.allclose(alone[:, 0], torch.ones(3))
    norm = torch.nn.LayerNorm(8)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 2)
    post = alti_block(resid, per_key, torch.zeros(8), norm)  # through a post-norm layer norm
    assert torch.allclose(post.sum(-1), torch.ones(3)) and float(post[:, 3].abs().max()) == 0.0


def test_decoder_rollout_carries_the_encoders_mixing_and_keeps_rows_summing_to_one():
    S, T = 3, 2
    encoder = torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # output 0 is input 1, and so on
    selfs = [torch.eye(T)]
    crosses = [torch.tensor([[0.5, 1.0 / 2, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])]  # (T, 1 + S): residual first
    rolled = decoder_rollout(encoder, selfs, crosses)
    assert rolled.shape == (T, S + T) and torch.allclose(rolled.sum(-1), torch.ones(T))
    assert rolled[0].tolist() == [0.0, 0.5, 0.0, 0.5, 0.0]  # half its own input, half encoder output 0 = source 1
    assert rolled[1].tolist() == [0.0, 0.0, 1.0, 0.0, 0.0]


def test_contributions_are_causal_and_give_padding_nothing(model, pair):
    src, tgt = pair
    src[0, 5:] = 0  # padding
    rolled = contributions(model, src, tgt)
    for table in (rolled.alti_plus, rolled.rollout):  # (T, S + T)
        assert torch.allclose(table.sum(-1), torch.ones(tgt.size(1)), atol=1e-5)
        assert float(table[:, 5:7].abs().max()) == 0.0  # padded source positions
        assert float(table[:, 7:].triu(1).abs().max()) == 0.0  # position t owes nothing to later positions


def test_hiding_source_tokens_masks_them_in_every_cross_attention_and_leaves_the_model_as_it_was(model, pair):
    src, tgt = pair
    with torch.no_grad():
        before = model(src, tgt)
        keep = torch.ones(1, 7, dtype=torch.bool)
        keep[0, [1, 4]] = False
        with hide_source(model, keep), capture_attention(model) as rec:
            hidden = model(src, tgt)
        after = model(src, tgt)
    cross = rec.sentence(0).cross  # (L, H, T, S) as the hooks let the model use it
    assert float(cross[..., [1, 4]].abs().max()) == 0.0
    assert torch.allclose(cross.sum(-1), torch.ones_like(cross.sum(-1)), atol=1e-6)
    assert not torch.allclose(hidden, before)
    assert torch.equal(before, after) and hooks_left(model) == 0  # exactly as before
    with pytest.raises(InputError, match="at least one source token"):
        with hide_source(model, torch.zeros(1, 7, dtype=torch.bool)):
            pass


def test_deletion_test_ranks_methods_by_how_much_hiding_their_top_tokens_costs(model, pair):
    src, tgt = pair
    token = int(model(src, tgt)[0, 2].argmax())
    probe = torch.zeros(7)
    out = deletion_test(model, src, tgt, 2, token, {"a": torch.arange(7.0), "b": -torch.arange(7.0), "c": probe},
                        draws=5)
    assert out.ks == [1, 2, 3] and set(out.drops) == {"a", "b", "c"} and len(out.random) == 3
    with torch.no_grad():  # method a's top-2 are source positions 6 and 5: hide them by hand
        keep = torch.ones(1, 7, dtype=torch.bool)
        keep[0, [5, 6]] = False
        with hide_source(model, keep):
            p = float(model(src, tgt)[0, 2, token].exp())
    assert out.drops["a"][1] == pytest.approx(out.prob - p, abs=1e-6)
    assert out.most_faithful() == max(out.drops, key=lambda m: sum(out.drops[m]))
    short = deletion_test(model, src[:, :2], tgt, 2, token, {"a": torch.arange(2.0)})
    assert short.ks == [1]  # at least one source token always stays visible
    assert hooks_left(model) == 0


def test_every_steps_gradient_share_in_one_pass_equals_each_steps_own(model, pair):
    src, tgt = pair
    chosen = [11, 12, 13, 14, 2]
    together = gradient_source_shares(model, src, tgt, chosen)
    alone = [gradient_x_input(model, src, tgt, t, chosen[t]).source_share for t in range(5)]
    assert together.tolist() == pytest.approx(alone, abs=1e-5)


def test_explain_refuses_a_step_outside_the_output(model, pair):
    src, tgt = pair
    with pytest.raises(InputError, match="between 0 and 4"):
        explain(model, src, tgt, [5] * 5, 5)
    with pytest.raises(InputError, match="below 40"):
        explain(model, src, tgt, [5] * 5, 1, alternative=40)


def test_translator_explain_labels_every_token(translator):
    out = translator.translate("a man runs")
    expl = translator.explain("a man runs", out, step=1, alternative=out.steps[1].alternatives[1][0])
    assert expl.labels["output_tokens"] == out.target_tokens + ["</s>"]
    assert expl.labels["decoder_inputs"][0] == "<s>" and len(expl.methods["alti_plus"].prefix) == 2
    assert expl.alternative == translator.tokenizer.sp.piece_to_id(out.steps[1].alternatives[1][0])
