"""Configuration dataclasses, saved as JSON inside every checkpoint and rebuilt from it."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError


ACTIVATIONS = ("relu", "silu", "gelu")
# every size of a model, within what this project builds (its own models and OPUS-MT's fit well inside): a config
# read from a file is refused from its numbers before anything is built (transformer/archive.py)
BOUNDS = {"vocab_size": (4, 1_000_000), "src_vocab_size": (0, 1_000_000), "d_model": (1, 16_384),
          "n_heads": (1, 256), "n_encoder_layers": (1, 48), "n_decoder_layers": (1, 48), "d_ff": (1, 65_536),
          "max_len": (8, 8_192), "pad_id": (0, 1_000_000), "bos_id": (0, 1_000_000), "eos_id": (0, 1_000_000),
          "unk_id": (0, 1_000_000)}


@dataclass
class ModelConfig:
    """Sizes of the encoder-decoder Transformer (Vaswani et al. 2017, Table 3 names)."""

    vocab_size: int = 8000  # joint source/target sentencepiece vocabulary
    d_model: int = 256
    n_heads: int = 4
    n_encoder_layers: int = 3  # the paper's N, for the encoder stack
    n_decoder_layers: int = 3  # the paper's N, for the decoder stack
    d_ff: int = 1024
    dropout: float = 0.1  # P_drop on sublayer outputs and on embeddings + PE (§5.4)
    attn_dropout: float = 0.0  # on attention probabilities; the paper uses none
    act_dropout: float = 0.0  # inside the feed-forward, after the ReLU; the paper uses none
    max_len: int = 256  # positions in the sinusoidal table, per side
    norm_first: bool = False  # False: post-norm as in the paper; True: pre-norm + final LayerNorm
    pad_id: int = 0
    bos_id: int = 1  # the decoder's first input (an imported Marian model starts from <pad>: bos_id = pad_id)
    eos_id: int = 2
    unk_id: int = 3
    # What imported models (OPUS-MT, transformer.marian) need; the defaults are the paper's and ours
    activation: str = "relu"  # inside the feed-forward: "relu" (§3.3), "silu" (Marian's swish) or "gelu"
    positional_layout: str = "interleaved"  # sin on even dims, cos on odd (§3.5); "halves": sin, then cos (Marian)
    scale_embedding: bool = True  # embeddings times sqrt(d_model) (§3.4)
    output_bias: bool = False  # a bias on the output projection (Marian's final_logits_bias)
    src_vocab_size: int = 0  # 0: one vocabulary for both sides; else the source side's own embedding table
    recipe: str = ""  # the recipe that made it ("en-de sha256:..."; transformer/training/recipe.py): no effect on the model

    def __post_init__(self) -> None:
        for name, (low, high) in BOUNDS.items():  # before any arithmetic: a size may come from an uploaded file
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise InputError(f"{name} must be a whole number from {low:,} to {high:,}; got {value!r}")
        for name in ("dropout", "attn_dropout", "act_dropout"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value < 1:
                raise InputError(f"{name} must be a number from 0 up to 1; got {value!r}")
        for name in ("pad_id", "bos_id", "eos_id", "unk_id"):
            if getattr(self, name) >= self.vocab_size:
                raise InputError(f"{name} ({getattr(self, name)}) must be below vocab_size ({self.vocab_size})")
        if self.d_model % self.n_heads:
            raise InputError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")
        if self.activation not in ACTIVATIONS:
            raise InputError(f"activation must be one of {', '.join(ACTIVATIONS)}; got {self.activation!r}")
        if self.positional_layout not in ("interleaved", "halves"):
            raise InputError(f"positional_layout must be 'interleaved' or 'halves'; got {self.positional_layout!r}")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    @property
    def n_parameters(self) -> int:
        """The model's parameters, counted from these numbers alone (the output shares the embedding, §3.4): what
        transformer.model.Transformer(self) holds, known before anything is built."""
        d, f = self.d_model, self.d_ff
        attention, feed_forward, norm = 4 * (d * d + d), d * f + f + f * d + d, 2 * d
        encoder = self.n_encoder_layers * (attention + feed_forward + 2 * norm)
        decoder = self.n_decoder_layers * (2 * attention + feed_forward + 3 * norm)
        finals = 2 * norm if self.norm_first else 0
        return ((self.vocab_size + self.src_vocab_size) * d + encoder + decoder + finals
                + (self.vocab_size if self.output_bias else 0))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ModelConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise InputError(f"unknown ModelConfig fields: {sorted(unknown)}")
        return cls(**d)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> "ModelConfig":
        return cls.from_dict(json.loads(Path(path).read_text()))


@dataclass
class TrainConfig:
    """The training recipe; stored in metrics.json next to the model it produced."""

    pair: str = "en-de"
    epochs: int = 30
    max_tokens: int = 4096  # token budget per batch (source or target side, padding included)
    warmup: int = 4000  # Noam warm-up steps (§5.3)
    lr_scale: float = 1.0  # multiplies the Noam rate; 1.0 is the paper's formula
    cooldown_epochs: float = 0  # the rate falls linearly to 0 over the last k epochs (0: Noam to the end)
    hold_peak: bool = False  # after the warm-up, keep the peak rate (until the cool-down) instead of Noam's decay
    label_smoothing: float = 0.1  # ε_ls (§5.4)
    weight_decay: float = 0.0
    clip_norm: float = 0.0  # 0: no gradient clipping, as in the paper
    seed: int = 1
    average_last: int = 5  # average the weights of the last k epoch snapshots
    vocab_size: int = 8000
    byte_fallback: bool = False  # the vocabulary spells an unknown character in bytes instead of <unk>
    split_digits: bool = False  # the vocabulary cuts numbers into single digits (copied digit by digit)
    save_every_s: float = 300.0  # resumable training state at most this many seconds apart
    val_beam: int = 1  # beam size used for the per-epoch val BLEU (1: greedy, fast)
    fp16_weights: bool = True  # store model.safetensors in fp16 (halves the shipped size)
    threads: int = 0  # torch intra-op threads; 0: all cores
    source_noise: float = 0.0  # share of training sources typed as a class types (lowercase, no full stop, ...)
    spm_alpha: float = 0.0  # subword sampling (Kudo 2018): a new segmentation of the training pairs each epoch
    val_bleu_every: int = 1  # the per-epoch val BLEU only every k epochs (val loss is always measured)
    timeline: str = "assets/examples.json"  # sentences translated (greedy) after every epoch; "": none
    snapshot_epochs: str = "1,2,4,8,16"  # epochs whose weights are kept (int8) under <out>/timeline/; "": none
    snapshot_bits: int = 8  # those weights as int8 rows, or 4: int4 rows (half the size: checkpoint.int4_rows)
    oversample: str = ""  # "multi30k:2,tatoeba:0.5": Multi30k's pairs twice every epoch, half of Tatoeba's (others once)
    swap_names: float = 0.0  # share of pairs whose names and numbers are drawn anew each epoch (augment.py)
    templates: float = 0.0  # template pairs (introductions, numbers) added each epoch, as a share of the pairs
    names: str = "data/names.json"  # the names drawn (tools/names.py)
    copies: float = 0.0  # copy pairs (a name, a code, a number on both sides) added each epoch, as a share
    # phrasebooks read beside the corpora, comma-separated: files (all trained on) or folders (data/classroom/: topic
    # phrasebooks and word lists, a share held out); oversample "phrasebook:k" (sentences) and "words:k" (frames);
    # a word list named alone is its own part ("data/more_words.tsv": "more_words:k")
    phrasebook: str = ""
    new_vocab: bool = False  # with init_from: learn a new vocabulary and carry the weights over to it
    init_from: str = ""  # a checkpoint to start from (its vocabulary, sizes and weights): a second training stage
    vocab_from: str = ""  # a checkpoint whose vocabulary a new model (not init_from) is trained with
    grow: bool = False  # with init_from: d_ff and the layer counts given here, larger than its own (train.grow)
    bf16: bool = False  # autocast the matrix products to bfloat16 (a GPU's tensor cores); weights and Adam stay fp32
    budget_s: float = 0.0  # >0: as many epochs (at most `epochs`) as fit in this many seconds, timed on the first

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        """A recipe read back from metrics.json; fields it predates take their defaults, retired ones are dropped."""
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})
