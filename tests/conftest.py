"""Fixtures: tiny random models, a tiny tokenizer and a tiny Multi30k-shaped data folder."""
from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import random
from pathlib import Path

import pytest
import sentencepiece as spm
import torch

from transformer import ModelConfig, Tokenizer, Transformer, Translator

torch.set_num_threads(1)  # tiny tensors: threads only add overhead and contention

ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = ROOT.parent / "shared" / "data" / "multi30k"

WORDS_EN = "a man woman dog child runs walks sits on the in street park red blue big small ball".split()
WORDS_DE = "ein mann frau hund kind läuft geht sitzt auf der im straße park roter blauer großer kleiner ball".split()


# Every device present: tests parametrized over these run on CUDA wherever a GPU is, and skip it here otherwise.
DEVICES = [pytest.param("cpu", id="cpu"),
           pytest.param("cuda", id="cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA"))]


def pytest_collection_modifyitems(items):
    """Whatever talks to the live server or reads the shipped checkpoints (an integration test: the `translators`
    fixture, and every fixture built on it) belongs to the slow tier, with the browser, load and subprocess tests;
    the quick tier is the unit tier, on tiny random models. The slow tier runs first."""
    for item in items:
        if {"server", "translators"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    # the slow tier first (a stable sort: files and tests keep their order within each tier), so that the two workers
    # start the longest tests early and the unit tests fill the end, rather than one long test ending the run alone
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


CHROMIUM = "/usr/bin/chromium"  # Debian's (.ci/run installs it), never a downloaded browser
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium, driven by Playwright (the browser tests' pages each get a context of their own)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


def figure(sent):
    """A figure as a handler sends it to the page (serialized), back as a plotly Figure a test can read."""
    import json

    import plotly.graph_objects as go

    return go.Figure(json.loads(sent.plot)) if hasattr(sent, "plot") else sent


def tiny_config(**overrides) -> ModelConfig:
    cfg = dict(vocab_size=40, d_model=32, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=64,
               dropout=0.0, max_len=64)
    cfg.update(overrides)
    return ModelConfig(**cfg)


@pytest.fixture
def cfg() -> ModelConfig:
    return tiny_config()


@pytest.fixture
def model(cfg) -> Transformer:
    torch.manual_seed(0)
    return Transformer(cfg).eval()


def random_tokens(B: int, N: int, vocab: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(4, vocab, (B, N), generator=g)  # ids 0-3 are pad, <s>, </s>, <unk>


def runs(seq) -> list[tuple]:
    """Each item of `seq` with how many times it comes in a row there: [a, a, b] -> [(a, 2), (b, 1)]."""
    return [(item, len(list(run))) for item, run in itertools.groupby(seq)]


def synthetic_pairs(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """Word-for-word 'translations' between two toy languages."""
    rng = random.Random(seed)
    src, tgt = [], []
    for _ in range(n):
        idx = [rng.randrange(len(WORDS_EN)) for _ in range(rng.randint(3, 9))]
        src.append(" ".join(WORDS_EN[i] for i in idx).capitalize() + ".")
        tgt.append(" ".join(WORDS_DE[i] for i in idx).capitalize() + ".")
    return src, tgt


@pytest.fixture(scope="session")
def tokenizer() -> Tokenizer:
    src, tgt = synthetic_pairs(400)
    return Tokenizer.train(src + tgt, vocab_size=60)


@pytest.fixture
def translator(tokenizer) -> Translator:
    torch.manual_seed(0)
    return Translator(Transformer(tiny_config(vocab_size=len(tokenizer))), tokenizer)


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory) -> Path:
    """train/val/test files named as in Multi30k, gzipped."""
    root = tmp_path_factory.mktemp("multi30k")
    for split, n, seed in (("train", 600, 1), ("val", 40, 2), ("test_2016_flickr", 40, 3)):
        src, tgt = synthetic_pairs(n, seed)
        for lang, lines in (("en", src), ("de", tgt)):
            with gzip.open(root / f"{split}.{lang}.gz", "wt", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
    return root


@pytest.fixture(scope="session")
def smoke_checkpoint(tmp_path_factory) -> Path:
    """What `python -m transformer train --recipe recipes/smoke.toml` makes from the corpora: trained once per test
    session (about a minute on two cores)."""
    import subprocess
    import sys

    if not DATA_DIR.exists():
        pytest.skip("needs ../shared/data (the corpora)")
    out = tmp_path_factory.mktemp("recipe") / "smoke"
    done = subprocess.run([sys.executable, "-m", "transformer", "train", "--recipe", "recipes/smoke.toml", "--data",
                           str(DATA_DIR.parent), "--out", str(out), "--threads", "2"], cwd=ROOT, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


@pytest.fixture(scope="session")
def toy_run():
    """toy_run(task): the live view's trainer with its defaults on copy or reverse (about 40 s), its reports (one
    every 200 steps, the last at the end). Trained once per test session for every test that reads it: its dropout is
    off and it draws from its own generator, so the last report's model is the one a run that reports only at its
    end leaves (tools/alignment.py's `trained`; tests/test_live.py checks it). The tests that read it share the
    xdist group "toy", so one worker trains each task once."""
    from transformer.training import live

    runs = {}

    def run(task: str) -> list:
        if task not in runs:
            runs[task] = list(live.train_toy(live.ToySettings(task=task), report_every=200))
        return runs[task]

    return run


# -----------------------------------------------------------------------------
# The app: the shipped checkpoints, served once per test session on a free local port

SHIPPED = ROOT / "checkpoints"


def shipped_pairs() -> list[str]:
    return sorted(p.name for p in SHIPPED.iterdir() if (p / "model.safetensors").is_file()) if SHIPPED.is_dir() else []


@pytest.fixture(scope="session")
def translators():
    """Every shipped checkpoint, loaded as the app loads them."""
    import app

    loaded, problems = app.load_translators(SHIPPED, "cpu")
    assert not problems, problems
    assert loaded, "no shipped checkpoints under checkpoints/"
    return loaded


@contextlib.contextmanager
def serving(translators):
    """The real app on 127.0.0.1 at a free port, serving these translators; yields its URL."""
    import socket
    import tempfile

    import app
    from playground.classroom.store import Store, default_url

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as folder:
        store = Store(default_url(Path(folder)))
        demo = app.build_demo(translators, store=store)
        demo.queue(default_concurrency_limit=2)
        demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                    **app.launch_options(store))
        try:
            yield f"http://127.0.0.1:{port}/"
        finally:
            demo.close()
            store.engine.dispose()


@pytest.fixture(scope="session")
def server(translators):
    """The real app with the shipped checkpoints; yields its URL."""
    with serving(translators) as url:
        yield url


# -----------------------------------------------------------------------------
# A tiny random OPUS-MT (Marian) model, as MarianMTModel.save_pretrained leaves it (needs transformers)


def train_spm(texts: list[str], folder, name: str, size: int) -> list[str]:
    """A small sentencepiece model at folder/name; returns its pieces."""
    spm.SentencePieceTrainer.train(sentence_iterator=iter(texts), model_prefix=str(folder / name), vocab_size=size,
                                   character_coverage=1.0, minloglevel=2, num_threads=1)
    (folder / f"{name}.model").rename(folder / name)
    sp = spm.SentencePieceProcessor(model_file=str(folder / name))
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())]


def vocab_of(pieces: list[str]) -> dict[str, int]:
    """Marian's layout: </s> 0, <unk> 1, the pieces, <pad> last."""
    vocab = {"</s>": 0, "<unk>": 1}
    for p in pieces:
        if p not in vocab and p not in ("<s>", "<pad>"):
            vocab[p] = len(vocab)
    vocab["<pad>"] = len(vocab)
    return vocab


def tiny_marian(folder, shared: bool = True, activation: str = "swish", seed: int = 0, init_std: float = 0.02):
    """A random MarianMTModel and its tokenizer files, as save_pretrained leaves them in `folder`.
    init_std: its weights' spread (0.02, Marian's default, leaves the output bias in charge of every choice)."""
    src, tgt = synthetic_pairs(300)
    source_pieces = train_spm(src, folder, "source.spm", 40)
    target_pieces = train_spm(tgt, folder, "target.spm", 40)
    if shared:
        vocab = target_vocab = vocab_of(source_pieces + target_pieces)
    else:
        vocab, target_vocab = vocab_of(source_pieces), vocab_of(target_pieces)
        (folder / "target_vocab.json").write_text(json.dumps(target_vocab))
    (folder / "vocab.json").write_text(json.dumps(vocab))
    pad = target_vocab["<pad>"]
    import transformers

    config = transformers.MarianConfig(
        vocab_size=len(vocab), decoder_vocab_size=len(target_vocab), d_model=16, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
        activation_function=activation, max_position_embeddings=64, scale_embedding=True, pad_token_id=pad,
        eos_token_id=0, decoder_start_token_id=pad, forced_eos_token_id=None, dropout=0.0, attention_dropout=0.0,
        activation_dropout=0.0, share_encoder_decoder_embeddings=shared, tie_word_embeddings=True,
        init_std=init_std)
    torch.manual_seed(seed)
    model = transformers.MarianMTModel(config).eval()
    with torch.no_grad():  # random values where a fresh model has zeros, so that every tensor is checked
        model.final_logits_bias.normal_(0, 0.5)
        for name, p in model.named_parameters():
            if name.endswith(("bias", "layer_norm.weight")):
                p.add_(torch.randn_like(p) * 0.1)
    model.save_pretrained(folder)
    return model, src


@pytest.fixture(scope="session")
def with_imported(tmp_path_factory) -> Path:
    """A checkpoints folder: the shipped en-de beside a tiny random Marian model imported as en-de-opus-mt."""
    import shutil

    from transformer.interop.marian import import_marian

    pytest.importorskip("transformers")
    root = tmp_path_factory.mktemp("checkpoints")
    hf = tmp_path_factory.mktemp("marian")
    tiny_marian(hf)
    import_marian(str(hf), root / "en-de-opus-mt")
    shutil.copytree(SHIPPED / "en-de", root / "en-de")
    return root
