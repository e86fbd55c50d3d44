"""Every path that makes tensors, on every device present: batched decoding, capture, training steps.

Sentences of one batch end at different steps, so rows leave the batch (the case that indexes a row list
with a device tensor). CUDA cases skip where there is no GPU.
"""
from __future__ import annotations

import math

import pytest
import torch

from transformer import Transformer, Translator, beam_search, capture_attention, greedy, sample
from transformer.config import TrainConfig
from transformer.training.train import make_optimizer, train, train_step
from transformer.interpret import analyses

from conftest import DEVICES, ROOT, random_tokens, tiny_config


def tiny_model(device: str) -> Transformer:
    """A random tiny model whose </s> embedding is scaled up, so that greedy sentences end at 3 to 15 steps."""
    torch.manual_seed(0)
    model = Transformer(tiny_config())
    with torch.no_grad():
        model.embed.table.weight[model.cfg.eos_id] *= 5
    return model.to(device).eval()


def padded_batch(device: str) -> torch.Tensor:
    src = random_tokens(4, 8, 40)
    src[1, 5:] = 0
    src[3, 3:] = 0
    return src.to(device)


def rows(src: torch.Tensor):
    """Each sentence of the batch alone, without its padding."""
    return [src[b : b + 1, : int(src[b].ne(0).sum())] for b in range(src.size(0))]


@pytest.mark.parametrize("device", DEVICES)
def test_batched_greedy_and_beam_equal_one_sentence_at_a_time(device):
    model, src = tiny_model(device), padded_batch(device)
    batched_greedy, batched_beam = greedy(model, src, 15), beam_search(model, src, 15, beam_size=3)
    assert len({len(h.steps) for h in batched_greedy}) > 1  # sentences ended at different steps
    for b, one in enumerate(rows(src)):
        assert greedy(model, one, 15)[0].tokens == batched_greedy[b].tokens
        single = beam_search(model, one, 15, beam_size=3)[0]
        assert single.tokens == batched_beam[b].tokens
        assert single.score == pytest.approx(batched_beam[b].score, abs=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_batched_sampling_runs_on_the_device_and_top_1_is_greedy(device):
    model, src = tiny_model(device), padded_batch(device)
    g = torch.Generator(device=device).manual_seed(0)
    top1 = sample(model, src, 15, g, temperature=1.0, top_k=1)
    for b, one in enumerate(rows(src)):
        assert top1[b].tokens == greedy(model, one, 15)[0].tokens
    again = [h.tokens for h in sample(model, src, 15, torch.Generator(device=device).manual_seed(5), temperature=2.0)]
    assert again == [h.tokens for h in sample(model, src, 15, torch.Generator(device=device).manual_seed(5),
                                              temperature=2.0)]


@pytest.mark.parametrize("device", DEVICES)
def test_translator_batches_on_the_device(device, tokenizer):
    torch.manual_seed(0)
    tr = Translator(Transformer(tiny_config(vocab_size=len(tokenizer))).to(device), tokenizer)
    texts = ["A dog.", "A big red ball in the park on the street.", "A child runs.", "Two girls sit on a ball."]
    for strategy in ("greedy", "beam"):
        batch = tr.translate_batch(texts, strategy=strategy, max_len=12)
        assert [t.text for t in batch] == [tr.translate(x, strategy=strategy, max_len=12).text for x in texts]


@pytest.mark.parametrize("device", DEVICES)
def test_capture_on_the_device_matches_the_cpu(device):
    src, tgt = random_tokens(2, 7, 40), random_tokens(2, 5, 40, seed=1)
    src[1, 4:] = 0
    maps = {}
    for dev in ("cpu", device):
        model = tiny_model(dev)
        with capture_attention(model) as rec:
            model(src.to(dev), tgt.to(dev))
        maps[dev] = rec.sentence(1)
    for kind in ("encoder", "decoder", "cross"):
        assert getattr(maps[device], kind).device.type == "cpu"  # recorded maps always come back to the CPU
        torch.testing.assert_close(getattr(maps[device], kind), getattr(maps["cpu"], kind), atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_training_steps_on_the_device_follow_the_cpu(device):
    src, tgt = random_tokens(3, 7, 40), random_tokens(3, 6, 40, seed=1)
    src[2, 5:], tgt[1, 4:] = 0, 0
    losses = {}
    for dev in ("cpu", device):
        torch.manual_seed(0)
        model = Transformer(tiny_config()).to(dev).train()
        opt = make_optimizer(model)
        losses[dev] = [float(train_step(model, opt, src.to(dev), tgt.to(dev), 1e-3, 0.1, 0)[0]) for _ in range(5)]
    assert losses[device][-1] < losses[device][0]  # it learns
    assert losses[device] == pytest.approx(losses["cpu"], rel=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_a_training_run_on_the_device_learns_and_resumes(device, data_dir, tmp_path, monkeypatch):
    """train() as a recipe runs it on a GPU (tools/device_train.sh): its epochs drawn in a process, batches copied from pinned memory
    without waiting, the loss read once an epoch; on the CPU where the machine has a GPU too."""
    if device == "cpu":
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    tcfg = TrainConfig(epochs=2, max_tokens=512, warmup=20, vocab_size=60, average_last=1, fp16_weights=False,
                       threads=1, source_noise=0.3, timeline="", bf16=device != "cpu")
    metrics = train(str(data_dir), str(tmp_path / "ck"), tiny_config(max_len=32), tcfg)
    first, second = metrics.epochs
    assert math.isfinite(first["train_loss"]) and second["train_loss"] < first["train_loss"]
    assert ("NVIDIA" in metrics.hardware) == (device != "cpu")  # where it trained, recorded
    tcfg.epochs = 3
    again = train(str(data_dir), str(tmp_path / "ck"), tiny_config(max_len=32), tcfg, resume=True)
    assert [r["epoch"] for r in again.epochs] == [1, 2, 3]
    assert again.epochs[1]["train_loss"] == second["train_loss"] and again.epochs[2]["step"] > second["step"]


@pytest.mark.parametrize("device", DEVICES)
def test_bf16_training_steps_follow_float32_and_keep_the_weights_in_float32(device):
    """The recipes train under bf16 autocast on a GPU: the same losses within bfloat16's precision, fp32 masters."""
    src, tgt = random_tokens(3, 7, 40).to(device), random_tokens(3, 6, 40, seed=1).to(device)
    losses = {}
    for bf16 in (False, True):
        torch.manual_seed(0)
        model = Transformer(tiny_config()).to(device).train()
        opt = make_optimizer(model)
        losses[bf16] = [float(train_step(model, opt, src, tgt, 1e-3, 0.1, 0, bf16=bf16)[0]) for _ in range(5)]
        assert all(p.dtype == torch.float32 for p in model.parameters())
    assert losses[True][-1] < losses[True][0]
    assert losses[True] == pytest.approx(losses[False], rel=0.03)
    assert losses[True] != losses[False]  # autocast did change the arithmetic


@pytest.mark.parametrize("device", DEVICES)
def test_the_apps_paths_run_on_the_device(device):
    """What the page runs: sampling, the hooked pass with Q/K/V, context.run and the timeline's snapshots."""
    from playground import context
    from transformer.training import timeline
    from transformer.decoding import DecodeOptions

    from conftest import SHIPPED, shipped_pairs

    pair = shipped_pairs()[0]
    tr, cpu = Translator.load(SHIPPED / pair, device=device), Translator.load(SHIPPED / pair, device="cpu")
    text = "A man in a blue shirt rides a bike."
    sampled = tr.translate(text, strategy="sample", seed=3, temperature=0.8)
    assert sampled.text == tr.translate(text, strategy="sample", seed=3, temperature=0.8).text
    inside, reference = analyses.inspect(tr, text, sampled, internals=True), analyses.inspect(cpu, text, sampled, internals=True)
    for kind in ("encoder", "decoder", "cross"):
        torch.testing.assert_close(getattr(inside.maps, kind), getattr(reference.maps, kind), atol=1e-4, rtol=1e-3)
        assert inside.internals[kind][0].q.device.type == "cpu"  # recorded tensors come back to the CPU
    result = context.run(tr, pair, text, DecodeOptions("beam", beam_size=3))
    assert result.translation.beam_tree is not None and len(result.batch) == 2
    stages = timeline.attention_over_epochs(tr, text)
    assert stages[-1][0] == "shipped" and len(stages) == len(timeline.snapshots(tr)) + 1
    assert all(maps.cross.device.type == "cpu" for _, maps in stages)


def test_training_and_translating_need_no_dictionary_library():
    """A GPU machine's image has torch and sentencepiece, not the dictionary the page's checks read (simplemma):
    training and translating import without it, so tools/device_train.sh runs on the image as it is."""
    import subprocess
    import sys

    code = ("import sys, transformer.training.train, transformer.translator, transformer.__main__; "
            "sys.exit('simplemma' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0
