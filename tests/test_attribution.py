"""Attributions of one output token over the source and the target prefix, on tiny random models."""
from __future__ import annotations

import functools
import json

import pytest
import torch

from transformer import Transformer
from transformer.interpret.attribution import (METHODS, alti_scores, attention_norm, contributions, decoder_rollout,
                                     deletion_test, explain, gradient_source_shares, gradient_x_input,
                                     integrated_gradients, through_norm)
from transformer.interpret.capture import capture_attention, hide_source
from transformer.errors import InputError
from transformer.interpret import analyses

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
    for bad in (0, 257):
        with pytest.raises(InputError, match="between 1 and 256"):
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


def test_alti_scores_give_each_part_its_closeness_to_the_output():
    torch.manual_seed(0)
    parts = torch.randn(3, 4, 8)
    parts[:, 2] = 0  # a part that adds nothing gets nothing
    c = alti_scores(parts, parts.sum(dim=1))
    assert c.shape == (3, 4) and torch.allclose(c.sum(-1), torch.ones(3)) and bool((c >= 0).all())
    assert float(c[:, 2].abs().max()) == 0.0
    alone = torch.zeros(3, 4, 8)
    alone[:, 1] = torch.randn(3, 8)  # the output is one part alone: it gets everything
    assert torch.allclose(alti_scores(alone, alone.sum(dim=1))[:, 1], torch.ones(3))


def test_the_layer_norm_of_the_sum_is_the_sum_of_the_transformed_parts_plus_beta():
    torch.manual_seed(0)
    parts, bias = torch.randn(3, 5, 8), torch.randn(8)
    norm = torch.nn.LayerNorm(8)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 2), norm.bias.uniform_(-1, 1)
    y = parts.sum(dim=1) + bias
    transformed, out = through_norm(parts, bias, y, norm)
    assert torch.allclose(out, norm(y), atol=1e-5)  # sum L(parts) + L(bias) + beta = LN(y)
    assert through_norm(parts, bias, y, None)[1] is y  # pre-norm: the block's sum is its output


def _hand_alti(block, x_res, x_attn, kv, norm, merge: bool) -> list[list[float]]:
    """ALTI (Ferrando et al. 2022) for one single-head block, one scalar loop at a time: T_i(x_j) = alpha_ij (kv_j W_v
    + b_v) W_o; self-attention adds x_i to T_i(x_i) (merge), cross-attention keeps x_i as a part of its own (first);
    y_i = sum of parts + b_o; post-norm: each part through gamma (p - mean p) / sigma(y); c_ij ~ max(0, |y|_1 - |y - p|_1)."""
    W = {n: getattr(block, n).weight.detach() for n in ("w_q", "w_k", "w_v", "w_o")}
    b = {n: getattr(block, n).bias.detach() for n in ("w_q", "w_k", "w_v", "w_o")}
    D = x_res.size(1)
    rows = []
    for i in range(x_res.size(0)):
        q = W["w_q"] @ x_attn[i] + b["w_q"]
        scores = [float(q @ (W["w_k"] @ kv[j] + b["w_k"])) / D ** 0.5 for j in range(kv.size(0))]
        alpha = torch.tensor(scores).softmax(0)
        parts = [alpha[j] * (W["w_o"] @ (W["w_v"] @ kv[j] + b["w_v"])) for j in range(kv.size(0))]
        if merge:
            parts[i] = parts[i] + x_res[i]
        else:
            parts = [x_res[i]] + parts
        y = sum(parts) + b["w_o"]
        if norm is not None:
            sigma = (((y - y.mean()) ** 2).mean() + norm.eps) ** 0.5
            parts = [norm.weight.detach() * (p - p.mean()) / sigma for p in parts]
            y = norm(y)
        c = [max(0.0, float(y.abs().sum() - (y - p).abs().sum())) for p in parts]
        rows.append([v / sum(c) for v in c])
    return rows


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_alti_plus_of_a_two_token_model_equals_the_papers_formula_worked_by_hand(norm_first):
    """One encoder and one decoder layer, one head, two source and two target tokens: every block's ALTI
    contributions and the rolled-out ALTI+ row against the formula computed scalar by scalar above."""
    torch.manual_seed(3)
    model = Transformer(tiny_config(d_model=8, n_heads=1, n_encoder_layers=1, n_decoder_layers=1, d_ff=16,
                                    norm_first=norm_first)).eval()
    with torch.no_grad():
        for norm in (m for m in model.modules() if isinstance(m, torch.nn.LayerNorm)):
            norm.weight.uniform_(0.5, 1.5), norm.bias.uniform_(-0.5, 0.5)
    src, tgt = torch.tensor([[5, 9]]), torch.tensor([[1, 7]])
    got = contributions(model, src, tgt)
    enc, dec = model.encoder.layers[0], model.decoder.layers[0]
    with torch.no_grad():
        x = model.positional(model.embed(src))[0]  # (2, D): what enters the encoder
        t = model.positional(model.embed(tgt))[0]
        memory = model.encode(src)[0]  # (2, D): the encoder's output, its final norm included
        if norm_first:
            enc_c = _hand_alti(enc.self_attn, x, enc.norm_1(x), enc.norm_1(x), None, merge=True)
            self_c = [[1.0, 0.0], _hand_alti(dec.self_attn, t, dec.norm_1(t), dec.norm_1(t), None, merge=True)[1]]
            after_self = t + dec.self_attn(dec.norm_1(t)[None], dec.norm_1(t)[None], model.causal_mask(2, t.device))[0]
            cross_c = _hand_alti(dec.cross_attn, after_self, dec.norm_2(after_self), memory, None, merge=False)
        else:
            enc_c = _hand_alti(enc.self_attn, x, x, x, enc.norm_1, merge=True)
            self_c = [[1.0, 0.0], _hand_alti(dec.self_attn, t, t, t, dec.norm_1, merge=True)[1]]
            after_self = dec.norm_1(t + dec.self_attn(t[None], t[None], model.causal_mask(2, t.device))[0])
            cross_c = _hand_alti(dec.cross_attn, after_self, after_self, memory, dec.norm_2, merge=False)
    close = functools.partial(torch.testing.assert_close, atol=1e-5, rtol=0)
    close(got.layers[("encoder", 0)], torch.tensor(enc_c))
    close(got.layers[("decoder", 0)], torch.tensor(self_c))  # token 0 sees only itself
    close(got.layers[("cross", 0)], torch.tensor(cross_c))
    for i in range(2):  # ALTI+'s row: the cross block's source parts through the encoder, its residual through self
        source = [sum(cross_c[i][1 + j] * enc_c[j][k] for j in range(2)) for k in range(2)]
        prefix = [cross_c[i][0] * self_c[i][k] for k in range(2)]
        close(got.alti_plus[i], torch.tensor(source + prefix))
    assert got.rebuild_error < 1e-5 and (got.norm_error < 1e-5)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_alti_parts_rebuild_every_hooked_block_output_and_a_wrong_split_is_refused(norm_first, monkeypatch):
    import transformer.interpret.attribution as attribution

    torch.manual_seed(0)
    model = Transformer(tiny_config(norm_first=norm_first)).eval()
    src, tgt = random_tokens(1, 7, 40), random_tokens(1, 5, 40, seed=1)
    got = contributions(model, src, tgt)  # 2 heads, 2 + 2 layers: every block's sum and layer norm checked
    assert got.rebuild_error < 1e-5 and got.norm_error < 1e-5
    original = attribution._per_key
    monkeypatch.setattr(attribution, "_per_key", lambda block, seen: original(block, seen) * 0.5)  # half of each
    with pytest.raises(RuntimeError, match="rebuilt from its parts is off"):
        contributions(model, src, tgt)


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
    expl = analyses.explain(translator, "a man runs", out, step=1, alternative=out.steps[1].alternatives[1][0])
    assert expl.labels["output_tokens"] == out.target_tokens + ["</s>"]
    assert expl.labels["decoder_inputs"][0] == "<s>" and len(expl.methods["alti_plus"].prefix) == 2
    assert expl.alternative == translator.tokenizer.sp.piece_to_id(out.steps[1].alternatives[1][0])


def test_at_the_longest_output_every_projection_is_one_position_per_row_within_the_token_budget():
    """The page allows max_len - 1 decoder inputs: the gradient passes project only the position each row asks about,
    in batches of at most TOKEN_BUDGET tokens, and never write the model's .grad."""
    from transformer.interpret.attribution import TOKEN_BUDGET
    from transformer.interpret.capture import record

    torch.manual_seed(0)
    model = Transformer(tiny_config(max_len=64)).eval()
    src, tgt = random_tokens(1, 20, 40), random_tokens(1, 63, 40, seed=1)
    tgt[0, 0] = 1
    chosen = tgt[0, 1:].tolist() + [2]
    with record(model, ["output"], inputs=True) as calls:
        expl = explain(model, src, tgt, chosen, step=62, ig_steps=256)
    assert len(expl.source_share["gradient_x_input"]) == 63 and expl.integrated.completeness_error < 1.0
    shapes = [x.shape for (x, ), _ in calls["output"]]
    assert shapes and all(len(s) == 2 for s in shapes if s[0] > 1)  # (rows, D): one position per row
    assert max(s[0] for s in shapes) * (20 + 63) <= TOKEN_BUDGET
    assert all(p.grad is None for p in model.parameters())


def test_an_int8_model_explains_what_it_can_and_says_what_it_cannot():
    from transformer.translator import quantize_int8

    torch.manual_seed(0)
    model = quantize_int8(Transformer(tiny_config()).eval())
    src, tgt = random_tokens(1, 7, 40), random_tokens(1, 5, 40, seed=1)
    tgt[0, 0] = 1
    expl = explain(model, src, tgt, tgt[0, 1:].tolist() + [2], step=2)
    assert set(expl.methods) == {"attention", "attention_norm", "alti_plus", "rollout"} and expl.integrated is None
    assert expl.unavailable == ("gradient_x_input", "integrated_gradients") and set(expl.source_share) == {"alti_plus"}
    assert json.loads(json.dumps(expl.to_dict()))["integrated_gradients"] is None
    with pytest.raises(InputError, match="int8 layers do not have"):
        gradient_x_input(model, src, tgt, 2, 7)
