"""Activation patching and DecoderLens, correct by construction: patching all of a layer restores all of the
difference, patching a part with its own activation changes nothing bit for bit, a 1-layer sweep equals the
computation written out, and on the toy copy task only the changed position carries the change."""
from __future__ import annotations

import pytest
import torch

from transformer import DecodeOptions, Transformer, Translator, greedy
from transformer.errors import InputError
from transformer.interpret import patching
from transformer.interpret import analyses

from conftest import tiny_config


def pair_runs(model, first: list[int], second: list[int], prefix_len: int = 4):
    """Both sources' runs on one prefix (the first source's own greedy path), measured for two chosen pieces."""
    src_a, src_b = torch.tensor([first]), torch.tensor([second])  # (1, S) each
    path = greedy(model, src_a, prefix_len)[0].tokens
    tgt_in = torch.tensor([[model.cfg.bos_id] + path[: prefix_len - 1]])  # (1, T)
    a, b = 7, 9  # any two pieces: the measure is their logit difference
    return patching.run_on_prefix(model, src_a, tgt_in, a, b), patching.run_on_prefix(model, src_b, tgt_in, a, b), tgt_in, a, b


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    return Transformer(tiny_config()).eval()


@pytest.mark.parametrize("norm_first", [False, True])
def test_patching_all_of_a_layer_restores_everything_and_nothing_restores_nothing(norm_first):
    torch.manual_seed(1)
    model = Transformer(tiny_config(norm_first=norm_first)).eval()
    first, second, tgt_in, a, b = pair_runs(model, [5, 6, 7, 8, 2], [5, 6, 11, 8, 2])
    S, T = first.src.size(1), tgt_in.size(1)
    for direction, (receiver, donor) in {"denoising": (second, first), "noising": (first, second)}.items():
        layers = range(model.cfg.n_encoder_layers)
        every = patching.patched(model, "encoder", receiver, donor, tgt_in, a, b, [(l, list(range(S))) for l in layers])
        torch.testing.assert_close(patching.shares(every, donor), torch.ones(len(layers)), atol=1e-4, rtol=0)
        last = model.cfg.n_decoder_layers - 1  # the last decoder layer's states are all the output reads
        every = patching.patched(model, "decoder", receiver, donor, tgt_in, a, b, [(last, list(range(T)))])
        torch.testing.assert_close(patching.shares(every, donor), torch.ones(1), atol=1e-4, rtol=0)
        none = patching.patched(model, "encoder", receiver, donor, tgt_in, a, b, [(0, [])])
        assert patching.shares(none, donor).tolist() == [0.0], direction  # an empty patch: exactly nothing


def test_a_patch_with_its_own_activation_gives_the_unpatched_run_bit_for_bit(tiny):
    first, _, tgt_in, a, b = pair_runs(tiny, [5, 6, 7, 8, 2], [5, 6, 11, 8, 2])
    S, T, H = first.src.size(1), tgt_in.size(1), tiny.cfg.n_heads
    for site, width in [("encoder", S), ("decoder", T)] + [(f"heads:{k}", H) for k in ("encoder", "decoder", "cross")]:
        layers = len(patching.site_names(tiny, site))
        rows = [(l, [j]) for l in range(layers) for j in range(width)] + [(l, list(range(width))) for l in range(layers)]
        measured = patching.patched(tiny, site, first, first, tgt_in, a, b, rows)
        assert torch.equal(measured[1:], measured[0].expand(len(rows))), site


def test_a_one_layer_sweep_equals_the_computation_written_out():
    torch.manual_seed(2)
    model = Transformer(tiny_config(n_encoder_layers=1, n_decoder_layers=1)).eval()
    first, second, tgt_in, a, b = pair_runs(model, [5, 6, 7, 8, 2], [5, 9, 7, 12, 2])
    swept = patching.sweep(model, "encoder", second, first, tgt_in, a, b)  # (1, S): denoising
    src = second.src
    with torch.no_grad():
        own = model.encoder.layers[0](model.positional(model.embed(src, source=True)), None)  # (1, S, D)
        donor = model.encoder.layers[0](model.positional(model.embed(first.src, source=True)), None)
        expected = []
        for i in range(src.size(1)):
            x = own.clone()
            x[0, i] = donor[0, i]
            lp = model.decode(tgt_in, model.encoder.final_norm(x), src)[0, -1]  # (V,): the last prefix position
            expected.append(float(lp[a] - lp[b]))
        lp = model.decode(tgt_in, model.encoder.final_norm(own), src)[0, -1]
        base = float(lp[a] - lp[b])
    want = (torch.tensor(expected) - base) / (first.measure - base)
    torch.testing.assert_close(swept[0], want, atol=1e-4, rtol=1e-4)
    heads = patching.sweep(model, "heads:cross", second, first, tgt_in, a, b)  # (1, H)
    assert heads.shape == (1, model.cfg.n_heads) and torch.isfinite(heads).all()


def test_the_translators_patch_names_the_difference_and_skips_what_does_not_align(translator):
    first, second = "a b c d e", "a b c d e f g"
    if translator.translate(first).target_ids == translator.translate(second).target_ids:
        pytest.skip("the tiny model writes the same for both")
    out = analyses.patch(translator, first, second)
    assert out.skipped == {"encoder": "source_lengths_differ", "heads:encoder": "source_lengths_differ"}
    T = len(out.prefix)
    assert out.scores["decoder"].shape == (translator.cfg.n_decoder_layers, T)
    assert out.scores["heads:cross"].shape == (translator.cfg.n_decoder_layers, translator.cfg.n_heads)
    assert out.first_token != out.second_token
    assert out.labels["first_piece"] != out.labels["second_piece"] and set(out.to_dict()["scores"]) == set(out.scores)
    with pytest.raises(InputError, match="translate to the same pieces"):
        analyses.patch(translator, first, first)
    with pytest.raises(InputError, match="direction"):
        analyses.patch(translator, first, second, direction="sideways")
    with pytest.raises(InputError, match="no site"):
        analyses.patch(translator, first, second, sites=["everywhere"])


def test_decoder_lens_at_the_last_layer_is_the_translation(translator):
    lens = analyses.decoder_lens(translator, "a b c d e")
    assert len(lens) == translator.cfg.n_encoder_layers
    assert lens[-1].target_ids == translator.translate("a b c d e").target_ids
    assert all(len(row.steps) >= 1 for row in lens)


@pytest.mark.slow
@pytest.mark.xdist_group("toy")
def test_on_the_copy_task_only_the_changed_position_carries_the_change(toy_run):
    """A model trained to copy (the live view's trainer, ~40 s, shared by the session's tests): change one symbol,
    and patching that source position after the first encoder layer brings the first output back; another position
    does not."""
    last = toy_run("copy")[-1]
    model, exact = last.model, last.accuracy
    assert exact >= 0.9
    first, second = [5, 9, 7, 12, 6, 8], [5, 9, 11, 12, 6, 8]  # position 2 changes
    cfg = model.cfg
    src_a, src_b = torch.tensor([first + [cfg.eos_id]]), torch.tensor([second + [cfg.eos_id]])
    out = patching.patch(model, src_a, src_b, greedy(model, src_a, 10)[0].tokens, greedy(model, src_b, 10)[0].tokens,
                         sites=("encoder",))
    assert out.prefix == [cfg.bos_id, 5, 9] and (out.first_token, out.second_token) == (7, 11)
    early = out.scores["encoder"][0]  # (S,): after the first layer
    assert early[2] >= 0.9 and all(abs(float(early[j])) <= 0.1 for j in range(len(first) + 1) if j != 2), early


@pytest.mark.slow
@pytest.mark.parametrize("pair", ["en-de", "en-fr"])
def test_on_the_shipped_models_whole_layers_restore_all_and_the_lens_ends_at_the_translation(translators, pair):
    tr: Translator = translators[pair]
    out = analyses.patch(tr, "He is tall.", "She is tall.")  # both pairs write the pronoun (Er/Sie, Il/Elle)
    assert out.labels["first_piece"] != out.labels["second_piece"]
    assert out.first_measure > 0 > out.second_measure  # on the shared prefix each run prefers its own piece
    enc = out.scores["encoder"]
    assert enc.shape == (tr.cfg.n_encoder_layers, len(out.labels["first_source"])) and torch.isfinite(enc).all()
    src_a = torch.tensor([tr.source_ids("He is tall.")[0]])
    src_b = torch.tensor([tr.source_ids("She is tall.")[0]])
    tgt_in = torch.tensor([out.prefix])
    a, b = out.first_token, out.second_token
    first, second = patching.run_on_prefix(tr.model, src_a, tgt_in, a, b), patching.run_on_prefix(tr.model, src_b, tgt_in, a, b)
    every = patching.patched(tr.model, "encoder", second, first, tgt_in, a, b,
                             [(l, list(range(src_a.size(1)))) for l in range(tr.cfg.n_encoder_layers)])
    torch.testing.assert_close(patching.shares(every, first), torch.ones(tr.cfg.n_encoder_layers), atol=1e-3, rtol=0)
    for text in ("He is a doctor.", "A dog is running through the snow."):
        lens = analyses.decoder_lens(tr, text)
        assert lens[-1].text == tr.translate(text, DecodeOptions()).text
