"""OPUS-MT (Marian) models in our own module tree: `python -m transformer import-marian SOURCE OUT`.

A MarianMTModel is the paper's post-norm Transformer with a few choices of its own, each an option of our
ModelConfig (never a second model class): swish (SiLU) in the feed-forward, a bias on the output projection
(final_logits_bias), the sinusoids laid out sin-then-cos, the decoder starting from <pad>, <pad> never generated,
and, for some models, separate source and target vocabularies. Its two sentencepiece models and its vocab.json
sit behind our Tokenizer interface (MarianVocab). The import reads the files `save_pretrained` writes (config.json,
model.safetensors, source.spm, target.spm, vocab.json, target_vocab.json); `transformers` is
not needed for it. OPUS-MT models are CC-BY 4.0 (Helsinki-NLP, Tiedemann and Thottingal 2020).
"""
from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import load_file

from ..checkpoint import CONFIG, save_weights
from ..files import write_json
from ..metrics import Metrics
from ..config import ACTIVATIONS, ModelConfig
from ..errors import InputError
from ..model import Transformer
from .marian_vocab import SOURCE_SPM, TARGET_SPM, VOCAB, MarianVocab

ACTIVATION = {"swish": "silu", "silu": "silu", "relu": "relu", "gelu": "gelu"}  # Marian's names -> ours
LICENCE = "CC-BY 4.0"


# -----------------------------------------------------------------------------
# The tokenizer: two sentencepiece models and Marian's own ids


def config_from_marian(hf: dict) -> ModelConfig:
    """Our ModelConfig for a Marian config.json, or InputError saying in a sentence why it does not fit."""
    if hf.get("model_type") != "marian":
        raise InputError(f"this is a {hf.get('model_type')!r} model; import-marian reads Marian (OPUS-MT) models only")
    refusals = []
    for flag, why in (("normalize_embedding", "a layer norm on the embeddings"),
                      ("normalize_before", "pre-norm layers in the Marian layout"),
                      ("add_final_layer_norm", "a final layer norm after a post-norm stack")):
        if hf.get(flag):
            refusals.append(f"it has {why}, which our Transformer does not")
    pairs = (("encoder_attention_heads", "decoder_attention_heads", "heads"), ("encoder_ffn_dim", "decoder_ffn_dim",
             "feed-forward sizes"))
    for enc, dec, what in pairs:
        if hf[enc] != hf[dec]:
            refusals.append(f"its encoder and decoder have different {what} ({hf[enc]} and {hf[dec]})")
    activation = ACTIVATION.get(hf.get("activation_function", "swish"))
    if activation not in ACTIVATIONS:
        refusals.append(f"its activation {hf.get('activation_function')!r} is none of {', '.join(ACTIVATIONS)}")
    shared = hf.get("share_encoder_decoder_embeddings", True)
    if not hf.get("tie_word_embeddings", True):
        refusals.append("its output projection is not tied to the decoder's embedding")
    if refusals:
        raise InputError("this Marian model does not fit our Transformer: " + "; ".join(refusals) + ".")
    pad = hf["pad_token_id"]
    if hf.get("decoder_start_token_id", pad) != pad:
        raise InputError("this Marian model does not start decoding from <pad>, as OPUS-MT models do")
    target_size = hf.get("decoder_vocab_size") or hf["vocab_size"]
    return ModelConfig(
        vocab_size=target_size, d_model=hf["d_model"], n_heads=hf["encoder_attention_heads"],
        n_encoder_layers=hf["encoder_layers"], n_decoder_layers=hf["decoder_layers"], d_ff=hf["encoder_ffn_dim"],
        dropout=0.0, attn_dropout=0.0, act_dropout=0.0, max_len=hf["max_position_embeddings"], norm_first=False,
        pad_id=pad, bos_id=pad, eos_id=hf["eos_token_id"], unk_id=1, activation=activation,
        positional_layout="halves", scale_embedding=bool(hf.get("scale_embedding", True)), output_bias=True,
        src_vocab_size=0 if shared else hf["vocab_size"])


def parameter_names(cfg: ModelConfig) -> dict[str, str]:
    """Our parameter name -> MarianMTModel's, for every parameter of ours (the tied output weight excepted)."""
    names = {"embed.table.weight": "model.decoder.embed_tokens.weight" if cfg.src_vocab_size else "model.shared.weight",
             "output.bias": "final_logits_bias"}
    if cfg.src_vocab_size:
        names["embed.source_table.weight"] = "model.encoder.embed_tokens.weight"
    for side, n in (("encoder", cfg.n_encoder_layers), ("decoder", cfg.n_decoder_layers)):
        blocks = [("self_attn", "self_attn", "norm_1", "self_attn_layer_norm")]
        if side == "decoder":
            blocks.append(("cross_attn", "encoder_attn", "norm_2", "encoder_attn_layer_norm"))
        final = "norm_2" if side == "encoder" else "norm_3"
        for i in range(n):
            ours, theirs = f"{side}.layers.{i}.", f"model.{side}.layers.{i}."
            for our_attn, hf_attn, our_norm, hf_norm in blocks:
                for w_ours, w_hf in (("w_q", "q_proj"), ("w_k", "k_proj"), ("w_v", "v_proj"), ("w_o", "out_proj")):
                    for p in ("weight", "bias"):
                        names[f"{ours}{our_attn}.{w_ours}.{p}"] = f"{theirs}{hf_attn}.{w_hf}.{p}"
                for p in ("weight", "bias"):
                    names[f"{ours}{our_norm}.{p}"] = f"{theirs}{hf_norm}.{p}"
            for p in ("weight", "bias"):
                names[f"{ours}feed_forward.w_1.{p}"] = f"{theirs}fc1.{p}"
                names[f"{ours}feed_forward.w_2.{p}"] = f"{theirs}fc2.{p}"
                names[f"{ours}{final}.{p}"] = f"{theirs}final_layer_norm.{p}"
    return names


def read_marian_weights(folder: Path) -> dict[str, torch.Tensor]:
    """The state dict `save_pretrained` wrote as safetensors (a pickled pytorch_model.bin is never opened here)."""
    if (folder / "model.safetensors").is_file():
        return load_file(folder / "model.safetensors")
    if (folder / "pytorch_model.bin").is_file():
        raise InputError(f"{folder} has its weights as pytorch_model.bin only, a pickle, which this project never "
                         "opens: re-save the model with transformers (MarianMTModel.from_pretrained(folder)"
                         ".save_pretrained(folder) writes model.safetensors), then import that folder")
    raise InputError(f"{folder} has no model.safetensors")


def resolve_source(source: str) -> Path:
    """A local folder as it is; a Hub name ("Helsinki-NLP/opus-mt-en-de") downloaded by huggingface_hub where there
    is a network (a Space has one)."""
    if Path(source).is_dir():
        return Path(source)
    if source.count("/") != 1:
        raise InputError(f"{source} is neither a folder here nor a Hub name such as Helsinki-NLP/opus-mt-en-de")
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(source, allow_patterns=["*.json", "*.spm", "*.safetensors"]))
    except ImportError:
        raise InputError(f"{source} is not a folder here, and downloading it needs huggingface_hub "
                         "(pip install huggingface_hub)") from None
    except Exception as e:  # no network, no such model, ...: say which, in a sentence
        raise InputError(f"{source} is not a folder here and could not be downloaded ({type(e).__name__}): this "
                         "needs a network, as on a Hugging Face Space; elsewhere, save the model with "
                         "MarianMTModel.save_pretrained and its tokenizer's save_pretrained, and give that folder"
                         ) from None


def import_marian(source: str, out: str | Path) -> Path:
    """Write checkpoint directory `out` (config.json, model.safetensors, Marian's tokenizer files, metrics.json with
    the model card's facts) from a Marian model folder or Hub name."""
    folder = resolve_source(source)
    if not (folder / CONFIG).is_file():
        raise InputError(f"{folder} has no config.json: give the folder MarianMTModel.save_pretrained wrote")
    hf = json.loads((folder / CONFIG).read_text(encoding="utf-8"))
    cfg = config_from_marian(hf)
    missing = [n for n in (SOURCE_SPM, TARGET_SPM, VOCAB) if not (folder / n).is_file()]
    if missing:
        raise InputError(f"{folder} lacks the tokenizer's {', '.join(missing)}: save the tokenizer there too")
    vocab = MarianVocab(folder)
    if len(vocab) != cfg.vocab_size or (cfg.src_vocab_size and vocab.source_size != cfg.src_vocab_size):
        raise InputError(f"the vocabulary has {len(vocab)} pieces but the model {cfg.vocab_size} embeddings")
    if (vocab.pad_id, vocab.eos_id) != (cfg.pad_id, cfg.eos_id):
        raise InputError("the vocabulary's <pad> and </s> ids are not the model's")
    cfg.unk_id = vocab.unk_id
    theirs = read_marian_weights(folder)
    model = Transformer(cfg)
    names = parameter_names(cfg)
    absent = sorted(v for v in names.values() if v not in theirs and v != "final_logits_bias")
    if absent:
        raise InputError(f"the weights lack {len(absent)} tensors this model needs, e.g. {absent[0]}")
    state = {ours: theirs[hf_name].reshape(model.state_dict()[ours].shape) for ours, hf_name in names.items()
             if hf_name in theirs}
    state.setdefault("output.bias", torch.zeros(cfg.vocab_size))
    model.load_weights(state)
    out = Path(out)
    write_json(out / CONFIG, cfg.to_dict())
    save_weights(out / "model.safetensors", model.state_dict())
    vocab.save(out)
    card = {"source": str(source), "licence": LICENCE, "architecture": "MarianMTModel (OPUS-MT), imported",
            "parameters": sum(p.numel() for p in model.parameters())}
    Metrics(imported=card).save(out)
    return out


def marian_copy(model):
    """transformers' MarianMTModel with our sizes; our weights and positional table when the model is post-norm."""
    from transformers import MarianConfig, MarianMTModel

    c = model.cfg
    config = MarianConfig(
        vocab_size=c.vocab_size, decoder_vocab_size=c.vocab_size, d_model=c.d_model,
        encoder_layers=c.n_encoder_layers, decoder_layers=c.n_decoder_layers,
        encoder_attention_heads=c.n_heads, decoder_attention_heads=c.n_heads,
        encoder_ffn_dim=c.d_ff, decoder_ffn_dim=c.d_ff, activation_function="relu",
        max_position_embeddings=c.max_len, scale_embedding=True, share_encoder_decoder_embeddings=True,
        tie_word_embeddings=True, pad_token_id=c.pad_id, eos_token_id=c.eos_id, bos_token_id=c.bos_id,
        decoder_start_token_id=c.bos_id, forced_eos_token_id=None, dropout=0.0, attention_dropout=0.0,
        activation_dropout=0.0,
    )
    hf = MarianMTModel(config).eval()
    if c.norm_first:  # Marian is post-norm: same sizes and cost, but our pre-norm weights would not fit
        return hf
    ours = model.state_dict()
    state = {theirs: ours[name] for name, theirs in parameter_names(c).items() if name in ours}
    for side in ("encoder", "decoder"):
        state[f"model.{side}.embed_tokens.weight"] = ours["embed.table.weight"]
        state[f"model.{side}.embed_positions.weight"] = model.positional.pe[: c.max_len]
    state["lm_head.weight"] = ours["embed.table.weight"]
    missing, unexpected = hf.load_state_dict(state, strict=False)
    assert not unexpected and set(missing) <= {"final_logits_bias"}, (missing, unexpected)
    return hf
