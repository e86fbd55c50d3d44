"""The logit lens: every decoder layer's output through the model's own final norm and output projection."""
from __future__ import annotations

import pytest
import torch

from transformer import Transformer, Translator
from transformer.interpret.lens import Lens
from transformer.interpret import analyses

from conftest import tiny_config


def tiny_translator(tokenizer, norm_first: bool, seed: int) -> tuple[Translator, Transformer]:
    """A tiny random model (post-norm or pre-norm) and its translator."""
    torch.manual_seed(seed)
    model = Transformer(tiny_config(vocab_size=len(tokenizer), norm_first=norm_first)).eval()
    return Translator(model, tokenizer), model


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_the_last_layers_lens_is_the_models_own_distribution(tokenizer, norm_first):
    tr, model = tiny_translator(tokenizer, norm_first, seed=0)
    text = "A man walks in the park."
    out = tr.translate(text, max_len=8)
    lens = analyses.lens(tr, text, out)
    L, T = model.cfg.n_decoder_layers, len(out.target_ids) + 1
    assert lens.log_probs.shape == (L, T, len(tokenizer)) and len(lens.chosen) == T
    src = torch.tensor([tr.source_ids(text)[0]])  # (1, S)
    tgt = torch.tensor([tr.decoder_input(out)])  # (1, T)
    with torch.no_grad():
        own = model(src, tgt)[0]  # (T, V)
    torch.testing.assert_close(lens.log_probs[-1], own, atol=1e-6, rtol=0)
    assert not torch.allclose(lens.log_probs[0], own, atol=1e-3)  # an earlier layer says something else
    assert lens.chosen[:-1] == out.target_ids and lens.chosen[-1] == model.cfg.eos_id
    assert sum(len(m._forward_hooks) for m in model.modules()) == 0  # the hooks are gone


def test_ranks_probabilities_and_the_first_layer_that_gets_it_right():
    # Two layers, three steps, four tokens; the chosen tokens are 2, 0, 3
    probs = torch.tensor([[[.1, .2, .6, .1], [.3, .4, .2, .1], [.4, .3, .2, .1]],
                          [[.1, .1, .7, .1], [.5, .2, .2, .1], [.3, .3, .1, .3]]])
    lens = Lens(probs.log(), [2, 0, 3])
    assert lens.chosen_rank().tolist() == [[0, 1, 3], [0, 0, 0]]
    torch.testing.assert_close(lens.chosen_prob(), torch.tensor([[.6, .3, .1], [.7, .5, .3]]))
    assert lens.first_top1_layer() == [0, 1, 1]
    ids, best = lens.top()
    assert ids.tolist() == [[2, 1, 0], [2, 0, 0]] and best[1, 1].item() == pytest.approx(0.5)
    assert Lens(probs.log(), [3, 3, 2]).first_top1_layer() == [-1, -1, -1]


def test_where_each_piece_settled_and_what_the_layers_before_preferred():
    # Three layers, three steps, four tokens: each layer's top choice per step, as a table
    tops = [[1, 3, 0], [2, 0, 1], [2, 3, 1]]  # layer -> step -> top token
    probs = torch.full((3, 3, 4), 0.1)
    for layer, row in enumerate(tops):
        for t, tok in enumerate(row):
            probs[layer, t, tok] = 0.7
    lens = Lens(probs.log(), [2, 3, 2])  # the last step's chosen token is never any layer's top (a sampled piece)
    assert lens.settled_layer() == [1, 2, -1]
    assert lens.earlier_choices() == [[1], [0], [0, 1]]  # step 1: the first layer's 3 came back at the last


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_the_commitment_agrees_with_the_lens_and_its_last_layer_gives_the_translation(tokenizer, norm_first):
    from transformer.decoding import DecodeOptions

    tr, model = tiny_translator(tokenizer, norm_first, seed=1)
    text = "A man walks in the park."
    out = tr.translate(text, DecodeOptions(stutter_guard=False, max_len=8))  # greedy: every piece the argmax
    made = analyses.commitment(tr, text, out)
    read = analyses.lens(tr, text, out)
    ids, _ = read.top()  # (L, T)
    L = model.cfg.n_decoder_layers
    assert made.pieces == tokenizer.pieces(read.chosen) and made.decoder_layers == L
    for t, layer in enumerate(made.settled[:len(out.target_ids)]):  # (the </s> after them: max_len stopped it)
        assert 1 <= layer <= L  # greedy: the last layer's top choice is the piece written
        assert all(ids[k, t] == read.chosen[t] for k in range(layer - 1, L))
        assert layer == 1 or ids[layer - 2, t] != read.chosen[t]  # the layer before did not have it
        assert made.earlier[t] == tokenizer.pieces(list(dict.fromkeys(
            i for i in ids[: layer - 1, t].tolist() if i != read.chosen[t])))
    by_encoder = analyses.decoder_lens(tr, text)
    assert 1 <= made.encoder_layers <= made.encoder_total == model.cfg.n_encoder_layers
    assert all(t.text == by_encoder[-1].text for t in by_encoder[made.encoder_layers - 1:])
    assert made.encoder_layers == 1 or by_encoder[made.encoder_layers - 2].text != by_encoder[-1].text


def test_the_strip_writes_each_piece_with_its_layer_and_only_real_changes_of_mind():
    import re

    from playground.figures.commitment import strip
    from transformer.interpret.analyses import Commitment

    made = Commitment(pieces=["▁Ein", "▁<b>", "hund", "</s>"], settled=[2, 3, 0, 1],
                      earlier=[["<s>"], ["▁Ein", "▁Katze"], [], []], encoder_layers=1, decoder_layers=3,
                      encoder_total=4)
    html = strip(made, strategy="sample")
    shown = re.findall(r"<li[^>]*><b[^>]*>(.*?)</b><span>(.*?)</span>(?:<span class=\"was\">was: (.*?)</span>)?</li>",
                       html)
    # the pieces as the page writes them (a dash on one that continues a word, </s> as "end"), escaped
    assert shown == [("Ein", "layer 2", ""), ("&lt;b&gt;", "layer 3", "Katze"), ("-hund", "sampled", ""),
                     ("end", "layer 1", "")]  # "Ein" before "<b>" was its input repeated: no change of mind
    assert "On 1 piece, a lower layer first preferred another" in html
    assert "with only its first layer of 4, the decoder would already write the same translation" in html
    assert "<b>" not in html.replace("<b>When it decided.</b>", "").replace("<b style", "")



def test_a_piece_no_layer_chose_says_why_it_was_written():
    """A piece the stutter guard chose is "guarded", never "sampled" (nothing was drawn); a drawn one is "sampled",
    beam search's "searched"."""
    import re

    from playground.figures.commitment import strip
    from transformer.interpret.analyses import Commitment
    from transformer.translator import TokenStep

    made = Commitment(pieces=["▁Ein", "▁Hund", "</s>"], settled=[1, 0, 0], earlier=[[], [], []], encoder_layers=1,
                      decoder_layers=2, encoder_total=2)
    steps = [TokenStep("▁Ein", 0.9, []), TokenStep("▁Hund", 0.3, [], removed=("▁Ein", 0.6)), TokenStep("</s>", 0.8, [])]

    def said(strategy: str) -> list[str]:
        return re.findall(r"</b><span>(.*?)</span>", strip(made, steps=steps, strategy=strategy))
    assert said("greedy") == ["layer 1", "guarded", "not its first choice"]
    assert said("sample") == ["layer 1", "guarded", "sampled"]
    assert said("beam") == ["layer 1", "guarded", "searched"]
