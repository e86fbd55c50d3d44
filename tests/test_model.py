"""The network: attention maths, masks, positional encoding, tied embeddings, the KV cache."""
from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from transformer import ModelConfig, Transformer, capture_attention, greedy
from transformer.model import MultiHeadAttention, PositionalEncoding
from transformer.decoding import new_cache

from conftest import random_tokens, tiny_config


def mha_pair(cfg: ModelConfig) -> tuple[MultiHeadAttention, nn.MultiheadAttention]:
    torch.manual_seed(1)
    ours = MultiHeadAttention(cfg).eval()
    ref = nn.MultiheadAttention(cfg.d_model, cfg.n_heads, batch_first=True).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
        ref.out_proj.weight.copy_(ours.w_o.weight)
        ref.out_proj.bias.copy_(ours.w_o.bias)
    return ours, ref


@pytest.mark.parametrize("watched", [False, True], ids=["fused", "tapped"])
def test_attention_equals_torch_multihead_attention(cfg, watched):
    ours, ref = mha_pair(cfg)
    g = torch.Generator().manual_seed(0)
    query, memory = torch.randn(2, 5, cfg.d_model, generator=g), torch.randn(2, 7, cfg.d_model, generator=g)
    pad = torch.zeros(2, 7, dtype=torch.bool)
    pad[1, 4:] = True  # the second sentence has 3 padding positions
    seen = []
    handle = ours.attn_probs.register_forward_hook(lambda m, i, o: seen.append(o)) if watched else None
    out = ours(query, memory, ~pad[:, None, None, :])
    expected, weights = ref(query, memory, memory, key_padding_mask=pad, average_attn_weights=False)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    if watched:
        handle.remove()
        torch.testing.assert_close(seen[0], weights, atol=1e-6, rtol=1e-5)  # the tap holds the real probabilities


def test_causal_self_attention_equals_torch_with_causal_mask(cfg):
    ours, ref = mha_pair(cfg)
    x = torch.randn(3, 6, cfg.d_model)
    causal = torch.ones(6, 6, dtype=torch.bool).tril()
    expected, _ = ref(x, x, x, attn_mask=~causal)
    torch.testing.assert_close(ours(x, x, causal), expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_fused_path_equals_hooked_path(norm_first):
    """Unwatched attention uses PyTorch's fused kernel; watched attention goes through the tap."""
    torch.manual_seed(0)
    model = Transformer(tiny_config(norm_first=norm_first)).eval()
    src, tgt = random_tokens(3, 9, 40), random_tokens(3, 7, 40, seed=1)
    src[2, 6:] = 0
    fused = model(src, tgt)
    with capture_attention(model) as rec:
        hooked = model(src, tgt)
    assert rec.sentence(0).encoder.shape[0] == 2  # the hooks really did run
    torch.testing.assert_close(fused, hooked, atol=1e-5, rtol=1e-5)


def test_decoder_position_does_not_see_the_future(model):
    src, tgt = random_tokens(2, 8, 40), random_tokens(2, 6, 40, seed=1)
    changed = tgt.clone()
    changed[:, 4:] = random_tokens(2, 2, 40, seed=2)
    a, b = model(src, tgt), model(src, changed)
    torch.testing.assert_close(a[:, :4], b[:, :4], atol=1e-6, rtol=0)
    assert not torch.allclose(a[:, 4:], b[:, 4:])  # the changed positions themselves do change


def test_padding_does_not_change_real_positions(model):
    src, tgt = random_tokens(1, 7, 40), random_tokens(1, 5, 40, seed=1)
    padded_src = torch.cat([src, torch.zeros(1, 4, dtype=torch.long)], dim=1)
    padded_tgt = torch.cat([tgt, torch.zeros(1, 3, dtype=torch.long)], dim=1)
    torch.testing.assert_close(model.encode(padded_src)[:, :7], model.encode(src), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(model(padded_src, padded_tgt)[:, :5], model(src, tgt), atol=1e-5, rtol=1e-5)


def test_positional_encoding_equals_the_formula():
    cfg = tiny_config(d_model=16, max_len=50)
    pe = PositionalEncoding(cfg).pe
    for pos in (0, 1, 7, 49):
        for i in range(8):
            assert pe[pos, 2 * i].item() == pytest.approx(math.sin(pos / 10000 ** (2 * i / 16)), abs=1e-6)
            assert pe[pos, 2 * i + 1].item() == pytest.approx(math.cos(pos / 10000 ** (2 * i / 16)), abs=1e-6)
    assert "positional.pe" not in Transformer(cfg).state_dict()  # a buffer rebuilt from the config, not learned


def test_one_embedding_matrix_is_shared_three_ways(model, cfg):
    tables = [p for p in model.parameters() if p.shape == (cfg.vocab_size, cfg.d_model)]
    assert len(tables) == 1
    src, tgt = random_tokens(1, 5, 40), random_tokens(1, 4, 40, seed=1)
    before_memory, before_out = model.encode(src), model(src, tgt)
    with torch.no_grad():
        model.embed.table.weight[src[0, 0]] += 1.0  # a source-only token
    assert not torch.allclose(model.encode(src), before_memory)  # encoder input uses it
    with torch.no_grad():
        model.embed.table.weight[7] += 1.0
    after = model(src, tgt)
    assert not torch.allclose(after[..., 7], before_out[..., 7])  # the output projection uses it


def test_embeddings_are_scaled_by_sqrt_d_model(model, cfg):
    tokens = random_tokens(1, 3, 40)
    torch.testing.assert_close(model.embed(tokens), model.embed.table(tokens) * math.sqrt(cfg.d_model))


def model_and_padded_batch(norm_first: bool, T: int) -> tuple[Transformer, torch.Tensor, torch.Tensor]:
    """An eval-mode tiny model, two sources of 9 (the second padded after 5) and two targets of T."""
    torch.manual_seed(0)
    src, tgt = random_tokens(2, 9, 40), random_tokens(2, T, 40, seed=1)
    src[1, 5:] = 0
    return Transformer(tiny_config(norm_first=norm_first)).eval(), src, tgt


@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_decoding_equals_uncached(norm_first):
    model, src, tgt = model_and_padded_batch(norm_first, 8)
    with torch.no_grad():
        full = model(src, tgt)  # (B, T, V)
        memory = model.encode(src)
        cache = new_cache(model, src)
        stepwise = [model.decode_step(tgt[:, t : t + 1], memory, cache) for t in range(tgt.size(1))]
        cache2 = new_cache(model, src)
        first = model.decode_step(tgt[:, :5], memory, cache2)  # several positions at once, then one by one
        rest = [model.decode_step(tgt[:, t : t + 1], memory, cache2) for t in range(5, 8)]
    torch.testing.assert_close(torch.stack(stepwise, dim=1), full, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(first, full[:, 4], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(torch.stack(rest, dim=1), full[:, 5:], atol=1e-5, rtol=1e-5)
    assert cache.length == 8 and cache.cross_k[0].shape == (2, 4, 9, 8)  # (B, H, S, Dh), projected once


def test_a_tap_is_watched_only_while_a_live_hook_is_on_it(model):
    tap = model.decoder.layers[0].cross_attn.attn_probs
    assert not tap.watched and not tap.recording
    live = [False]
    handle = tap.register_forward_hook(lambda m, i, o: None, live=lambda: live[0], records=True)
    assert not tap.watched  # registered, but not live for this caller
    live[0] = True
    assert tap.watched and tap.recording
    handle.remove()
    assert not tap.watched and tap.n_watchers == 0
    fired = []
    tap.register_forward_hook(lambda m, i, o: fired.append(o)).remove()
    tap(torch.ones(1))
    assert fired == []  # removed from torch's hooks too: nothing runs
    with tap.register_forward_hook(lambda m, i, o: None):  # a plain hook: always live, not recording
        assert tap.watched and not tap.recording
    assert not tap.watched


def test_a_hook_registered_before_decoding_sees_every_step(model):
    """With any hook on the model, new caches take the module path, so the hook runs at every step."""
    seen = []
    handle = model.decoder.layers[1].feed_forward.register_forward_hook(lambda m, i, o: seen.append(o.shape))
    try:
        hyp = greedy(model, random_tokens(1, 6, 40), 5)[0]
    finally:
        handle.remove()
    assert len(seen) == len(hyp.steps) and seen[0] == (1, 1, model.cfg.d_model)


def test_cache_reorder_follows_the_index(model):
    src = random_tokens(3, 5, 40)
    memory = model.encode(src)
    cache = new_cache(model, src)
    with torch.no_grad():
        model.decode_step(random_tokens(3, 2, 40), memory, cache)
    before = cache.self_k[1].clone()
    cache.reorder(torch.tensor([2, 2, 0]))
    torch.testing.assert_close(cache.self_k[1], before[[2, 2, 0]])


def test_output_is_log_probabilities(model):
    out = model(random_tokens(2, 5, 40), random_tokens(2, 4, 40, seed=1))
    torch.testing.assert_close(out.exp().sum(-1), torch.ones(2, 4), atol=1e-5, rtol=1e-5)


def test_config_rejects_heads_that_do_not_divide_d_model():
    with pytest.raises(ValueError, match="divisible"):
        ModelConfig(d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="unknown"):
        ModelConfig.from_dict({"d_model": 32, "colour": "red"})


def test_attention_dropout_in_training_on_both_paths():
    """Training mode drops attention probabilities on the fused path as on the tapped one (same rate)."""
    torch.manual_seed(0)
    model = Transformer(tiny_config(attn_dropout=0.5)).train()
    src, tgt = random_tokens(4, 9, 40), random_tokens(4, 7, 40, seed=1)
    outs = [model(src, tgt) for _ in range(2)]
    assert not torch.allclose(outs[0], outs[1])  # dropout is on
    model.eval()
    torch.testing.assert_close(model(src, tgt), model(src, tgt))  # and off in eval
    model.train()
    with capture_attention(model) as rec:
        model(src, tgt)
    probs = rec.sentence(0).encoder  # the tap sees probabilities before dropout: rows still sum to 1
    torch.testing.assert_close(probs.sum(-1), torch.ones(probs.shape[:-1]), atol=1e-5, rtol=0)


def test_marian_with_our_weights_computes_our_log_probabilities():
    """Our encoder-decoder is the architecture HF's MarianMTModel implements: the same weights, the same numbers."""
    pytest.importorskip("transformers")
    from transformer.interop.marian import marian_copy

    torch.manual_seed(0)
    model = Transformer(tiny_config()).eval()
    hf = marian_copy(model)
    src, tgt = random_tokens(2, 7, 40), random_tokens(2, 5, 40, seed=1)
    src[1, 5:] = 0
    with torch.no_grad():
        ours = model(src, tgt)
        logits = hf(input_ids=src, attention_mask=src.ne(0), decoder_input_ids=tgt).logits
    torch.testing.assert_close(logits.log_softmax(-1), ours, atol=1e-4, rtol=1e-4)
