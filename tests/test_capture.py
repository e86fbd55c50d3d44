"""Hooks: recording attention maps and switching heads off, also with many threads on one model."""
from __future__ import annotations

import threading

import pytest
import torch

from transformer import ablate_heads, beam_search, capture_attention, greedy
from transformer import Tap
from transformer.interpret.capture import capture_internals, hooks, parse_head, record, tap_names

from conftest import random_tokens


def n_hooks(model) -> int:
    """Forward hooks on every module of the model (taps, attention blocks, W^Q, W^O, the positional encoding)."""
    return sum(len(m._forward_hooks) for m in model.modules())


def test_hooks_are_removed_on_exit_and_on_error(model, cfg):
    blocks = 2 * cfg.n_decoder_layers + cfg.n_encoder_layers  # attention blocks: encoder self, decoder self, cross
    expected = {"attention": blocks, "record": 1, "internals": 6 * blocks}  # internals: block, W^Q, W^K, W^V, tap, W^O
    contexts = {"attention": capture_attention, "record": lambda m: record(m, ["positional"]),
                "internals": capture_internals}
    src, tgt = random_tokens(1, 6, 40), random_tokens(1, 4, 40, seed=1)
    before = n_hooks(model)
    for name, context in contexts.items():
        with context(model):
            assert n_hooks(model) == before + expected[name], name
            model(src, tgt)
        assert n_hooks(model) == before, name
    with pytest.raises(RuntimeError, match="boom"):
        with capture_attention(model), record(model, ["positional"]), capture_internals(model), \
                ablate_heads(model, [("cross", 0, 1)]):
            assert n_hooks(model) == before + sum(expected.values()) + 1
            model(src, tgt)
            raise RuntimeError("boom")
    assert n_hooks(model) == before
    assert all(tap.n_watchers == 0 for tap in model.modules() if isinstance(tap, Tap))


def test_capture_during_incremental_decoding_matches_one_teacher_forced_pass(model):
    src = random_tokens(1, 6, 40)
    with capture_attention(model) as rec:
        hyp = greedy(model, src, 8)[0]
    stepwise = rec.sentence(0)
    tgt = torch.tensor([[model.cfg.bos_id] + [s.token for s in hyp.steps][:-1]])  # the decoder's inputs
    with capture_attention(model) as rec2:
        model(src, tgt)
    forced = rec2.sentence(0)
    for kind in ("encoder", "decoder", "cross"):
        torch.testing.assert_close(getattr(stepwise, kind), getattr(forced, kind), atol=1e-5, rtol=1e-5)


def test_ablating_a_head_changes_the_output_and_leaving_restores_it_exactly(model):
    src, tgt = random_tokens(2, 7, 40), random_tokens(2, 5, 40, seed=1)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    before = model(src, tgt)
    with ablate_heads(model, [("cross", 1, 2), ("encoder", 0, 0)]):
        ablated = model(src, tgt)
        with capture_attention(model) as rec:
            model(src, tgt)
    assert not torch.allclose(ablated, before, atol=1e-4)
    maps = rec.sentence(0)
    assert maps.cross[1, 2].abs().max() == 0 and maps.encoder[0, 0].abs().max() == 0  # those heads gave nothing
    assert maps.cross[1, 1].abs().max() > 0
    assert torch.equal(model(src, tgt), before)  # bit-exact after leaving
    assert all(torch.equal(v, state[k]) for k, v in model.state_dict().items())


def test_ablating_every_head_of_a_layer_zeroes_its_attention_output(model):
    x = torch.randn(1, 4, model.cfg.d_model)
    attn = model.encoder.layers[0].self_attn
    with ablate_heads(model, [("encoder", 0, h) for h in range(model.cfg.n_heads)]):
        out = attn(x, x, None)
    torch.testing.assert_close(out, attn.w_o.bias.expand_as(out))  # only W_O's bias is left


def test_bad_head_names_are_refused_with_a_message(model):
    with pytest.raises(ValueError, match="no head cross:5:0"):
        with ablate_heads(model, [("cross", 5, 0)]):
            pass
    with pytest.raises(ValueError, match="kind:layer:head"):
        parse_head("cross-1")
    assert parse_head("decoder:1:3") == ("decoder", 1, 3)


def test_threads_capturing_at_once_never_see_each_others_maps(model):
    """Two threads record and ablate on one model at the same time; each gets what a serial run gets."""
    inputs = {name: (random_tokens(1, n, 40, seed=n), random_tokens(1, n - 2, 40, seed=n + 1))
              for name, n in (("a", 6), ("b", 9))}
    ablation = {"a": [("encoder", 1, 0), ("cross", 0, 3)], "b": []}
    expected = {}
    for name, (src, tgt) in inputs.items():
        with ablate_heads(model, ablation[name]), capture_attention(model) as rec:
            out = model(src, tgt)
        expected[name] = (out, rec.sentence(0))

    barrier, results, errors = threading.Barrier(2), {}, []

    def worker(name):
        try:
            src, tgt = inputs[name]
            with ablate_heads(model, ablation[name]), capture_attention(model) as rec:
                barrier.wait()  # both threads have their hooks registered before either runs the model
                outs = [model(src, tgt) for _ in range(20)]
                barrier.wait()
            results[name] = (outs, rec)
        except Exception as e:  # surfaced by the assertion below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,)) for n in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for name, (outs, rec) in results.items():
        out, maps = expected[name]
        assert all(torch.equal(o, out) for o in outs)  # no ablation leaked across threads
        assert len(rec.calls["encoder"][0]) == 20  # exactly this thread's 20 passes were recorded
        for kind in ("encoder", "decoder", "cross"):
            for layer, calls in enumerate(rec.calls[kind]):
                for call in calls:
                    assert torch.equal(call[0], getattr(maps, kind)[layer])
    assert n_hooks(model) == 0


def test_taps_are_named_modules(model):
    names = {name for name, _ in model.named_modules() if name.endswith("attn_probs")}
    assert "decoder.layers.1.cross_attn.attn_probs" in names
    assert {n for layers in tap_names(model).values() for n in layers} == names and len(names) == 6


def test_record_and_hooks_address_modules_by_name(model):
    src, tgt = random_tokens(1, 6, 40), random_tokens(1, 4, 40, seed=1)
    with record(model, ["positional", "decoder.layers.1"], inputs=True) as seen:
        out = model(src, tgt)
    (enc_in,), enc_out = seen["positional"][0]  # the encoder's call comes first, then the decoder's
    assert enc_in.shape == enc_out.shape == (1, 6, model.cfg.d_model) and len(seen["positional"]) == 2
    torch.testing.assert_close(enc_out, enc_in + model.positional.pe[:6])  # eval: no dropout after the sum
    assert seen["decoder.layers.1"][0][1].shape == (1, 4, model.cfg.d_model)
    with hooks(model, {"output": lambda module, inputs, output: torch.zeros_like(output)}):  # a hook may replace
        uniform = model(src, tgt)
    torch.testing.assert_close(uniform.exp(), torch.full_like(uniform, 1 / model.cfg.vocab_size))
    assert torch.equal(model(src, tgt), out) and n_hooks(model) == 0
    with pytest.raises(KeyError, match="decoder.layers.9"):
        with record(model, ["decoder.layers.9"]):
            pass
    assert n_hooks(model) == 0


def test_another_callers_capture_does_not_change_my_numbers(model):
    """While one thread records, another thread's passes keep the fused path, give bit-identical outputs and may batch."""
    src, tgt = random_tokens(2, 7, 40), random_tokens(2, 5, 40, seed=1)
    alone = model(src, tgt)
    entered, release = threading.Event(), threading.Event()

    def recorder():
        with capture_attention(model), ablate_heads(model, [("cross", 0, 0)]):
            entered.set()
            release.wait(timeout=30)

    t = threading.Thread(target=recorder)
    t.start()
    entered.wait(timeout=30)
    try:
        assert n_hooks(model) > 0
        assert torch.equal(model(src, tgt), alone)
        assert len(greedy(model, random_tokens(3, 6, 40), 5)) == 3  # their recorder does not refuse my batch
    finally:
        release.set()
        t.join()


def test_a_plain_hook_on_a_tap_always_gets_its_maps(model):
    seen = []
    handle = model.decoder.layers[0].cross_attn.attn_probs.register_forward_hook(lambda m, i, o: seen.append(o.shape))
    try:
        model(random_tokens(1, 6, 40), random_tokens(1, 3, 40, seed=1))
    finally:
        handle.remove()
    assert seen == [torch.Size([1, 4, 3, 6])]


def test_recording_while_rows_move_is_refused_and_ablation_is_not(model):
    """Batched and beam decoding drop and reorder rows; a recorder cannot follow them, so it is told plainly."""
    with capture_attention(model):
        with pytest.raises(ValueError, match="teacher-forced pass"):
            greedy(model, random_tokens(2, 6, 40), 5)
        with pytest.raises(ValueError, match="teacher-forced pass"):
            beam_search(model, random_tokens(1, 6, 40), 5, beam_size=2)
    with ablate_heads(model, [("cross", 0, 0)]):  # per-call and per-row: batches and beams are fine
        ablated = beam_search(model, random_tokens(2, 6, 40), 5, beam_size=2)
    assert len(ablated) == 2

