"""The model at a glance: every step's picture says what the hooks saw, on a tiny model and on the shipped ones."""
from __future__ import annotations

import html
import re

import pytest

from playground import glance, results
from transformer.decoding import DecodeOptions


def step_group(svg: str, t: int) -> str:
    """Step t's parts: in the model's boxes and in the "Next piece" panel."""
    starts = [m.start() for m in re.finditer(f'data-at="{t}"', svg)]
    assert len(starts) == 2
    return "".join(svg[start: svg.index("</g>", start)] for start in starts)


def source_shades(group: str, n: int) -> list[int]:
    """The shade of blue (0: white, 8: the darkest) a step gives each of the sentence's n pieces."""
    shades = [0] * n
    for i, level in re.findall(r'<use href="#c(\d+)" class="s(\d)"/>', group):
        shades[int(i)] = int(level)
    return shades


def check(result):
    page = glance.figure(result)
    maps, steps = result.maps, result.translation.steps
    cross = maps.cross.mean(1)[-1]  # (T, S): the last decoder layer, heads averaged, as the picture reads it
    assert page.count('class="at') == 2 * len(steps) and page.count('class="at on"') == 2  # step 1 shown first
    for t, step in enumerate(steps):
        group = step_group(page, t)
        shades = source_shades(group, len(maps.source_tokens))
        row = cross[t] / cross[t].max()
        darkest = len(glance.BLUES) - 1
        assert shades[int(row.argmax())] == darkest  # the darkest piece: where it looked most
        assert all(s != darkest for s, w in zip(shades, row.tolist()) if w < 0.85)  # and no weak one
        assert all(s == 0 for s, w in zip(shades, row.tolist()) if w < 0.1)  # nearly nothing: white
        assert f'class="word">{glance.piece(step.token)}<' in group
        best = [html.escape(glance.piece(tok)[:11]) for tok, _ in step.alternatives[:5]]
        assert re.findall(r'class="piece(?: chosen)?">([^<]*)<', group)[-len(best):] == best
    assert len(re.findall(r'data-open="attention" data-focus="[^"]*"><title>Encoder layer', page)) == maps.encoder.size(0)
    for kind, stack in (("encoder", maps.encoder), ("decoder", maps.decoder), ("cross", maps.cross)):  # each opens its own
        assert [int(n) for n in re.findall(f'data-focus="view=attention&amp;kind={kind}&amp;layer=(\\d+)"', page)] \
            == list(range(stack.size(0)))
    assert page.count("Decoder layer") == 2 * maps.decoder.size(0)  # masked self-attention and cross-attention
    return page


def test_every_step_shows_where_the_last_layer_looked_and_its_top_five_on_a_tiny_model(translator):
    check(results.run(translator, "tiny", "a b c d e"))


def test_a_word_start_is_a_gap_and_hostile_pieces_are_text():
    assert glance.piece("▁man") == "man" and glance.starts_word("▁man") and not glance.starts_word("y")
    assert glance.piece("<s>") == "start" and glance.piece("</s>") == "end"
    boxes, texts = glance.chips(["▁<script>", "▁a"], glance.layout(["▁<script>", "▁a"], 0, 0, 70, 1))
    assert "&lt;script&gt;" in texts and "<script>" not in texts
    assert texts.endswith("…</text>") and boxes.count("<rect") == 1  # the piece that did not fit: left out, said so


def test_a_long_map_is_pooled_so_the_page_stays_small():
    import torch

    m = torch.rand(100, 80)
    assert glance.pooled(m).shape == (glance.MAX_CELLS, glance.MAX_CELLS)
    assert glance.pooled(m[:10, :7]).shape == (10, 7)


@pytest.mark.slow
@pytest.mark.parametrize("options", [DecodeOptions(), DecodeOptions(strategy="sample", seed=3)])
def test_the_shipped_models_pictures_follow_their_hooks_and_stay_tens_of_kilobytes(translators, options):
    for pair, translator in translators.items():
        result = results.run(translator, pair, "A young man in a red jacket is riding his bicycle past an old church.",
                             options)
        page = check(result)
        assert 10_000 < len(page.encode()) < 80_000, pair  # tens of kB, however long the translation
