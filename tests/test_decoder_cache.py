"""What the decoder keeps (analyses.decoder_cache): the KVCache read after every step has the shapes the hooked
projections made, equals a teacher-forced pass's keys and values, and decoding without it writes the same."""
from __future__ import annotations

import pytest
import torch

from transformer import Transformer, Translator
from transformer.interpret import analyses

from conftest import tiny_config


@pytest.fixture
def translator(tokenizer) -> Translator:
    torch.manual_seed(3)
    return Translator(Transformer(tiny_config(vocab_size=len(tokenizer))).eval(), tokenizer)


def test_the_caches_sizes_are_the_hooked_projections_rows_at_every_step(translator):
    text, out = "A man walks in the park.", "Ein Mann geht im Park."  # a random model's own may be empty
    model, L = translator.model, translator.cfg.n_decoder_layers
    rows = {(kind, i): [] for kind in ("self", "cross") for i in range(L)}  # what W^K made at each call

    def hook(key):
        return lambda module, args, output: rows[key].append(output.shape[1])  # (1, N, D): N new rows
    handles = [getattr(layer, f"{kind}_attn").w_k.register_forward_hook(hook((kind, i)))
               for i, layer in enumerate(model.decoder.layers) for kind in ("self", "cross")]
    try:
        trace = analyses.decoder_cache(translator, text, out)
    finally:
        for h in handles:
            h.remove()
    T, S, H, Dh = len(translator.decoder_input(out)), len(trace.source), translator.cfg.n_heads, translator.cfg.d_head
    assert len(trace.target) == len(trace.outputs) == len(trace.self_shapes) == T > 4
    for i in range(L):
        assert rows[("self", i)] == [1] * T  # one new row a step ...
        assert [shape[i] for shape in trace.self_shapes] == [(H, t + 1, Dh) for t in range(T)]  # ... kept, growing
        assert rows[("cross", i)] == [S]  # the encoder's keys projected once, at the first step
        assert [shape[i] for shape in trace.cross_shapes] == [(H, S, Dh)] * T
    assert all(trace.cross_kept)  # the very same tensors at every step
    per_step = 2 * L * H * Dh * 4  # a row of keys and one of values in every layer, float32
    assert [b - a for a, b in zip(trace.nbytes, trace.nbytes[1:])] == [per_step] * (T - 1)
    assert trace.nbytes[0] == per_step * (1 + S)


def test_the_cache_holds_what_a_teacher_forced_pass_computes(translator):
    text, out = "Two dogs run on the beach.", "Zwei Hunde laufen am Strand."
    trace = analyses.decoder_cache(translator, text, out)
    seen = analyses.inspect(translator, text, out, internals=True).internals
    for i in range(translator.cfg.n_decoder_layers):
        torch.testing.assert_close(trace.self_k[i], seen["decoder"][i].k, atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(trace.self_v[i], seen["decoder"][i].v, atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(trace.cross_k[i], seen["cross"][i].k, atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(trace.cross_v[i], seen["cross"][i].v, atol=1e-5, rtol=1e-4)
    assert trace.outputs[:-1] == trace.target[1:] and trace.outputs[-1] == "</s>" and len(trace.target) > 4


def test_decoding_without_the_cache_writes_the_same_and_both_are_timed(translator):
    timing = analyses.cache_timing(translator, "A girl feeds a dog in the garden.", repeats=2)
    assert timing.with_cache == timing.without_cache == translator.translate("A girl feeds a dog in the garden.").text
    assert timing.steps >= 1 and timing.cached_s > 0 and timing.uncached_s > 0
    assert timing.ratio == pytest.approx(timing.uncached_s / timing.cached_s)


def test_the_figure_marks_the_row_added_and_the_table_says_the_sizes(translator):
    from playground.figures.cache import cache_figure, size_table

    trace = analyses.decoder_cache(translator, "A man walks in the park.", "Ein Mann geht im Park.")
    L, S = translator.cfg.n_decoder_layers, len(trace.source)
    fig = cache_figure(trace, 2)
    heatmaps = [t for t in fig.data if t.type == "heatmap"]
    assert len(heatmaps) == 2 * L and [len(h.y) for h in heatmaps[:2]] == [3, S]  # 3 rows at step 3; S always
    assert len(heatmaps[0].z[0]) == 2 * translator.cfg.d_model + 4  # keys, a gap, values
    marked = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(marked) == L and all(s.y0 == 1.5 and s.y1 == 2.5 for s in marked)  # the third row, in every layer
    table = size_table(trace, 2)
    H, Dh = translator.cfg.n_heads, translator.cfg.d_head
    assert f"3 × {H} × {Dh} = {3 * H * Dh:,}" in table and f"{S} × {H} × {Dh}" in table
    assert f"{trace.nbytes[2] / 1024:,.1f} KB" in table
