"""Export a checkpoint to CTranslate2, the engine translation models are served with on CPUs.

    python -m transformer export --checkpoint checkpoints/en-de --format ctranslate2 --out DIR [--quantization int8]

Our model is the paper's Transformer, which CTranslate2's TransformerSpec describes once told what it cannot
guess: our interleaved sin/cos position table (its own table orders the columns differently), the source's
</s> (the tokenizer does not add it), <s> as the decoder's first token, layer-norm epsilon 1e-5 (PyTorch's
default) and the sentencepiece pieces in id order as both vocabularies. The shared embedding serves as both
embeddings and the output projection, scaled by sqrt(d_model) on the way in, as in §3.4.

`ctranslate2` is an optional dependency: only this module and `ct2_engine.py` import it.
"""
from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ..checkpoint import SPM, load_checkpoint
from ..config import ModelConfig
from ..model import MultiHeadAttention, Transformer
from ..tokenizer import BOS, EOS, UNK, Tokenizer

FORMATS = ("ctranslate2",)
QUANTIZATIONS = ("int8", "int8_float32", "int16", "float16")  # CTranslate2's weight types on CPU and GPU
LAYER_NORM_EPS = 1e-5
MODEL_CONFIG = "model_config.json"  # our ModelConfig, beside CTranslate2's own config.json

# Every ModelConfig field, and how the export treats it. A field added later and not listed here makes the
# export refuse the checkpoint instead of silently dropping something CTranslate2 would have to know.
MAPPED = {"vocab_size", "d_model", "n_heads", "n_encoder_layers", "n_decoder_layers", "d_ff", "max_len",
          "norm_first", "pad_id", "bos_id", "eos_id", "unk_id"}
TRAINING_ONLY = {"dropout", "attn_dropout", "act_dropout", "recipe"}  # inert at inference (the recipe: provenance)
AS_OURS = {"activation": "relu", "positional_layout": "interleaved", "scale_embedding": True, "output_bias": False,
           "src_vocab_size": 0}  # an imported model's options: exported only where they are our own models' values


class ExportError(ValueError):
    """A checkpoint or request the export cannot turn into a correct CTranslate2 model; the message says why."""


def problems(model: Transformer, tokenizer: Tokenizer) -> list[str]:
    """Why this model cannot be written as a CTranslate2 TransformerSpec (empty: it can)."""
    cfg = model.cfg
    found = []
    unknown = {f.name for f in dataclasses.fields(ModelConfig)} - MAPPED - TRAINING_ONLY - set(AS_OURS)
    if unknown:
        found.append(f"the exporter does not know how to express the config fields {sorted(unknown)}")
    for name, ours in AS_OURS.items():
        if getattr(cfg, name) != ours:
            found.append(f"{name} = {getattr(cfg, name)!r} (an imported model's option) is not exported yet")
    if len(tokenizer) != cfg.vocab_size:
        found.append(f"the tokenizer has {len(tokenizer)} pieces but the model {cfg.vocab_size} embeddings")
    named = {"<s>": cfg.bos_id, "</s>": cfg.eos_id, "<unk>": cfg.unk_id}
    for piece, i in named.items():
        if not 0 <= i < len(tokenizer) or tokenizer.sp.id_to_piece(i) != piece:
            found.append(f"token id {i} should be the piece {piece!r} (CTranslate2 finds special tokens by name)")
    pieces = tokenizer.pieces(range(len(tokenizer)))
    if len(set(pieces)) != len(pieces):
        found.append("the vocabulary repeats a piece, so CTranslate2 could not map pieces back to ids")
    if model.output.weight is not model.embed.table.weight:
        found.append("the output projection is not the shared embedding")
    for name, m in model.named_modules():
        if isinstance(m, nn.LayerNorm) and (m.eps != LAYER_NORM_EPS or not m.elementwise_affine):
            found.append(f"{name} is not a LayerNorm with eps {LAYER_NORM_EPS} and learned gain and bias")
        if isinstance(m, nn.Linear) and m is not model.output and m.bias is None:
            found.append(f"{name} has no bias")
    return found


def numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().float().cpu().numpy()


def set_linear(spec, *linears: nn.Linear) -> None:
    """One CTranslate2 linear from one or several of ours, stacked along the output (fused Q/K/V)."""
    spec.weight = numpy(torch.cat([m.weight for m in linears]))  # (sum of outputs, in)
    spec.bias = numpy(torch.cat([m.bias for m in linears]))


def set_norm(spec, norm: nn.LayerNorm) -> None:
    spec.gamma, spec.beta = numpy(norm.weight), numpy(norm.bias)


def set_self_attention(spec, attn: MultiHeadAttention, norm: nn.LayerNorm) -> None:
    set_norm(spec.layer_norm, norm)  # pre-norm: applied to the input; post-norm: after the residual sum
    set_linear(spec.linear[0], attn.w_q, attn.w_k, attn.w_v)
    set_linear(spec.linear[1], attn.w_o)


def set_cross_attention(spec, attn: MultiHeadAttention, norm: nn.LayerNorm) -> None:
    set_norm(spec.layer_norm, norm)
    set_linear(spec.linear[0], attn.w_q)
    set_linear(spec.linear[1], attn.w_k, attn.w_v)  # keys and values both read the encoder output
    set_linear(spec.linear[2], attn.w_o)


def set_feed_forward(spec, ff, norm: nn.LayerNorm) -> None:
    set_norm(spec.layer_norm, norm)
    set_linear(spec.linear_0, ff.w_1)
    set_linear(spec.linear_1, ff.w_2)


def transformer_spec(model: Transformer, tokenizer: Tokenizer):
    """Our weights in a ctranslate2.specs.TransformerSpec; raises ExportError for what it cannot express."""
    found = problems(model, tokenizer)
    if found:
        raise ExportError("this checkpoint cannot be exported to CTranslate2: " + "; ".join(found))
    from ctranslate2.specs import transformer_spec as ts

    cfg = model.cfg
    spec = ts.TransformerSpec.from_config((cfg.n_encoder_layers, cfg.n_decoder_layers), cfg.n_heads,
                                          pre_norm=cfg.norm_first)
    table = numpy(model.embed.table.weight)  # (V, D): embeddings of both sides and the output projection
    positions = numpy(model.positional.pe)  # (max_len, D), columns sin, cos, sin, cos, ... as in §3.5
    enc, dec = spec.encoder, spec.decoder
    enc.embeddings[0].weight, dec.embeddings.weight, dec.projection.weight = table, table, table
    enc.position_encodings.encodings = dec.position_encodings.encodings = positions
    for s, layer in zip(enc.layer, model.encoder.layers):
        set_self_attention(s.self_attention, layer.self_attn, layer.norm_1)
        set_feed_forward(s.ffn, layer.feed_forward, layer.norm_2)
    for s, layer in zip(dec.layer, model.decoder.layers):
        set_self_attention(s.self_attention, layer.self_attn, layer.norm_1)
        set_cross_attention(s.attention, layer.cross_attn, layer.norm_2)
        set_feed_forward(s.ffn, layer.feed_forward, layer.norm_3)
    if cfg.norm_first:  # the pre-norm stacks end in a LayerNorm; post-norm ones have none
        set_norm(enc.layer_norm, model.encoder.final_norm)
        set_norm(dec.layer_norm, model.decoder.final_norm)

    pieces = tokenizer.pieces(range(len(tokenizer)))  # id order, so CTranslate2's ids are ours
    spec.register_source_vocabulary(pieces)
    spec.register_target_vocabulary(pieces)
    c = spec.config
    c.bos_token, c.eos_token, c.unk_token = pieces[BOS], pieces[EOS], pieces[UNK]
    c.decoder_start_token = pieces[BOS]
    c.add_source_bos, c.add_source_eos = False, True  # the encoder reads "pieces </s>", as Translator feeds it
    c.layer_norm_epsilon = LAYER_NORM_EPS
    return spec


def require_ctranslate2() -> None:
    try:
        import ctranslate2  # noqa: F401
    except ImportError:
        raise ExportError("the CTranslate2 export needs the ctranslate2 package: "
                          "pip install -r requirements-ctranslate2.txt") from None


def export(checkpoint: str | Path, out: str | Path, fmt: str = "ctranslate2", quantization: str | None = None,
           model: Transformer | None = None, tokenizer: Tokenizer | None = None) -> Path:
    """Write `out` (CTranslate2's model.bin, vocabulary and config.json; spm.model; our model_config.json).

    `model`/`tokenizer` export what is in memory instead of reading `checkpoint` (tests, notebooks).
    """
    if fmt not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r}; the formats are {', '.join(FORMATS)}")
    if quantization not in (None, *QUANTIZATIONS):
        raise ExportError(f"unknown quantization {quantization!r}; choose one of {', '.join(QUANTIZATIONS)}")
    require_ctranslate2()
    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / "model.bin").is_file())):
        raise ExportError(f"{out} exists and is not a CTranslate2 export; choose a new or empty folder")
    if model is None or tokenizer is None:
        model, tokenizer, _ = load_checkpoint(checkpoint)
    spec = transformer_spec(model, tokenizer)
    spec.validate()
    spec.optimize(quantization=quantization)
    out.mkdir(parents=True, exist_ok=True)
    spec.save(str(out))
    model.cfg.save(out / MODEL_CONFIG)  # for the sizes, and max_len: CTranslate2 fails past the position table
    if checkpoint and (Path(checkpoint) / SPM).is_file():
        shutil.copyfile(Path(checkpoint) / SPM, out / SPM)
    else:
        tokenizer.save(out / SPM)
    return out
