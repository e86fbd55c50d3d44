"""OPUS-MT (Marian) models in our module tree: tiny random MarianMTModels built with transformers, saved, imported,
and compared with MarianMTModel itself: logits to 1e-4, greedy and beam search token for token."""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest
import torch

from transformer import Translator
from transformer.decoding import DecodeOptions, decode
from transformer.errors import InputError
from transformer.interop.marian import import_marian
from transformer.interop.marian_vocab import MarianVocab

from conftest import ROOT, runs, tiny_marian

transformers = pytest.importorskip("transformers")


def generate(hf, src: torch.Tensor, n: int, beams: int) -> list[list[int]]:
    """MarianMTModel.generate's tokens after the start token, up to </s> (excluded), exactly as OPUS-MT configures it:
    <pad> never generated."""
    pad, eos = hf.config.pad_token_id, hf.config.eos_token_id
    out = hf.generate(src, attention_mask=src.ne(pad), max_new_tokens=n, num_beams=beams, do_sample=False,
                      bad_words_ids=[[pad]], length_penalty=1.0, early_stopping=False)
    rows = []
    for row in out[:, 1:].tolist():
        rows.append(row[: row.index(eos)] if eos in row else [t for t in row if t != pad])
    return rows


@pytest.mark.parametrize("shared", [True, False], ids=["shared vocabulary", "separate vocabularies"])
def test_an_imported_marian_model_computes_marians_logits_and_generates_its_tokens(tmp_path, shared):
    (tmp_path / "hf").mkdir()
    hf, texts = tiny_marian(tmp_path / "hf", shared)
    out = import_marian(str(tmp_path / "hf"), tmp_path / "ours")
    tr = Translator.load(out, device="cpu")
    cfg = tr.model.cfg
    assert (cfg.activation, cfg.positional_layout, cfg.output_bias, cfg.bos_id) == ("silu", "halves", True, cfg.pad_id)
    assert bool(cfg.src_vocab_size) is not shared
    sources = [tr.source_ids(t)[0] for t in texts[:6]]
    for ids in sources:
        src = torch.tensor([ids])
        tgt_in = torch.tensor([[cfg.pad_id] + ids[:5]]) if shared else torch.tensor([[cfg.pad_id, 3, 4, 5, 6]])
        with torch.no_grad():
            theirs = hf(input_ids=src, decoder_input_ids=tgt_in).logits.log_softmax(-1)
            ours = tr.model(src, tgt_in)
        torch.testing.assert_close(ours, theirs, atol=1e-4, rtol=0)
        for beams in (1, 4):
            options = DecodeOptions("beam" if beams > 1 else "greedy", beam_size=beams, max_len=12)
            mine = [h.tokens for h in decode(tr.model, src, options)]
            assert mine == generate(hf, src, 12, beams), (beams, ids)


@pytest.mark.parametrize("beams", [1, 4])
def test_an_imported_marian_model_translates_a_padded_batch_as_one_sentence_at_a_time(tmp_path, beams):
    """Marian's pad id (its last id) is not ours (0, Marian's </s>): a batch must pad with the model's own."""
    (tmp_path / "hf").mkdir()
    hf, texts = tiny_marian(tmp_path / "hf", shared=True, init_std=0.5)  # outputs that depend on the input
    tr = Translator.load(import_marian(str(tmp_path / "hf"), tmp_path / "ours"), device="cpu")
    assert tr.cfg.pad_id != 0
    texts = sorted(texts[:8], key=len)  # lengths differ, so the shorter sentences are padded
    assert len({len(tr.source_ids(t)[0]) for t in texts}) > 1
    options = DecodeOptions("beam" if beams > 1 else "greedy", beam_size=beams, max_len=12,
                            stutter_guard=False)  # generate knows no such guard
    batched = [t.target_ids for t in tr.translate_batch(texts, options)]
    alone = [tr.translate(t, options).target_ids for t in texts]
    assert batched == alone
    theirs = [generate(hf, torch.tensor([tr.source_ids(t)[0]]), 12, beams)[0] for t in texts]
    assert alone == theirs
    limit = tr.run_limits.limit.tolist()  # the guard's limits: Marian's own target pieces, the output layer's
    assert len(limit) == tr.cfg.vocab_size

    assert any(n > limit[i] > 0 for ids in alone for i, n in runs(ids))  # unguarded, this random model stutters
    guarded = [t.target_ids for t in tr.translate_batch(texts, replace(options, stutter_guard=True))]
    assert all(n <= limit[i] or not limit[i] for ids in guarded for i, n in runs(ids))


def test_marians_tokenizer_files_behind_our_interface(tmp_path):
    (tmp_path / "hf").mkdir()
    _, texts = tiny_marian(tmp_path / "hf", shared=True)
    vocab = MarianVocab.load(tmp_path / "hf")
    theirs = transformers.MarianTokenizer(str(tmp_path / "hf" / "source.spm"), str(tmp_path / "hf" / "target.spm"),
                                          str(tmp_path / "hf" / "vocab.json"))
    for text in texts[:5] + ["a wholly ünknown wörd"]:
        assert vocab.encode(text) + [vocab.eos_id] == theirs(text).input_ids
    ids = vocab.encode("the dog runs")  # target text round trip through the shared vocabulary
    assert vocab.decode(ids + [vocab.eos_id, vocab.pad_id]) == theirs.decode(ids + [vocab.eos_id], skip_special_tokens=True)
    assert (vocab.eos_id, vocab.unk_id, vocab.bos_id) == (0, 1, vocab.pad_id)


def test_models_that_do_not_fit_are_refused_in_a_sentence(tmp_path):
    (tmp_path / "hf").mkdir()
    tiny_marian(tmp_path / "hf")
    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    for change, says in (({"normalize_embedding": True}, "layer norm on the embeddings"),
                         ({"decoder_attention_heads": 4}, "different heads"),
                         ({"activation_function": "tanh"}, "activation 'tanh'"),
                         ({"model_type": "bart"}, r"Marian \(OPUS-MT\) models only")):
        (tmp_path / "hf" / "config.json").write_text(json.dumps(config | change))
        with pytest.raises(InputError, match=says):
            import_marian(str(tmp_path / "hf"), tmp_path / "out")
    with pytest.raises(InputError, match="needs a network|neither a folder"):
        import_marian("Helsinki-NLP/opus-mt-xx-yy-not-here", tmp_path / "out2")


@pytest.mark.slow
def test_the_import_command_writes_a_checkpoint_the_cli_translates_with(tmp_path):
    (tmp_path / "hf").mkdir()
    tiny_marian(tmp_path / "hf")
    run = [sys.executable, "-m", "transformer"]
    done = subprocess.run(run + ["import-marian", str(tmp_path / "hf"), str(tmp_path / "ck")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "wrote" in done.stdout, done.stderr
    card = json.loads((tmp_path / "ck" / "metrics.json").read_text())["imported"]
    assert card["licence"] == "CC-BY 4.0" and card["source"] == str(tmp_path / "hf")
    done = subprocess.run(run + ["translate", "--checkpoint", str(tmp_path / "ck"), "a dog runs"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    bad = subprocess.run(run + ["import-marian", str(tmp_path / "nowhere"), str(tmp_path / "x")], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "error:" in bad.stderr
