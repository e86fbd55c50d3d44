"""The logit lens: every decoder layer's output through the model's own final norm and output projection."""
from __future__ import annotations

import pytest
import torch

from transformer import Transformer, Translator
from transformer.interpret.lens import Lens
from transformer.interpret import analyses

from conftest import tiny_config


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_the_last_layers_lens_is_the_models_own_distribution(tokenizer, norm_first):
    torch.manual_seed(0)
    model = Transformer(tiny_config(vocab_size=len(tokenizer), norm_first=norm_first)).eval()
    tr = Translator(model, tokenizer)
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
