"""A checkpoint is a directory: config.json, model.safetensors, spm.model, metrics.json (and words.json, the words
its training pairs write: transformer/words.py; timeline/, its snapshots).

Nothing is ever unpickled: weights are safetensors, everything else is JSON or the sentencepiece proto.
Every file is written to a temporary name and renamed into place, so a crash never leaves half a file.
"""
from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from .config import ModelConfig
from .files import atomic_write, write_json
from .metrics import METRICS, Metrics
from .model import Transformer
from .tokenizer import Tokenizer

CONFIG, WEIGHTS, SPM = "config.json", "model.safetensors", "spm.model"
MARIAN_VOCAB = "vocab.json"  # instead of spm.model: Marian's tokenizer (transformer.interop.marian_vocab)


def untied(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The state without repeats: a tied weight (the output projection is the embedding) is kept once."""
    kept, seen = {}, set()
    for k, v in state.items():
        if v.data_ptr() not in seen:
            seen.add(v.data_ptr())
            kept[k] = v.detach()
    return kept


def save_weights(path: str | Path, state: dict[str, torch.Tensor], fp16: bool = False,
                 metadata: dict[str, str] | None = None) -> None:
    kept = {k: (v.half() if fp16 and v.is_floating_point() else v).contiguous().cpu()
            for k, v in untied(state).items()}
    atomic_write(path, lambda tmp: save_file(kept, tmp, metadata=metadata))


# Timeline snapshots: a quarter of the fp32 size, plenty to draw attention maps and translations from


def int8_rows(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Each matrix row as int8 times one scale (its largest |value| / 127); vectors in fp16."""
    out = {}
    for k, v in untied(state).items():
        v = v.float().cpu()
        if v.dim() == 2:
            scale = v.abs().amax(dim=1, keepdim=True).clamp_min(1e-12) / 127  # (rows, 1)
            out[k], out[k + ".scale"] = (v / scale).round().to(torch.int8), scale
        else:
            out[k] = v.half()
    return out


def int4_rows(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Each matrix row as 4-bit integers (-7..7, two to a byte) times one scale (its largest |value| / 7); vectors
    in fp16: half the int8 size, for a timeline's early snapshots (a model that has learned little loses little)."""
    out = {}
    for k, v in untied(state).items():
        v = v.float().cpu()
        if v.dim() != 2:
            out[k] = v.half()
            continue
        scale = v.abs().amax(dim=1, keepdim=True).clamp_min(1e-12) / 7  # (rows, 1)
        q = ((v / scale).round().clamp(-7, 7) + 8).to(torch.uint8)  # (rows, cols), 1..15
        q = torch.nn.functional.pad(q, (0, q.shape[1] % 2), value=8)  # (rows, cols rounded up to even)
        out[k] = q[:, 0::2] | (q[:, 1::2] << 4)  # (rows, cols / 2): two values a byte
        out[k + ".scale4"], out[k + ".cols"] = scale, torch.tensor(v.shape[1])
    return out


def from_int8_rows(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The float weights of int8_rows or int4_rows."""
    out = {}
    for k, v in tensors.items():
        if k.endswith((".scale", ".scale4", ".cols")):
            continue
        if k + ".scale4" in tensors:
            q = torch.stack([v & 15, v >> 4], dim=-1).flatten(1)  # (rows, cols rounded up): the two halves in order
            out[k] = (q[:, : int(tensors[k + ".cols"])].float() - 8) * tensors[k + ".scale4"]
        else:
            out[k] = v.float() * tensors[k + ".scale"] if k + ".scale" in tensors else v.float()
    return out


TIMELINE = "timeline"  # <checkpoint>/timeline/epoch{N}.safetensors


def snapshot_epochs(path: str | Path) -> list[int]:
    """The epochs whose int8 snapshot a checkpoint directory keeps, ascending."""
    return sorted(int(p.stem[len("epoch"):]) for p in (Path(path) / TIMELINE).glob("epoch*.safetensors"))


def load_snapshot(path: str | Path, epoch: int, device: str | torch.device = "cpu") -> Transformer:
    """The model as it was at the end of `epoch` (eval mode), from the checkpoint's timeline."""
    file = Path(path) / TIMELINE / f"epoch{epoch}.safetensors"
    if not file.is_file():
        raise CheckpointError(f"{path} keeps no snapshot of epoch {epoch} (it has {snapshot_epochs(path)})")
    model = Transformer(ModelConfig.load(Path(path) / CONFIG))
    model.load_weights(from_int8_rows(load_file(file)))
    return model.to(device).eval()


def save_checkpoint(
    out_dir: str | Path, model: Transformer, tokenizer: Tokenizer, metrics: Metrics | None = None, fp16: bool = False
) -> None:
    out_dir = Path(out_dir)
    write_json(out_dir / CONFIG, model.cfg.to_dict())
    save_weights(out_dir / WEIGHTS, model.state_dict(), fp16=fp16)
    atomic_write(out_dir / SPM, tokenizer.save)
    if metrics is not None:
        metrics.save(out_dir / METRICS)


class CheckpointError(ValueError):
    """A checkpoint directory that is missing, incomplete or unreadable; the message says which file."""


def load_checkpoint(path: str | Path, device: str | torch.device = "cpu") -> tuple[Transformer, Tokenizer, Metrics]:
    """(model in eval mode, tokenizer, metrics) from a checkpoint directory."""
    path = Path(path)
    marian = (path / MARIAN_VOCAB).is_file()  # an imported OPUS-MT model keeps Marian's tokenizer files
    for name in (CONFIG, WEIGHTS) + (() if marian else (SPM,)):
        if not (path / name).is_file():
            raise CheckpointError(f"{path / name} is missing")
    try:
        cfg = ModelConfig.load(path / CONFIG)
        model = Transformer(cfg)
        state = load_file(path / WEIGHTS)
        model.load_weights({k: v.float() if v.is_floating_point() else v for k, v in state.items()})
        if marian:
            from .interop.marian_vocab import MarianVocab

            tokenizer = MarianVocab.load(path)
        else:
            tokenizer = Tokenizer.load(path / SPM)
        metrics = Metrics.load(path / METRICS)
    except Exception as e:  # a corrupt file of any kind: say which checkpoint, keep the reason
        raise CheckpointError(f"{path} could not be loaded: {type(e).__name__}: {e}") from e
    if len(tokenizer) != cfg.vocab_size:
        raise CheckpointError(f"{path}: spm.model has {len(tokenizer)} pieces but config.json says {cfg.vocab_size}")
    return model.to(device).eval(), tokenizer, metrics
