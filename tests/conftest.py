"""Fixtures: tiny random models, a tiny tokenizer and a tiny Multi30k-shaped data folder."""
from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest
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
    """Whatever talks to the live server belongs to the slow tier, with the browser, load and subprocess tests."""
    for item in items:
        if "server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


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


@pytest.fixture(scope="session")
def server(translators):
    """The real app on 127.0.0.1 at a free port; yields its URL."""
    import socket

    import app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    demo = app.build_demo(translators)
    demo.queue(default_concurrency_limit=2)
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, css=app.CSS)
    yield f"http://127.0.0.1:{port}/"
    demo.close()
