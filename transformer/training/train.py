"""Training on Multi30k (and Tatoeba): Adam with the Noam schedule, label smoothing, bucketed batches (§5).

Resumable exactly: a training state (weights, Adam moments, dropout RNG, position in the epoch) is written
atomically at most `save_every_s` seconds apart and at each epoch's end, under <out>/train/. Runs under
torchrun (DDP) unchanged: each rank takes every world_size-th batch and rank 0 writes.

A run may start from a shipped checkpoint (`init_from`): a second stage that keeps its vocabulary and
weights, numbers its epochs on from the first stage's and keeps that stage's curves and snapshots. With `grow` it
goes on in a larger model that starts out computing exactly what the checkpoint does (`grow`).

Each epoch's batches are drawn one epoch ahead in a process of their own (Drawer); a step never waits for a GPU to
finish the one before (the loss is summed on the device and read every 100 steps).

Shape legend: B batch, S source length, T target length, V vocabulary.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import platform
import random
import shlex
import sys
import time
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist
from safetensors import safe_open
from safetensors.torch import load_file
from torch import Tensor
from tqdm import tqdm

from ..checkpoint import (TIMELINE, int4_rows, int8_rows, load_checkpoint, load_snapshot, save_checkpoint,
                         save_weights, snapshot_epochs)
from ..files import atomic_write, write_json
from ..metrics import Metrics
from ..config import ModelConfig, TrainConfig
from .data import batch_tensors, bucket_batches, iterate_batches, make_example, open_corpora, read_classroom
from ..decoding import DecodeOptions
from .evaluate import score_translations
from ..model import Transformer, count_parameters
from ..words import TrainingWords
from .augment import Names, augment
from .noise import noisy_sources
from .schedule import learning_rate
from ..tokenizer import Tokenizer
from ..translator import Translator

DROPOUTS = ("dropout", "attn_dropout", "act_dropout")  # the model options a second stage may change
GROWN = ("d_ff", "n_encoder_layers", "n_decoder_layers")  # and, with --grow true, make larger

# -----------------------------------------------------------------------------
# Loss


def label_smoothed_nll(log_probs: Tensor, target: Tensor, epsilon: float, pad_id: int) -> tuple[Tensor, Tensor, Tensor]:
    """Cross-entropy against (1 - ε) one-hot + ε uniform over V (§5.4), summed over non-pad targets.

    log_probs (B, T, V), target (B, T). Returns (smoothed loss sum, plain NLL sum, number of target tokens), each a
    0-dim tensor on log_probs' device: nothing here waits for a GPU (a mask multiplies; no boolean indexing).
    """
    nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)  # (B, T)
    uniform = -log_probs.mean(dim=-1)  # (B, T): cross-entropy against the uniform distribution
    keep = target.ne(pad_id)  # (B, T)
    zero = nll.new_zeros(())
    loss = torch.where(keep, (1.0 - epsilon) * nll + epsilon * uniform, zero).sum()
    return loss, torch.where(keep, nll, zero).sum(), keep.sum()


# -----------------------------------------------------------------------------
# One step: the trainer, the benchmark and the tests all call this


def make_optimizer(model: Transformer, weight_decay: float = 0.0) -> torch.optim.Adam:
    """Adam with β1 = 0.9, β2 = 0.98, ε = 1e-9 (§5.3); train_step sets the rate before every update.
    On a GPU, one fused kernel updates every parameter (the same arithmetic, far fewer launches)."""
    fused = next(model.parameters()).is_cuda
    return torch.optim.Adam(model.parameters(), lr=0.0, betas=(0.9, 0.98), eps=1e-9, weight_decay=weight_decay,
                            fused=fused or None)


def train_step(model, optimizer, src: Tensor, tgt: Tensor, lr: float, label_smoothing: float, pad_id: int,
               clip_norm: float = 0.0, bf16: bool = False) -> tuple[Tensor, Tensor]:
    """One update on a batch src (B, S), tgt (B, T) with <s> and </s>; returns (summed smoothed loss, target tokens)
    as 0-dim tensors on the batch's device, so that a GPU's next step is queued without waiting for this one (read
    them with float() and int() when they are needed).

    `model` may be a DistributedDataParallel wrapper; the gradient is of the mean loss per target token.
    bf16: the forward pass under autocast (matrix products in bfloat16; log-softmax and the loss in float32).
    """
    for group in optimizer.param_groups:
        group["lr"] = lr
    with torch.autocast(src.device.type, dtype=torch.bfloat16, enabled=bf16):
        log_probs = model(src, tgt[:, :-1])  # (B, T-1, V): predict each next target token
    loss, _, n_tokens = label_smoothed_nll(log_probs.float(), tgt[:, 1:], label_smoothing, pad_id)
    optimizer.zero_grad(set_to_none=True)
    (loss / n_tokens).backward()
    if clip_norm:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
    optimizer.step()
    return loss.detach(), n_tokens


# -----------------------------------------------------------------------------
# Training state: safetensors for tensors, JSON for the rest (never pickle)


STATE = "state.safetensors"  # weights, Adam moments, RNG and, in its metadata, the position: one atomic file


def save_state(path: Path, model, optimizer, position: dict) -> None:
    tensors = {f"model.{k}": v for k, v in model.state_dict().items()}
    for idx, st in optimizer.state_dict()["state"].items():
        for key, value in st.items():
            tensors[f"adam.{idx}.{key}"] = value if torch.is_tensor(value) else torch.tensor(value)
    tensors["rng.cpu"] = torch.get_rng_state()  # dropout masks go on where they stopped
    if torch.cuda.is_available():
        tensors["rng.cuda"] = torch.cuda.get_rng_state()
    save_weights(path / STATE, tensors, metadata={"position": json.dumps(position)})


def load_state(path: Path, model, optimizer) -> dict:
    with safe_open(path / STATE, "pt") as f:
        position = json.loads(f.metadata()["position"])
    tensors = load_file(path / STATE)
    model.load_weights({k[len("model."):]: v for k, v in tensors.items() if k.startswith("model.")})
    if "rng.cpu" in tensors:
        torch.set_rng_state(tensors["rng.cpu"])
    if "rng.cuda" in tensors and torch.cuda.is_available():
        torch.cuda.set_rng_state(tensors["rng.cuda"])
    state: dict[int, dict] = {}
    for name, value in tensors.items():
        if name.startswith("adam."):
            _, idx, key = name.split(".", 2)
            state.setdefault(int(idx), {})[key] = value
    optimizer.load_state_dict({"state": state, "param_groups": optimizer.state_dict()["param_groups"]})
    return position


def compact_state(src: Path, dst: Path) -> None:
    """A training state small enough to keep in git between machines: weights and RNG exact, Adam's moments in
    bf16 (float32's range, so no second moment underflows to 0; about a third of the file). load_state reads
    it as it reads a full one: the optimizer casts the moments back to float32."""
    with safe_open(src, "pt") as f:
        metadata = f.metadata()
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    for k, v in tensors.items():
        if k.endswith(("exp_avg", "exp_avg_sq")):
            tensors[k] = v.to(torch.bfloat16)
    save_weights(dst, tensors, metadata=metadata)


def average_snapshots(paths: list[Path]) -> dict[str, Tensor]:
    """Element-wise mean of several weight files (checkpoint averaging, §6.1)."""
    total: dict[str, Tensor] = {}
    for p in paths:
        for k, v in load_file(p).items():
            total[k] = total.get(k, 0) + v.double()
    return {k: (v / len(paths)).float() for k, v in total.items()}


def finish(out_dir: Path, model, tokenizer, metrics: Metrics, last: int, fp16: bool, val_src, val_tgt) -> None:
    """Average the last `last` epoch snapshots under <out>/train/, score them on val, write the checkpoint.

    val_tgt: one reference per source, or reference streams (several references per source)."""
    work = Path(out_dir) / "train"
    epochs = sorted(int(p.stem[len("epoch"):]) for p in work.glob("epoch*.safetensors"))[-last:]
    model.load_weights(average_snapshots([work / f"epoch{e}.safetensors" for e in epochs]))
    metrics.averaged_epochs = epochs
    metrics.val_bleu_averaged_greedy = bleu_of(model, tokenizer, val_src, val_tgt, 1)
    save_checkpoint(out_dir, model, tokenizer, metrics, fp16=fp16)
    print(f"wrote {out_dir}: epochs {epochs[0]}-{epochs[-1]} averaged, val BLEU (greedy) "
          f"{metrics.val_bleu_averaged_greedy:.2f}")


def hardware() -> str:
    if torch.cuda.is_available():
        return f"{torch.cuda.device_count()} x {torch.cuda.get_device_name(0)}"
    threads = torch.get_num_threads()
    return f"CPU {platform.processor() or platform.machine()}, {threads} thread{'s' if threads > 1 else ''}"


# -----------------------------------------------------------------------------
# The loop


def translate_all(model, tokenizer, src: list[str], beam: int, batch_size: int = 64) -> list[str]:
    """Greedy (beam 1) or beam-search translations of `src`, read exactly as the app reads them (Translator)."""
    options = DecodeOptions("beam" if beam > 1 else "greedy", beam_size=max(beam, 1))
    return [t.text for t in Translator(model, tokenizer).translate_batch(src, options, batch_size=batch_size)]


def bleu_of(model, tokenizer, src: list[str], refs: list, beam: int, batch_size: int = 64) -> float:
    """Cased corpus BLEU of translate_all's output; refs: one per source, or reference streams."""
    return score_translations(translate_all(model, tokenizer, src, beam, batch_size), refs)["bleu"]


def read_timeline_sources(tcfg: TrainConfig) -> list[str]:
    """The sentences translated after every epoch (a JSON list; a relative path is looked up in the project too)."""
    if not tcfg.timeline:
        return []
    path = project_path(tcfg.timeline)
    return json.loads(path.read_text(encoding="utf-8"))


@torch.no_grad()
def validation_loss(model, examples, max_tokens: int, device) -> float:
    model.eval()
    nll_sum, n = 0.0, 0
    for src, tgt in iterate_batches(examples, bucket_batches(examples, max_tokens, seed=None), model.cfg.pad_id):
        src, tgt = src.to(device), tgt.to(device)
        log_probs = model(src, tgt[:, :-1])  # (B, T-1, V)
        _, nll, count = label_smoothed_nll(log_probs, tgt[:, 1:], 0.0, model.cfg.pad_id)
        nll_sum, n = nll_sum + float(nll), n + int(count)
    model.train()
    return nll_sum / n


def oversampling(spec: str) -> dict[str, float]:
    """"multi30k:2,tatoeba:0.5" -> {"multi30k": 2.0, "tatoeba": 0.5}: how many times each corpus is seen per
    epoch (a fraction: that share of its pairs, see `repeated`)."""
    out = {}
    for item in filter(None, (x.strip() for x in spec.split(","))):
        name, _, times = item.partition(":")
        try:
            out[name] = float(times or 1)
        except ValueError:
            raise ValueError(f"--oversample {item!r}: a corpus's name and how many times, e.g. tatoeba:0.5") from None
        if out[name] < 0:
            raise ValueError(f"--oversample {item!r}: a corpus is seen 0 times or more")
    return out


def repeated(src: list[str], tgt: list[str], times: float) -> tuple[list[str], list[str]]:
    """The pairs `times` times: whole copies, then the fraction's share of them drawn at random, the same share
    every time (seeded by the pairs' count, so that a resumed run reads the same epoch)."""
    whole, share = int(times), times - int(times)
    keep = sorted(random.Random(len(src)).sample(range(len(src)), round(share * len(src)))) if share else []
    return src * whole + [src[i] for i in keep], tgt * whole + [tgt[i] for i in keep]


def first_stage(init_from: str, timeline_src: list[str], device,
                same_vocab: bool = False) -> tuple[Transformer, Tokenizer, Metrics, list[dict]]:
    """The checkpoint a second stage starts from: (model, tokenizer, its summary, its epoch rows).

    Its rows keep their curves. Their translations stay when the stage goes on with its vocabulary and timeline
    sentences (same_vocab); else they are redone for this run's timeline sentences from the snapshots it kept
    (other epochs lose theirs), and its last row gets the shipped model's own."""
    model, tokenizer, metrics = load_checkpoint(init_from, device)
    if same_vocab and metrics.timeline_sources == timeline_src:
        return model, tokenizer, stage_summary(init_from, metrics), [dict(row) for row in metrics.epochs]
    rows = [dict(row, translations=[]) for row in metrics.epochs]
    kept = set(snapshot_epochs(init_from))
    for row in rows:
        if row["epoch"] in kept and timeline_src:
            snap = load_snapshot(init_from, row["epoch"], device)
            row["translations"] = translate_all(snap, tokenizer, timeline_src, 1)
    if rows and timeline_src:
        rows[-1]["translations"] = translate_all(model, tokenizer, timeline_src, 1)
    return model, tokenizer, stage_summary(init_from, metrics), rows


def stage_summary(init_from: str, metrics: Metrics) -> Metrics:
    """The stage before, without its rows (they are this run's too)."""
    return Metrics(command=metrics.command, hardware=metrics.hardware, train_config=metrics.train_config,
                   data=metrics.data, first_stage=metrics.first_stage, train_wall_s=metrics.train_wall_s,
                   averaged_epochs=metrics.averaged_epochs, test=metrics.test, extra={"from": str(init_from)})


@dataclass
class TrainingRun:
    """What set_up prepares for the epoch loop: the model and its optimizer, the data, where the run stands."""

    mcfg: ModelConfig
    tcfg: TrainConfig
    device: torch.device
    rank: int
    world: int
    out_dir: Path
    work: Path  # <out>/train: the resumable state, epoch snapshots, the epoch log
    model: Transformer
    ddp_model: torch.nn.Module  # the model, wrapped for DDP when several processes train it
    optimizer: torch.optim.Optimizer
    tokenizer: Tokenizer
    train_src: list[str]  # the training pairs, each corpus repeated as `oversample` says
    train_tgt: list[str]
    clean_ex: list[tuple[list[int], list[int]]]  # their examples as written (no noise, best segmentation)
    val_ex: list[tuple[list[int], list[int]]]
    val_sets: dict[str, tuple[list[str], list]]  # per corpus: (sources, reference streams)
    timeline_src: list[str]
    first: int  # this stage's first epoch (a later stage numbers on from the one before)
    last: int
    metrics: Metrics
    stage: Metrics | None  # the stage this one started from
    position: dict  # epoch, batch, step, elapsed_s: where a resumed run goes on


def read_corpora(data_dir: str | list[str], tcfg: TrainConfig, limit: int = 0):
    """(train_src, train_tgt, val_src, val_tgt, val_sets): every corpus's training pairs (some seen several times
    an epoch, `oversample`), each corpus's own val split; `limit` keeps the first N pairs (smoke tests)."""
    repeats = oversampling(tcfg.oversample)
    train_src, train_tgt, val_src, val_tgt, val_sets = [], [], [], [], {}
    for corpus in open_corpora(data_dir, tcfg.pair):
        src, tgt = corpus.pairs("train")
        vsrc, vtgt = corpus.pairs("val")
        if limit:
            src, tgt, vsrc, vtgt = src[:limit], tgt[:limit], vsrc[: max(limit // 10, 8)], vtgt[: max(limit // 10, 8)]
        src_n, tgt_n = repeated(src, tgt, repeats.get(corpus.name, 1))
        train_src += src_n
        train_tgt += tgt_n
        val_src, val_tgt = val_src + vsrc, val_tgt + vtgt
        val_sets[corpus.name] = corpus.split("val") if not limit else (vsrc, [vtgt])
    if tcfg.phrasebook:  # training pairs only: its held-out share is read by evaluate's classroom set
        for name, (src, tgt) in read_classroom(phrasebook_paths(tcfg.phrasebook), tcfg.pair.split("-")[1]).items():
            src_n, tgt_n = repeated(src, tgt, repeats.get(name, 1))
            train_src += src_n
            train_tgt += tgt_n
    return train_src, train_tgt, val_src, val_tgt, val_sets


def training_pairs(data_dir: str | list[str], pair: str, phrasebook: str = "", limit: int = 0) -> tuple[list[str], list[str]]:
    """Every training pair once (no oversampling): the corpora's train splits and the phrasebooks' training share."""
    src, tgt = [], []
    for corpus in open_corpora(data_dir, pair):
        s, t = corpus.pairs("train")
        src, tgt = src + (s[:limit] if limit else s), tgt + (t[:limit] if limit else t)
    for s, t in read_classroom(phrasebook_paths(phrasebook), pair.split("-")[1]).values():
        src, tgt = src + s, tgt + t
    return src, tgt


def phrasebook_paths(phrasebook: str) -> str:
    """--phrasebook's comma-separated files and folders, each found in the project when not here."""
    return ",".join(str(project_path(p.strip())) for p in phrasebook.split(",") if p.strip())


def project_path(path: str) -> Path:
    """A relative path that does not exist here is looked up in the project (data/..., assets/...)."""
    p = Path(path)
    return p if p.is_absolute() or p.exists() else Path(__file__).resolve().parents[2] / p


@torch.no_grad()
def carry_over(old: Transformer, old_tok: Tokenizer, new_tok: Tokenizer, mcfg: ModelConfig) -> Transformer:
    """A model for a new vocabulary from one trained on another: every layer kept, each new piece's embedding
    the mean of the old embeddings of the old pieces that spell it (longest match first; special ids kept)."""
    model = Transformer(mcfg)
    state = {k: v for k, v in old.state_dict().items() if not k.startswith(("embed.", "output."))}
    model.load_state_dict(state, strict=False)
    old_table, table = old.embed.table.weight, model.embed.table.weight
    old_ids = {old_tok.id_to_piece(i): i for i in range(len(old_tok))}
    longest = max(map(len, old_ids))
    for i in range(len(new_tok)):
        piece = new_tok.id_to_piece(i)
        if i < 4 or piece in old_ids:  # <pad> <s> </s> <unk>, and pieces both vocabularies have
            table[i] = old_table[old_ids.get(piece, i)]
            continue
        if piece.startswith("<0x"):  # a byte of byte fallback: the character's old piece if it has one
            char = bytes([int(piece[3:5], 16)]).decode("latin-1")
            piece = char if char in old_ids else "<unk>"
        parts, at = [], 0
        while at < len(piece):  # the old pieces that spell it, longest first; a character unknown is <unk>
            for n in range(min(longest, len(piece) - at), 0, -1):
                if piece[at : at + n] in old_ids:
                    parts.append(old_ids[piece[at : at + n]])
                    at += n
                    break
            else:
                parts.append(old_tok.unk_id)
                at += 1
        table[i] = old_table[parts].mean(dim=0)
    return model


@torch.no_grad()
def grow(old: Transformer, mcfg: ModelConfig) -> Transformer:
    """A larger model (mcfg: more feed-forward units, more layers) that computes exactly what `old` does, with room
    to learn more. Every old weight keeps its place; the new hidden units read x through freshly drawn W_1 rows but
    write nothing yet (their W_2 columns are 0), and the new layers, stacked on top of each stack, have their
    sublayers' output projections at 0, so that (pre-norm) x + Sublayer(LayerNorm(x)) adds nothing to x. Training
    moves those zeros first, then the rest (the gradient reaches W_1's new rows through W_2's new columns)."""
    if any(getattr(mcfg, k) < getattr(old.cfg, k) for k in GROWN):
        raise ValueError(f"a model only grows: {[(k, getattr(old.cfg, k), getattr(mcfg, k)) for k in GROWN]}")
    deeper = (mcfg.n_encoder_layers, mcfg.n_decoder_layers) != (old.cfg.n_encoder_layers, old.cfg.n_decoder_layers)
    if deeper and not old.cfg.norm_first:
        raise ValueError("a post-norm layer is not the identity with its outputs at 0: only a pre-norm model deepens")
    model = Transformer(mcfg)  # every new weight Xavier-uniform, as a model trained from scratch starts
    state = model.state_dict()
    for name, w in old.state_dict().items():
        state[name][tuple(slice(0, n) for n in w.shape)] = w  # the old units first, the new ones after them
    for stack, n_old in ((model.encoder, old.cfg.n_encoder_layers), (model.decoder, old.cfg.n_decoder_layers)):
        for layer in stack.layers[:n_old]:
            layer.feed_forward.w_2.weight[:, old.cfg.d_ff:] = 0  # the new units write nothing yet
        for layer in stack.layers[n_old:]:  # a new layer: each of its sublayers adds 0 to x
            attention = [m for m in (layer.self_attn, getattr(layer, "cross_attn", None)) if m is not None]
            for linear in [m.w_o for m in attention] + [layer.feed_forward.w_2]:
                linear.weight.zero_()
                linear.bias.zero_()
    return model


def vocabulary(tcfg: TrainConfig, train_src: list[str], train_tgt: list[str]) -> Tokenizer:
    """The joint sentencepiece vocabulary, learned from both sides of the pairs as written and as drawn anew."""
    new_src, new_tgt = augmented(tcfg, train_src, train_tgt, seed=0)
    return Tokenizer.train(train_src + train_tgt + new_src + new_tgt, tcfg.vocab_size,
                           byte_fallback=tcfg.byte_fallback, split_digits=tcfg.split_digits)


def set_up(data_dir: str | list[str], out: str, mcfg: ModelConfig, tcfg: TrainConfig, resume: bool,
           limit: int) -> TrainingRun:
    """Processes, data, vocabulary, model, optimizer and metrics; a resumed run's state where it stopped."""
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    rank, world = 0, 1
    if distributed:
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}" if torch.cuda.is_available() else "cpu")
    if tcfg.threads:
        torch.set_num_threads(tcfg.threads)
    torch.backends.cuda.matmul.allow_tf32 = True  # what bf16 leaves in float32 (validation) on tensor cores too
    torch.manual_seed(tcfg.seed)
    out_dir, work = Path(out), Path(out) / "train"
    work.mkdir(parents=True, exist_ok=True)
    train_src, train_tgt, val_src, val_tgt, val_sets = read_corpora(data_dir, tcfg, limit)

    # The joint sentencepiece vocabulary (trained on the training side of both languages), or the stage before's
    timeline_src = read_timeline_sources(tcfg)
    spm_path = work / "spm.model"
    init_model, stage, history = None, None, []
    if tcfg.init_from:
        init_model, tokenizer, stage, history = first_stage(tcfg.init_from, timeline_src, device, not tcfg.new_vocab)
        kept = DROPOUTS + GROWN if tcfg.grow else DROPOUTS
        mcfg = ModelConfig.from_dict({**init_model.cfg.to_dict(), **{k: getattr(mcfg, k) for k in kept}})
        if rank == 0 and not spm_path.exists():
            atomic_write(spm_path, (vocabulary(tcfg, train_src, train_tgt) if tcfg.new_vocab else tokenizer).save)
    elif rank == 0 and not spm_path.exists():
        tokenizer = (Tokenizer.load(project_path(tcfg.vocab_from) / "spm.model") if tcfg.vocab_from
                     else vocabulary(tcfg, train_src, train_tgt))
        atomic_write(spm_path, tokenizer.save)
    if tcfg.vocab_from:  # what the borrowed vocabulary does (the model card says it), as its own run recorded
        made = Metrics.load(project_path(tcfg.vocab_from)).train_config
        tcfg.byte_fallback, tcfg.split_digits = made.get("byte_fallback", False), made.get("split_digits", False)
    if distributed:
        dist.barrier()  # every rank reads the one vocabulary rank 0 wrote
    tokenizer = Tokenizer.load(spm_path)
    mcfg.vocab_size = len(tokenizer)

    def encode(srcs, tgts):
        return [make_example(tokenizer.encode(s), tokenizer.encode(t), mcfg) for s, t in zip(srcs, tgts)]

    model = Transformer(mcfg).to(device)
    first = 1
    if init_model is not None:
        if tcfg.new_vocab:
            model = carry_over(init_model, Tokenizer.load(Path(tcfg.init_from) / "spm.model"), tokenizer, mcfg).to(device)
        elif tcfg.grow:
            model = grow(init_model, mcfg).to(device)
        else:
            model.load_weights(init_model.state_dict())
        first = history[-1]["epoch"] + 1 if history else 1
        if rank == 0 and tcfg.grow:  # the grown start, as the epoch before this run's (its weights to average with)
            save_weights(work / f"epoch{first - 1}.safetensors", model.state_dict())
        if rank == 0 and not tcfg.new_vocab:  # snapshots read with another vocabulary would translate nonsense
            for e in snapshot_epochs(tcfg.init_from):  # its snapshots, and its shipped model as its last epoch
                if tcfg.grow:  # in the grown shape, which the new config.json describes; they translate as they did
                    save_weights(out_dir / TIMELINE / f"epoch{e}.safetensors",
                                 snapshot_rows(tcfg, grow(load_snapshot(tcfg.init_from, e), mcfg)))
                else:
                    atomic_write(out_dir / TIMELINE / f"epoch{e}.safetensors",
                                 lambda tmp, e=e: Path(tmp).write_bytes((Path(tcfg.init_from) / TIMELINE / f"epoch{e}.safetensors").read_bytes()))
            if history:
                save_weights(out_dir / TIMELINE / f"epoch{first - 1}.safetensors", snapshot_rows(tcfg, model))
    optimizer = make_optimizer(model, tcfg.weight_decay)
    position = {"epoch": first, "batch": 0, "step": 0, "elapsed_s": 0.0}
    metrics = Metrics(command="python -m transformer " + shlex.join(sys.argv[1:]), hardware=hardware(),
                      torch=torch.__version__, world_size=world, parameters=count_parameters(model),
                      model_config=mcfg.to_dict(), train_config=tcfg.to_dict(),
                      data=[corpus.name for corpus in open_corpora(data_dir, tcfg.pair)], timeline_sources=timeline_src,
                      epochs=history, first_stage=stage)
    for stale in work.glob(".*.tmp"):  # a write cut short by a crash; the file it was meant to replace is intact
        stale.unlink()
    if resume and (work / STATE).exists():
        position = load_state(work, model, optimizer)
        done = json.loads((work / "metrics.json").read_text())["epochs"] if (work / "metrics.json").exists() else []
        metrics.epochs = [row for row in done if row["epoch"] < position["epoch"]] or metrics.epochs
        if rank == 0:
            print(f"resumed at epoch {position['epoch']}, batch {position['batch']}, step {position['step']}")
    ddp_model = torch.nn.parallel.DistributedDataParallel(model) if distributed else model
    return TrainingRun(mcfg=mcfg, tcfg=tcfg, device=device, rank=rank, world=world, out_dir=out_dir, work=work,
                       model=model, ddp_model=ddp_model, optimizer=optimizer, tokenizer=tokenizer, train_src=train_src,
                       train_tgt=train_tgt, clean_ex=encode(train_src, train_tgt), val_ex=encode(val_src, val_tgt),
                       val_sets=val_sets, timeline_src=timeline_src, first=first, last=first - 1 + tcfg.epochs,
                       metrics=metrics, stage=stage, position=position)


def augmented(tcfg: TrainConfig, src: list[str], tgt: list[str], seed: int) -> tuple[list[str], list[str]]:
    """The pairs with names and numbers drawn anew and template pairs added (augment.py); none if not asked for."""
    if not (tcfg.swap_names or tcfg.templates or tcfg.copies):
        return [], []
    new_src, new_tgt = augment(src, tgt, tcfg.pair.split("-")[1], Names.load(tcfg.names), tcfg.swap_names,
                               tcfg.templates, seed, tcfg.copies)
    return new_src, new_tgt


@dataclass
class Drawing:
    """What drawing an epoch's examples takes, and nothing of the model: sent once to the process that draws."""

    tcfg: TrainConfig
    mcfg: ModelConfig
    tokenizer: Tokenizer
    train_src: list[str]
    train_tgt: list[str]
    clean_ex: list[tuple[list[int], list[int]]]  # the pairs as written, in their best segmentation

    @classmethod
    def of(cls, run: TrainingRun) -> "Drawing":
        return cls(run.tcfg, run.mcfg, run.tokenizer, run.train_src, run.train_tgt, run.clean_ex)

    @property
    def redraws(self) -> bool:
        """True when each epoch's examples differ: names, templates, copies, typing noise or sampled pieces."""
        t = self.tcfg
        return bool(t.spm_alpha or t.source_noise or t.swap_names or t.templates or t.copies)


def epoch_examples(d: Drawing, epoch: int) -> list[tuple[list[int], list[int]]]:
    """This epoch's training pairs: names and numbers drawn anew (swap_names, templates), sources perturbed
    (source_noise) and pairs segmented (spm_alpha) by one draw per epoch, the same on every rank and resume."""
    tcfg, tok = d.tcfg, d.tokenizer
    seed = 2 * (tcfg.seed * 100_003 + epoch)  # sentencepiece takes unsigned seeds: src even, tgt odd
    srcs, tgts = augmented(tcfg, d.train_src, d.train_tgt, seed)
    if not srcs:
        srcs, tgts = d.train_src, d.train_tgt
    srcs = noisy_sources(srcs, tcfg.source_noise, seed)
    if not tcfg.spm_alpha:
        if tgts is d.train_tgt:  # the targets as written: their pieces are the clean examples'
            return [make_example(tok.encode(s), tgt[1:-1], d.mcfg) for s, (_, tgt) in zip(srcs, d.clean_ex)]
        return [make_example(tok.encode(s), tok.encode(t), d.mcfg) for s, t in zip(srcs, tgts)]
    src_ids = tok.sample(srcs, tcfg.spm_alpha, seed)
    tgt_ids = tok.sample(tgts, tcfg.spm_alpha, seed + 1)
    return [make_example(s, t, d.mcfg) for s, t in zip(src_ids, tgt_ids)]


@dataclass
class EpochBatches:
    """An epoch's batches, padded, in their order: two flat int32 tensors and each batch's shape (one object to
    pass between processes, not thousands)."""

    src: Tensor  # (sum of B * S,)
    tgt: Tensor  # (sum of B * T,)
    shapes: list[tuple[int, int, int]]  # per batch: B, S, T
    tokens: list[int]  # per batch: the target tokens the loss counts (</s> included, <s> and padding not)

    def __len__(self) -> int:
        return len(self.shapes)

    def pinned(self) -> "EpochBatches":
        """The same batches in page-locked memory, which a GPU copies from while it computes (non_blocking)."""
        return EpochBatches(self.src.pin_memory(), self.tgt.pin_memory(), self.shapes, self.tokens)

    def __iter__(self) -> Iterator[tuple[Tensor, Tensor]]:
        """src (B, S), tgt (B, T) of each batch: views, no copy."""
        at_s = at_t = 0
        for B, S, T in self.shapes:
            yield self.src[at_s: at_s + B * S].view(B, S), self.tgt[at_t: at_t + B * T].view(B, T)
            at_s, at_t = at_s + B * S, at_t + B * T


def epoch_batches(d: Drawing, epoch: int) -> EpochBatches:
    """Epoch `epoch`'s examples (drawn anew when the recipe asks) in bucketed batches, shuffled by the epoch's seed."""
    examples = epoch_examples(d, epoch) if d.redraws else d.clean_ex
    pairs = [batch_tensors(examples, b, d.mcfg.pad_id)
             for b in bucket_batches(examples, d.tcfg.max_tokens, seed=d.tcfg.seed + epoch)]
    return EpochBatches(torch.cat([s.view(-1) for s, _ in pairs]).int(), torch.cat([t.view(-1) for _, t in pairs]).int(),
                        [(s.size(0), s.size(1), t.size(1)) for s, t in pairs],
                        [int(t[:, 1:].ne(d.mcfg.pad_id).sum()) for _, t in pairs])


_drawing: Drawing | None = None  # in the drawing process: what Drawer sent it


def _hold(drawing: Drawing) -> None:
    global _drawing
    torch.set_num_threads(1)
    _drawing = drawing


def _draw(epoch: int) -> EpochBatches:
    return epoch_batches(_drawing, epoch)


class Drawer:
    """Draws the next epoch's batches while this one trains, in a process of its own: spawned, so that its Python
    never holds this process's GIL, which the training loop needs to keep a GPU's kernels queued (a thread drawing
    beside a launch-bound loop took a fifth of its steps, on this project's 2-core CPU). Examples that never change
    are batched here, when asked for."""

    def __init__(self, drawing: Drawing):
        self.drawing = drawing
        self.pool = None
        if drawing.redraws:
            self.pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"), initializer=_hold,
                                            initargs=(drawing,))
        self.ahead: dict[int, Future] = {}

    def ask(self, epoch: int) -> None:
        """Start drawing `epoch` (nothing to do when the examples never change)."""
        if self.pool is not None and epoch not in self.ahead:
            self.ahead[epoch] = self.pool.submit(_draw, epoch)

    def take(self, epoch: int) -> EpochBatches:
        self.ask(epoch)
        return self.ahead.pop(epoch).result() if self.pool is not None else epoch_batches(self.drawing, epoch)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


def snapshot_rows(tcfg: TrainConfig, model: Transformer) -> dict[str, Tensor]:
    """A timeline snapshot's tensors: the weights as int8 rows, or int4 rows (tcfg.snapshot_bits)."""
    return (int4_rows if tcfg.snapshot_bits == 4 else int8_rows)(model.state_dict())


def end_of_epoch(run: TrainingRun, epoch: int, loss_sum: float, tok_sum: int, lr: float, epoch_s: float) -> None:
    """Snapshot, validation, the epoch's row in the metrics, the resumable state (rank 0)."""
    model, tcfg, position = run.model, run.tcfg, run.position
    save_weights(run.work / f"epoch{epoch}.safetensors", model.state_dict())
    if epoch in {int(e) for e in tcfg.snapshot_epochs.split(",") if e.strip()}:
        save_weights(run.out_dir / TIMELINE / f"epoch{epoch}.safetensors", snapshot_rows(tcfg, model))
    val_loss = validation_loss(model, run.val_ex, tcfg.max_tokens, run.device)
    val_bleu = {}  # per corpus, measured every val_bleu_every epochs, and at the last
    if (epoch - run.first + 1) % tcfg.val_bleu_every == 0 or epoch == run.last:
        val_bleu = {name: bleu_of(model, run.tokenizer, vsrc, vrefs, tcfg.val_beam, batch_size=256)
                    for name, (vsrc, vrefs) in run.val_sets.items()}
    translations = translate_all(model, run.tokenizer, run.timeline_src, 1) if run.timeline_src else []
    model.train()
    row = {
        "epoch": epoch,
        "step": position["step"],
        "train_loss": loss_sum / tok_sum,
        "val_loss": val_loss,
        "val_bleu": next(iter(val_bleu.values()), None),  # the first corpus's (the curve the app draws)
        "val_bleu_by_corpus": val_bleu,
        "lr": lr,
        "tokens_per_s": tok_sum * run.world / epoch_s,
        "epoch_s": epoch_s,
        "wall_s": position["elapsed_s"],
        "translations": translations,  # greedy, of metrics.timeline_sources
    }
    run.metrics.epochs.append(row)
    tqdm.write(json.dumps(row))
    write_json(run.work / "metrics.json", {"epochs": run.metrics.epochs,
                                           "first_stage": run.stage and run.stage.to_dict()})
    position.update(epoch=epoch + 1, batch=0)
    save_state(run.work, model, run.optimizer, position)


def evaluation_s(run: TrainingRun) -> float:
    """Seconds an epoch's end takes on average for validation: the loss every epoch, BLEU every val_bleu_every."""
    t0 = time.time()
    validation_loss(run.model, run.val_ex, run.tcfg.max_tokens, run.device)
    t1 = time.time()
    for vsrc, vrefs in run.val_sets.values():
        bleu_of(run.model, run.tokenizer, vsrc, vrefs, run.tcfg.val_beam, batch_size=256)
    run.model.train()
    return t1 - t0 + (time.time() - t1) / run.tcfg.val_bleu_every


def fit_budget(run: TrainingRun, spent_s: float, epoch_s: float) -> None:
    """As many epochs as fit in tcfg.budget_s (at most tcfg.epochs): the two done in spent_s, then the rest at
    epoch_s each (the second epoch's pace, its validation included: the first is slower, a GPU warming up and an
    untrained model writing every translation to the maximum length). The recipe and the resumable position keep
    the count, and the cool-down with it: a rate still held when the count shrinks falls from there to 0 over the
    epochs still ahead, never a step down at the count; one already falling goes on from where it is, more
    steeply, to 0 at the new end (two epochs that spent the budget end where they are)."""
    tcfg = run.tcfg
    asked = tcfg.epochs
    tcfg.epochs = max(2, min(tcfg.epochs, 2 + int((tcfg.budget_s - spent_s) // epoch_s)))
    if dist.is_initialized():  # every rank runs rank 0's count, or the all-reduce of a rank that stopped would hang
        count = torch.tensor([tcfg.epochs], device=run.device)
        dist.broadcast(count, 0)
        tcfg.epochs = int(count)
    if tcfg.epochs < asked and asked - 2 >= tcfg.cooldown_epochs:  # held so far: the fall fits in what is left
        tcfg.cooldown_epochs = min(tcfg.cooldown_epochs, tcfg.epochs - 2)
    elif tcfg.epochs < asked and tcfg.cooldown_epochs:  # falling since before the count: the factor (asked - 2) / k
        tcfg.cooldown_epochs = (tcfg.epochs - 2) * tcfg.cooldown_epochs / (asked - 2)  # it reached, kept
    run.last = run.first - 1 + tcfg.epochs
    run.position.update(epochs=tcfg.epochs, cooldown_epochs=tcfg.cooldown_epochs)
    run.metrics.train_config = tcfg.to_dict()
    if run.rank == 0:
        tqdm.write(f"budget {tcfg.budget_s:.0f} s, {spent_s:.0f} s for two epochs, then {epoch_s:.1f} s an epoch: "
                   f"{tcfg.epochs} epochs")


def train(data_dir: str | list[str], out: str, mcfg: ModelConfig, tcfg: TrainConfig, resume: bool = False,
          limit: int = 0) -> Metrics:
    """Train a model and write the checkpoint directory `out`; returns the metrics it saved.

    data_dir: one folder or several (Multi30k's layout, or Tatoeba's with a held-out split of our own)."""
    run = set_up(data_dir, out, mcfg, tcfg, resume, limit)
    model, position, rank, world = run.model, run.position, run.rank, run.world
    drawer = Drawer(Drawing.of(run))
    drawer.ask(position["epoch"])
    model.train()
    last_save = started = time.time()
    if "epochs" in position:  # a budgeted run, resumed: the count (and cool-down) its second epoch set
        tcfg.epochs = position["epochs"]
        tcfg.cooldown_epochs = position.get("cooldown_epochs", tcfg.cooldown_epochs)
        run.metrics.train_config = tcfg.to_dict()
    run.last = run.first - 1 + tcfg.epochs
    epoch = position["epoch"]
    cuda = run.device.type == "cuda"
    while epoch <= run.last:
        drawn = drawer.take(epoch)
        if epoch < run.last:
            drawer.ask(epoch + 1)  # drawn while this one trains
        drawn = drawn.pinned() if cuda else drawn
        n = len(drawn) // world * world  # equal counts on every rank, or all-reduce would hang
        batches = [(b, pair) for b, pair in enumerate(drawn) if b < n and b % world == rank]
        start_batch = position["batch"] if epoch == position["epoch"] else 0
        t0, loss_sum, tok_sum = time.time(), torch.zeros((), dtype=torch.float64, device=run.device), 0
        bar = tqdm(batches[start_batch:], total=len(batches) - start_batch, desc=f"epoch {epoch}",
                   disable=rank != 0, mininterval=10 if not sys.stderr.isatty() else 0.1)
        for b, (k, (src, tgt)) in enumerate(bar, start=start_batch):
            src = src.to(run.device, non_blocking=True).long()  # (B, S)
            tgt = tgt.to(run.device, non_blocking=True).long()  # (B, T)
            position["step"] += 1
            lr = learning_rate(position["step"], epoch - run.first + b / len(batches), run.mcfg.d_model, tcfg)
            loss, _ = train_step(run.ddp_model, run.optimizer, src, tgt, lr, tcfg.label_smoothing, run.mcfg.pad_id,
                                 tcfg.clip_norm, tcfg.bf16)
            loss_sum, tok_sum = loss_sum + loss, tok_sum + drawn.tokens[k]  # no wait for the device
            if b % 100 == 0:
                bar.set_postfix(loss=f"{float(loss_sum) / max(tok_sum, 1):.3f}", lr=f"{lr:.2e}", refresh=False)
            if rank == 0 and time.time() - last_save > tcfg.save_every_s:  # resumable mid-epoch
                elapsed = position["elapsed_s"] + time.time() - t0
                save_state(run.work, model, run.optimizer,
                           {**position, "epoch": epoch, "batch": b + 1, "elapsed_s": elapsed})
                last_save = time.time()
        loss_sum = float(loss_sum)
        epoch_s = time.time() - t0
        position["elapsed_s"] += epoch_s
        if tcfg.budget_s and "epochs" not in position and epoch == run.first + 1:  # the second epoch sets the count
            validation = evaluation_s(run)
            fit_budget(run, time.time() - started + validation, epoch_s + validation)
        if rank == 0:
            end_of_epoch(run, epoch, loss_sum, tok_sum, lr, epoch_s)
            last_save = time.time()
        else:
            position.update(epoch=epoch + 1, batch=0)
        epoch += 1

    drawer.close()
    if rank == 0:
        run.metrics.train_wall_s = position["elapsed_s"]
        vsrc, vrefs = next(iter(run.val_sets.values()))
        finish(run.out_dir, model, run.tokenizer, run.metrics, tcfg.average_last, tcfg.fp16_weights, vsrc, vrefs)
        TrainingWords.count(*training_pairs(data_dir, tcfg.pair, tcfg.phrasebook, limit),
                            tcfg.pair.split("-")[1]).save(run.out_dir)
    if dist.is_initialized():
        dist.destroy_process_group()
    return run.metrics
