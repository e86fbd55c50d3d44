"""python -m transformer <train|average|translate|evaluate|bench|export|import-marian|space> ..."""
from __future__ import annotations

import argparse
import dataclasses
import sys

from .config import ModelConfig, TrainConfig
from .decoding import DecodeOptions


def add_dataclass_options(parser: argparse.ArgumentParser, cls, skip=()) -> None:
    """One --option per field of a config dataclass, with its default."""
    for f in dataclasses.fields(cls):
        if f.name in skip:
            continue
        flag = "--" + f.name.replace("_", "-")
        if f.type in ("bool", bool):
            parser.add_argument(flag, type=lambda s: s.lower() in ("1", "true", "yes"), default=f.default,
                                metavar="BOOL", help=f"(default: {f.default})")
        else:
            parser.add_argument(flag, type=type(f.default), default=f.default, help=f"(default: {f.default})")


def pick(cls, args) -> object:
    return cls(**{f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if hasattr(args, f.name)})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m transformer", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="train a model on Multi30k (and Tatoeba) and write a checkpoint directory")
    p.add_argument("--data-dir", required=True, action="append",
                   help="a corpus folder, e.g. ../shared/data/multi30k; repeat it to train on several "
                        "(../shared/data/tatoeba: its held-out val split is ours, see data.HELDOUT)")
    p.add_argument("--out", required=True, help="checkpoint directory to write, e.g. checkpoints/en-de")
    p.add_argument("--resume", action="store_true", help="continue from <out>/train/state.safetensors")
    p.add_argument("--limit", type=int, default=0, help="use only the first N training sentences (smoke tests)")
    add_dataclass_options(p, ModelConfig, skip=("vocab_size", "pad_id", "bos_id", "eos_id", "unk_id"))
    add_dataclass_options(p, TrainConfig)

    p = sub.add_parser("average", help="re-average the last k epoch snapshots of a training run into its checkpoint")
    p.add_argument("--checkpoint", required=True, help="a checkpoint directory written by train (with train/ inside)")
    p.add_argument("--data-dir", required=True, help="for the val BLEU of the averaged model")
    p.add_argument("--last", type=int, required=True)
    p.add_argument("--fp16", type=lambda s: s.lower() in ("1", "true", "yes"), default=True, metavar="BOOL")

    p = sub.add_parser("translate", help="translate text with a checkpoint")
    p.add_argument("--checkpoint", required=True)
    add_dataclass_options(p, DecodeOptions)
    p.add_argument("--device", default="auto")
    p.add_argument("text", nargs="+", help="one or more sentences")

    p = sub.add_parser("evaluate", help="BLEU and chrF of a checkpoint on a test set")
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--src", help="source sentences, plain or .gz")
    p.add_argument("--ref", help="reference translations, plain or .gz")
    p.add_argument("--data-dir", help="instead of --src/--ref: a corpus folder (Multi30k's or Tatoeba's layout)")
    p.add_argument("--split", default="test", help="with --data-dir: val or test (all references of a sentence)")
    p.add_argument("--beam", type=int, default=1, help="beam size (1: greedy)")
    p.add_argument("--length-penalty", type=float, default=1.0)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--limit", type=int, default=0, help="only the first N sentences")
    p.add_argument("--int8", action="store_true", help="dynamic int8 quantization of the Linear layers")
    p.add_argument("--device", default="auto")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--perturb", default="none", choices=["none", "lower", "nopunct", "upper"],
                   help="type the sources as a class might: all lowercase, no final punctuation, ALL CAPITALS")
    p.add_argument("--output", help="also write the translations to this file")
    p.add_argument("--record", metavar="NAME", help="store the scores in the checkpoint's metrics.json under test.NAME")

    p = sub.add_parser("bench", help="decoding and training speed against our uncached decoder and Hugging Face")
    p.add_argument("--checkpoint", default="checkpoints/en-de")
    p.add_argument("--data-dir", default="../shared/data/multi30k")
    p.add_argument("--quick", action="store_true", help="fewer sentences and batches (under 10 minutes)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: all cores)")

    p = sub.add_parser("export", help="write a checkpoint in another engine's format (CTranslate2)")
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--format", default="ctranslate2", help="ctranslate2 (the only one so far)")
    p.add_argument("--out", required=True, help="folder to write, e.g. exports/en-de-ct2")
    p.add_argument("--quantization", default=None, help="store the weights as int8, int8_float32, int16 or float16")

    p = sub.add_parser("import-marian", help="an OPUS-MT (Marian) model as a checkpoint of ours")
    p.add_argument("source", help="a folder written by MarianMTModel.save_pretrained (with its tokenizer's files), "
                                  "or a Hub name such as Helsinki-NLP/opus-mt-en-de (needs a network)")
    p.add_argument("out", help="the checkpoint directory to write, e.g. checkpoints/en-de-opus-mt")

    p = sub.add_parser("space", help="create a Hugging Face Space (Gradio SDK) and upload the app to it")
    p.add_argument("--repo", required=True, help="USER/NAME of the Space")
    p.add_argument("--dry-run", action="store_true", help="list every file it would send, with its size")
    p.add_argument("--private", action="store_true")

    args = parser.parse_args(argv)
    if args.command == "space":  # no torch needed
        from . import space

        if args.dry_run:
            files = space.plan()
            for name, size in files:
                print(f"{size:>10,}  {name}")
            print(f"{sum(s for _, s in files):>10,}  bytes in {len(files)} files to {args.repo}")
        else:
            print(space.upload(args.repo, args.private))
        return 0
    if args.command == "import-marian":
        from .errors import InputError
        from .marian import import_marian

        try:
            print(f"wrote {import_marian(args.source, args.out)}")
        except InputError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        return 0
    import torch

    if getattr(args, "threads", 0):
        torch.set_num_threads(args.threads)

    if args.command == "train":
        from .train import train

        train(args.data_dir, args.out, pick(ModelConfig, args), pick(TrainConfig, args), args.resume, args.limit)
    elif args.command == "translate":
        from .translator import Translator

        tr = Translator.load(args.checkpoint, device=args.device)
        try:
            for out in tr.translate_batch(args.text, pick(DecodeOptions, args)):
                print(out.text)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    elif args.command == "average":
        from .checkpoint import load_checkpoint
        from .data import read_pair
        from .train import finish

        model, tokenizer, metrics = load_checkpoint(args.checkpoint)
        src_lang, tgt_lang = metrics.get("train_config", {}).get("pair", "en-de").split("-")
        val_src, val_tgt = read_pair(args.data_dir, "val", src_lang, tgt_lang)
        finish(args.checkpoint, model, tokenizer, metrics, args.last, args.fp16, val_src, val_tgt)
    elif args.command == "bench":
        from .bench import main as bench

        bench(args.checkpoint, args.data_dir, args.quick, args.threads)
    elif args.command == "export":
        from .checkpoint import CheckpointError
        from .export import ExportError, export

        try:
            out = export(args.checkpoint, args.out, args.format, args.quantization)
        except (ExportError, CheckpointError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        print(f"wrote {out}")
    elif args.command == "evaluate":
        from pathlib import Path

        from .data import open_corpora
        from .evaluate import evaluate, read_test_set, report
        from .noise import perturb
        from .translator import Translator

        if bool(args.data_dir) == bool(args.src and args.ref):
            print("error: give --src and --ref, or --data-dir (with --split)", file=sys.stderr)
            return 2
        tr = Translator.load(args.checkpoint, device="cpu" if args.int8 else args.device, int8=args.int8)
        pair = tr.metrics.get("train_config", {}).get("pair", "en-de")
        if args.data_dir:
            src, refs = open_corpora(args.data_dir, pair)[0].split(args.split)
            args.src = f"{args.data_dir} ({args.split})"
        else:
            src, refs = read_test_set(args.src, args.ref)
        src = [perturb(s, args.perturb) for s in src]
        options = DecodeOptions("beam" if args.beam > 1 else "greedy", beam_size=max(args.beam, 1),
                                length_penalty=args.length_penalty)
        result = evaluate(tr, src, refs, options, args.batch_size, args.limit)
        if args.output:
            Path(args.output).write_text("\n".join(result["hypotheses"]) + "\n")
        if args.record:
            from .evaluate import record

            record(args.checkpoint, args.record, result, vars(args))
        print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
