"""The public API: Translator.translate / translate_batch, the analyses of a translator, input checks, the CLI."""
from __future__ import annotations

import json
from dataclasses import replace
import subprocess
import sys

import pytest
import torch

from transformer import DecodeOptions, InputError, Translator, save_checkpoint
from transformer.translator import Aside, clean_text, column_major_embedding, quantize_int8
from transformer.interpret import analyses

from conftest import ROOT, runs


@pytest.mark.parametrize("strategy", ["greedy", "sample", "beam"])
def test_translate_returns_text_tokens_and_steps(translator, strategy):
    out = translator.translate("A man sits on the street.", strategy=strategy, max_len=12, seed=1)
    assert out.source_tokens[-1] == "</s>" and len(out.source_tokens) > 3
    assert len(out.steps) == len(out.target_tokens) + (1 if out.steps[-1].token == "</s>" else 0)
    assert out.text == translator.tokenizer.decode(out.target_ids)
    for step in out.steps:
        assert 0 < step.prob <= 1 and len(step.alternatives) == 5
        assert all(isinstance(tok, str) for tok, _ in step.alternatives)


def test_batch_keeps_the_input_order(translator):
    texts = ["A dog.", "A big red ball in the park on the street.", "A child runs."]
    batch = translator.translate_batch(texts, strategy="greedy", max_len=10)
    assert [t.text for t in batch] == [translator.translate(x, max_len=10).text for x in texts]


def test_samples_repeat_with_a_seed(translator):
    a = translator.translate_batch(["A dog runs."] * 4, strategy="sample", seed=7, temperature=2.0, max_len=10)
    b = translator.translate_batch(["A dog runs."] * 4, strategy="sample", seed=7, temperature=2.0, max_len=10)
    assert [t.text for t in a] == [t.text for t in b]
    assert len({t.text for t in a}) > 1  # four samples of one sentence are not all the same


def test_attention_maps_and_labels(translator):
    cfg = translator.cfg
    out = translator.translate("A woman walks in the park.", max_len=8)
    maps = analyses.attention(translator, "A woman walks in the park.", out)
    S, T = len(out.source_tokens), len(out.target_ids) + 1
    assert maps.encoder.shape == (cfg.n_encoder_layers, cfg.n_heads, S, S)
    assert maps.decoder.shape == (cfg.n_decoder_layers, cfg.n_heads, T, T)
    assert maps.cross.shape == (cfg.n_decoder_layers, cfg.n_heads, T, S)
    assert maps.source_tokens == out.source_tokens and maps.target_tokens == ["<s>"] + out.target_tokens
    from_text = analyses.attention(translator, "A woman walks in the park.", "ein frau")
    assert from_text.target_tokens[0] == "<s>" and from_text.cross.shape[-1] == S
    assert json.loads(json.dumps(maps.to_dict()))["encoder"][0][0][0] == pytest.approx(maps.encoder[0, 0, 0].tolist())


def test_ablation_through_the_translator(translator):
    heads = [("cross", layer, h) for layer in range(2) for h in range(4)]
    normal = analyses.attention(translator, "A dog runs.", "ein hund")
    silent = analyses.attention(translator, "A dog runs.", "ein hund", ablate=heads)
    assert silent.cross.abs().max() == 0 and normal.cross.abs().max() > 0
    assert torch.equal(analyses.attention(translator, "A dog runs.", "ein hund").cross, normal.cross)


@pytest.mark.parametrize("options, message", [  # every field's own checks: tests/test_decoding.py
    ({"strategy": "fast"}, "unknown strategy"),
    ({"beam_size": 2.5}, "whole number"),
    ({"max_len": 10**6}, "max_len must be a whole number from 0 to 63 for this model"),  # the model's positions
])
def test_bad_options_get_a_plain_message(translator, options, message):
    with pytest.raises(ValueError, match=message):
        translator.translate("A dog.", **options)


def test_options_are_one_object_and_keywords_override_its_fields(translator):
    base = DecodeOptions("sample", temperature=2.0, seed=4, max_len=6)
    assert translator.translate("A dog.", base, seed=5).text == translator.translate("A dog.", replace(base, seed=5)).text
    with pytest.raises(InputError, match='strategy="beam"'):
        translator.translate("A dog.", "beam")  # a strategy's name is a keyword, never the options


def test_the_translator_keeps_a_piece_inside_a_word_from_stuttering(translator):
    """A random model says one piece again and again; translated as the page does, a piece of letters inside a word
    comes at most twice in a row (a single letter three times), and stutter_guard=False shows the model's own."""
    sources = ["A man rides a bike.", "Two girls play in the water.", "The dog runs."]

    letters = [(p, n) for t in translator.translate_batch(sources, max_len=20, stutter_guard=False)
               for p, n in runs(t.target_tokens) if p.isalpha()]
    assert max(n for _, n in letters) > 3  # unguarded, this model stutters
    for t in translator.translate_batch(sources, max_len=20):
        assert all(n <= (2 if len(p) > 1 else 3) for p, n in runs(t.target_tokens) if p.isalpha()), t.target_tokens


@pytest.mark.parametrize("text", ["", "   \n\t ", "\x00\x01"])
def test_empty_text_gets_a_plain_message(translator, text):
    with pytest.raises(ValueError, match="no text to translate"):
        translator.translate(text)


def test_long_input_is_truncated_and_flagged(translator):
    out = translator.translate("a man " * 5000, max_len=5)
    assert out.truncated and len(out.source_tokens) == translator.cfg.max_len
    assert not translator.translate("A man.", max_len=5).truncated


def test_clean_text_handles_hostile_characters():
    assert clean_text("a\x00b\nc\u202e\ud800d") == "a b c?d"  # NUL/newline: space; bidi override: gone; surrogate: ?
    assert clean_text("\u200b\u200d") == ""  # zero-width characters alone are no text
    assert clean_text("  many   spaces ") == "many spaces"


@pytest.mark.slow
def test_cli_translate_and_evaluate(tmp_path, translator, data_dir):
    save_checkpoint(tmp_path / "ck", translator.model, translator.tokenizer)
    run = [sys.executable, "-m", "transformer"]
    env_cwd = dict(cwd=ROOT, capture_output=True, text=True, timeout=120)
    out = subprocess.run(run + ["translate", "--checkpoint", str(tmp_path / "ck"), "A dog runs.", "A man.",
                                "A dog runs. A man."], **env_cwd)
    lines = out.stdout.splitlines()
    assert out.returncode == 0 and len(lines) == 3  # a line per text; a text of two sentences, each translated alone
    assert lines[2] == f"{lines[0]} {lines[1]}"
    out = subprocess.run(run + ["evaluate", "--checkpoint", str(tmp_path / "ck"), "--src", str(data_dir / "val.en.gz"),
                                "--ref", str(data_dir / "val.de.gz"), "--beam", "2"], **env_cwd)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert "BLEU (cased)" in lines[0] and "case:lc" in lines[1] and "chrF" in lines[2]
    result = json.loads(lines[-1])
    assert set(result) == {"bleu", "bleu_lc", "chrf", "sentences", "seconds"} and result["sentences"] == 40
    out = subprocess.run(run + ["translate", "--checkpoint", str(tmp_path / "ck"), "--top-p", "2", "--strategy",
                                "sample", "A dog."], **env_cwd)
    assert out.returncode == 2 and "top_p must be" in out.stderr and "Traceback" not in out.stderr


def test_device_choice_follows_what_the_machine_has(monkeypatch, tmp_path, translator):
    from transformer.translator import resolve_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # a machine with a GPU
    assert resolve_device("auto") == torch.device("cuda") and resolve_device("cuda:1") == torch.device("cuda:1")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # and one without
    assert resolve_device("auto") == torch.device("cpu")
    with pytest.warns(UserWarning, match="not available"):
        assert resolve_device("cuda") == torch.device("cpu")
    save_checkpoint(tmp_path / "ck", translator.model, translator.tokenizer)
    with pytest.warns(UserWarning, match="not available"):
        loaded = Translator.load(tmp_path / "ck", device="cuda")
    assert loaded.device.type == "cpu" and all(p.device.type == "cpu" for p in loaded.model.parameters())


@pytest.mark.slow
def test_cli_records_scores_and_re_averages(tmp_path, data_dir):
    from transformer.config import TrainConfig
    from transformer.training.train import train

    from conftest import tiny_config

    out = tmp_path / "ck"
    train(str(data_dir), str(out), tiny_config(max_len=32),
          TrainConfig(epochs=3, max_tokens=512, warmup=20, vocab_size=60, average_last=3, threads=1))
    assert json.loads((out / "metrics.json").read_text())["averaged_epochs"] == [1, 2, 3]
    run = [sys.executable, "-m", "transformer"]
    done = subprocess.run(run + ["average", "--checkpoint", str(out), "--data-dir", str(data_dir), "--last", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "metrics.json").read_text())["averaged_epochs"] == [3]
    done = subprocess.run(run + ["evaluate", "--checkpoint", str(out), "--src", str(data_dir / "test_2016_flickr.en.gz"),
                                 "--ref", str(data_dir / "test_2016_flickr.de.gz"), "--record", "test2016_greedy"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    recorded = json.loads((out / "metrics.json").read_text())["test"]["test2016_greedy"]
    printed = json.loads(done.stdout.strip().splitlines()[-1])
    assert printed["bleu"] == pytest.approx(recorded["bleu"], abs=1e-3) and recorded["beam"] == 1


def test_column_major_embedding_keeps_every_number(translator):
    model = translator.model
    before = translator.translate("a b c", strategy="beam", beam_size=3)
    weight = model.embed.table.weight.detach().clone()
    column_major_embedding(model)
    assert model.embed.table.weight.stride() == (1, weight.size(0)) and model.output.weight is model.embed.table.weight
    assert torch.equal(model.embed.table.weight, weight)
    after = translator.translate("a b c", strategy="beam", beam_size=3)
    assert after.target_ids == before.target_ids and after.score == pytest.approx(before.score, abs=1e-5)


def test_int8_quantizes_the_large_layers_and_keeps_the_translation_close(translator):
    model = translator.model
    q = quantize_int8(model)
    assert type(q.output) is not torch.nn.Linear and type(q.decoder.layers[0].feed_forward.w_1) is not torch.nn.Linear
    assert type(q.decoder.layers[0].self_attn.w_q) is torch.nn.Linear  # the small projections stay fp32
    assert type(model.output) is torch.nn.Linear  # a copy: the fp32 model is untouched
    src = torch.tensor([translator.tokenizer.encode("a b c d") + [model.cfg.eos_id]])
    tgt = torch.tensor([[model.cfg.bos_id, 5, 6, 7]])
    with torch.no_grad():
        fp32, int8 = model(src, tgt).exp(), q(src, tgt).exp()
    assert 0 < (fp32 - int8).abs().max() < 0.02  # quantized, and the probabilities barely move
    assert Translator(q, translator.tokenizer).translate("a b c d").text  # it decodes end to end


@pytest.mark.parametrize("strategy", ["greedy", "beam"])
def test_a_sentence_at_its_length_bound_translates_the_same_alone_and_in_a_batch(translator, strategy):
    short, long = "A dog.", "A big red ball in the park on the street and a small blue ball in the park. " * 2
    alone = translator.translate(short, strategy=strategy)
    assert len(alone.steps) == DecodeOptions().length_limit(len(alone.source_tokens), translator.cfg.max_len)
    batched = translator.translate_batch([short, long], strategy=strategy)
    assert batched[0].target_ids == alone.target_ids and batched[0].text == alone.text


def test_huge_text_is_cut_before_any_per_character_work(translator, monkeypatch):
    """5 MB as the source or as a caller's translation: cleaning and sentencepiece see a few kB, and it is flagged."""
    from transformer import translator as module

    seen = []
    real_clean, real_encode = module.clean_text, translator.tokenizer.encode
    monkeypatch.setattr(module, "clean_text", lambda text: seen.append(("clean", len(text))) or real_clean(text))
    monkeypatch.setattr(translator.tokenizer, "encode", lambda text: seen.append(("encode", len(text))) or real_encode(text))
    huge = "A dog runs in the park. " * 220_000  # 5.3 MB
    out = translator.translate(huge, max_len=5)
    maps = analyses.attention(translator, "A dog.", huge)
    limit = module.CHARS_PER_POSITION * (translator.cfg.max_len - 1)
    assert seen and all(n <= 2 * limit for _, n in seen) and all(n <= limit for what, n in seen if what == "encode")
    assert out.truncated and len(out.source_tokens) == translator.cfg.max_len
    assert len(maps.target_tokens) == translator.cfg.max_len  # <s> and the translation, cut to the positions


def test_text_far_from_what_the_model_knows_gets_a_plain_warning(translator):
    assert not translator.familiarity("a man walks in the park").far  # the toy vocabulary's own words
    unseen = translator.familiarity("a man walks 東京 the park")
    assert unseen.unknown == 1 and unseen.far
    broken = translator.familiarity("mwkbtp lrdgnh")  # letters it knows, in no word it knows
    assert broken.unknown == 0 and broken.pieces_per_word > 4 and broken.far


def test_a_character_spelled_in_bytes_counts_as_one_the_model_has_never_seen(translator, monkeypatch):
    pieces = {"a": "▁a", "З": "<0xD0>", "з": "<0x97>", "b": "▁b"}  # a byte-fallback vocabulary's pieces
    monkeypatch.setattr(translator.tokenizer, "encode", lambda text: [10 + i for i, _ in enumerate(text.split())])
    monkeypatch.setattr(translator.tokenizer, "source_pieces", lambda ids: [list(pieces.values())[i - 10] for i in ids])
    seen = translator.familiarity("a З з b")
    assert seen.unknown == 1 and seen.far  # one run of bytes: one character the vocabulary lacks



def test_symbols_the_vocabulary_lacks_are_set_aside_and_put_back_where_they_stood(translator):
    from transformer.translator import put_back, set_aside

    lacks = lambda c: c not in "★"  # noqa: E731  a vocabulary that has ★ and no emoji
    assert set_aside("I love my dog 🐶❤️", lacks) == ("I love my dog", [Aside("🐶❤️", 1.0)])
    assert set_aside("🎉 Happy birthday!", lacks) == ("Happy birthday!", [Aside("🎉", 0.0)])
    assert set_aside("I love pizza 🍕!", lacks) == ("I love pizza!", [Aside("🍕", 1.0)])  # before the final "!"
    assert set_aside("Hello 👋 my friends", lacks) == ("Hello my friends", [Aside("👋", 1 / 3)])
    assert set_aside("Grade ★ good 👍🏽", lacks) == ("Grade ★ good", [Aside("👍🏽", 1.0)])  # a skin tone stays with it
    assert set_aside("Grüße aus Köln, 你好", lacks)[1] == []  # letters are not symbols: they stay for the model
    assert put_back("Ich liebe meinen Hund.", [Aside("🐶❤️", 1.0)]) == "Ich liebe meinen Hund. 🐶❤️"
    assert put_back("Hallo meine Freunde", [Aside("👋", 1 / 3), Aside("🎉", 0.0)]) == "🎉 Hallo 👋 meine Freunde"

    t = translator.translate("a man runs 🏃‍♂️ 🐶")
    assert t.carried == ["🏃‍♂️ 🐶"] and t.text.endswith(" 🏃‍♂️ 🐶")
    assert translator.translate("a man runs").target_ids == t.target_ids  # the model read the words alone
    assert "<unk>" not in t.source_tokens
    with pytest.raises(InputError, match="nothing here the model can read"):
        translator.translate("🐶🐶")


def test_a_word_is_unsure_when_its_pieces_probabilities_multiply_under_the_threshold():
    from transformer.translator import unsure_words

    pieces, probs = ["▁Ich", "▁lie", "be", "▁dich", "!"], [0.9, 0.7, 0.6, 0.95, 0.3]
    assert unsure_words(pieces, probs, 0.5) == [1, 2, 3, 4]  # "liebe": 0.42; "dich!": 0.285; no piece of "liebe" under
    assert unsure_words(pieces, probs, 0.4) == [3, 4]
    assert unsure_words(pieces, probs, 0.0) == [] and unsure_words(pieces, probs, 1.01) == [0, 1, 2, 3, 4]
    assert unsure_words(["de", "▁x"], [0.2, 0.9], 0.5) == [0]  # a first piece that continues nothing is a word
    assert unsure_words(pieces, probs + [0.01], 0.35) == [3, 4]  # the step of </s> (no piece) is not a word
    # several_below: words under it are marked when two or more are ("liebe" 0.42 and "dich!" 0.285 under 0.45),
    # in a translation of at most several_words words (this one has three)
    assert unsure_words(pieces, probs, 0.3, several_below=0.45, several_words=3) == [1, 2, 3, 4]
    assert unsure_words(pieces, probs, 0.3, several_below=0.45, several_words=2) == [3, 4]  # too long: below alone
    assert unsure_words(pieces, probs, 0.3, several_below=0.4, several_words=3) == [3, 4]  # one under 0.4: by below
    assert unsure_words(pieces, probs, 0.2, several_below=0.4, several_words=3) == []  # one word is not several


def test_the_pieces_the_model_was_unsure_of_are_those_of_words_under_the_threshold(translator):
    import math

    from transformer.metrics import Metrics

    t = translator.translate("the dog sits in the park")
    probs = [s.prob for s in t.steps[: len(t.target_ids)]]
    starts = [i for i, p in enumerate(t.target_tokens) if p.startswith("▁") or i == 0] + [len(probs)]
    words = [list(range(a, b)) for a, b in zip(starts, starts[1:])]
    assert t.unsure == [i for w in words if math.prod(probs[i] for i in w) < translator.unsure_below for i in w]
    translator.metrics = Metrics(unsure={"below": 1.01})  # a calibrated threshold, as metrics.json keeps it
    assert translator.translate("the dog sits in the park").unsure == list(range(len(t.target_ids)))
    translator.metrics = Metrics(unsure={"below": 0.0})
    assert translator.translate("the dog sits in the park").unsure == []
    translator.metrics = Metrics(unsure={"below": 0.0, "several_below": 1.01, "several_words": len(words)})
    t = translator.translate("the dog sits in the park")  # every word, when two or more
    assert t.unsure == (list(range(len(t.target_ids))) if len(words) >= 2 else [])
    translator.metrics = Metrics(unsure={"below": 0.0, "several_below": 1.01, "several_words": len(words) - 1})
    assert translator.translate("the dog sits in the park").unsure == []  # longer than calibrated: none


def test_a_british_spelling_is_read_as_its_american_twin(translator):
    from transformer.tokenizer import american

    assert american("My favourite colour, Mum!") == "My favorite color, Mom!"
    assert american("THE CENTRE") == "THE CENTER" and american("a theatre's metres") == "a theater's meters"
    assert american("Sizes colourful") == "Sizes colorful" and american("organise") == "organise"  # whole words only
    british, us = translator.source_ids("the neighbour sits"), translator.source_ids("the neighbor sits")
    assert british == us  # the model reads the same pieces
