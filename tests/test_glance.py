"""The model at a glance: what it shows is what the hooks saw (as data), and its picture draws every step and links
every box, on a tiny model and on the shipped ones."""
from __future__ import annotations

import re

import pytest
import torch

from playground import context
from playground.figures import glance
from transformer.decoding import DecodeOptions


def check_data(result) -> glance.Glance:
    g = glance.glance_of(result)
    maps, steps = result.maps, result.translation.steps
    cross = maps.cross.mean(1)[-1]  # (T, S): the last decoder layer, heads averaged
    darkest = len(glance.BLUES) - 1
    assert g.n_steps == len(steps) and len(g.steps) == min(len(steps), glance.MAX_STEPS)
    for t, (shown, step) in enumerate(zip(g.steps, steps)):
        row = cross[t] / cross[t].max()
        assert len(shown.shades) == len(maps.source_tokens)
        assert shown.shades[int(row.argmax())] == darkest  # the darkest piece: where it looked most
        assert all(s != darkest for s, w in zip(shown.shades, row.tolist()) if w < 0.85)  # and no weak one
        assert all(s == 0 for s, w in zip(shown.shades, row.tolist()) if w < 0.1)  # nearly nothing: white
        assert (shown.token, shown.prob) == (step.token, step.prob) and shown.top == step.alternatives[:5]
    for kind in ("encoder", "decoder", "cross"):
        heads = getattr(maps, kind)  # (L, H, q, k)
        assert len(g.maps[kind]) == heads.size(0)
        for layer, m in enumerate(g.maps[kind]):
            torch.testing.assert_close(m, glance.pooled(heads[layer].mean(0).float()))
    assert g.inputs["source"].shape == (len(maps.source_tokens), min(glance.INPUT_DIMS, g.d_model))
    assert bool((g.inputs["target"] >= 0).all()) and g.written == maps.target_tokens
    return g


def check_picture(result) -> str:
    """One look at the SVG: a part per step in the model and in the panel, the first shown, every map a link to its
    own layer, every step's piece and top five written."""
    page, g = glance.figure(result), glance.glance_of(result)
    assert page.count('class="at') == 2 * len(g.steps) and page.count('class="at on"') == 2
    for kind, layers in g.maps.items():
        assert [int(n) for n in re.findall(f'data-focus="view=attention&amp;kind={kind}&amp;layer=(\\d+)"', page)] \
            == list(range(len(layers)))
    assert all(f'class="word">{glance.piece(s.token)}<' in page for s in g.steps)
    return page


def test_the_glance_is_what_the_hooks_saw_and_its_picture_draws_every_step_on_a_tiny_model(translator):
    result = context.run(translator, "tiny", "a b c d e")
    check_data(result)
    check_picture(result)


def test_a_word_start_is_a_gap_and_hostile_pieces_are_text():
    assert glance.piece("▁man") == "man" and glance.starts_word("▁man") and not glance.starts_word("y")
    assert glance.piece("<s>") == "start" and glance.piece("</s>") == "end"
    boxes, texts = glance.chips(["▁<script>", "▁a"], glance.layout(["▁<script>", "▁a"], 0, 0, 70, 1))
    assert "&lt;script&gt;" in texts and "<script>" not in texts
    assert texts.endswith("…</text>") and boxes.count("<rect") == 1  # the piece that did not fit: left out, said so


def test_a_long_map_is_pooled_so_the_page_stays_small():
    m = torch.rand(100, 80)
    assert glance.pooled(m).shape == (glance.MAX_CELLS, glance.MAX_CELLS)
    assert glance.pooled(m[:10, :7]).shape == (10, 7)
    assert glance.shades(torch.tensor([0.0, 0.5, 1.0])) == [0, 4, len(glance.BLUES) - 1]


def test_the_layers_share_the_lanes_width_and_never_overlap():
    for n in (1, 4, 6, 12):
        at = glance.Layout(n)
        right_edges = [at.layer_x(i) + at.layer_w for i in range(n)]
        assert right_edges[-1] == pytest.approx(at.right)
        assert all(at.layer_x(i + 1) - right_edges[i] == pytest.approx(at.gap) for i in range(n - 1))
        assert all(at.cross_x(i) >= at.layer_x(i) + 6 + at.dec_map for i in range(n))  # two maps side by side


@pytest.mark.slow
@pytest.mark.parametrize("options", [DecodeOptions(), DecodeOptions(strategy="sample", seed=3)])
def test_the_shipped_models_pictures_follow_their_hooks_and_stay_tens_of_kilobytes(translators, options):
    for pair, translator in translators.items():
        result = context.run(translator, pair, "A young man in a red jacket is riding his bicycle past an old church.",
                             options)
        check_data(result)
        page = check_picture(result)
        assert 10_000 < len(page.encode()) < 80_000, pair  # tens of kB, however long the translation
