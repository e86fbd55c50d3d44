"""python -m transformer <train|average|keep-state|count-words|translate|evaluate|bench|export|import-marian> ..."""
from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from .config import ModelConfig, TrainConfig
from .decoding import DecodeOptions
from .errors import InputError
from .training.noise import PERTURBATIONS


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


def fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


# -----------------------------------------------------------------------------
# One function per subcommand: each takes the parsed arguments and returns the exit code


def train(args) -> int:
    if args.recipe:  # everything from the recipe file; flags beyond where the data is and where it goes are refused
        from .training import recipe

        made = recipe.load(args.recipe)
        flags = [f.name for cls in (ModelConfig, TrainConfig) for f in dataclasses.fields(cls)
                 if hasattr(args, f.name) and f.name not in ("threads", "recipe") and getattr(args, f.name) != f.default]
        if flags or args.data_dir or args.limit:
            return fail(f"with --recipe, everything but --data, --out, --resume and --threads is the recipe's: "
                        f"change {', '.join(flags or ['--data-dir/--limit'])} in {args.recipe}")
        if args.threads:  # this machine's cores, not the model's recipe
            made.train.threads = args.threads
        data = args.data or Path(__file__).resolve().parents[2] / "shared" / "data"
        out = recipe.run(made, data, args.out or Path("runs") / made.name, args.resume)
        print(f"{out}: trained by {made.stamp}")
        return 0
    if not args.data_dir or not args.out:
        return fail("give --recipe FILE, or --data-dir and --out with the settings as flags")
    from .training.train import train as run

    model_config = dataclasses.replace(pick(ModelConfig, args), recipe="")  # flags: no recipe file made it
    run(args.data_dir, args.out, model_config, pick(TrainConfig, args), args.resume, args.limit)
    return 0


def average(args) -> int:
    from .checkpoint import load_checkpoint
    from .training.data import read_pair
    from .training.train import finish

    model, tokenizer, metrics = load_checkpoint(args.checkpoint)
    src_lang, tgt_lang = metrics.pair.split("-")
    val_src, val_tgt = read_pair(args.data_dir, "val", src_lang, tgt_lang)
    finish(args.checkpoint, model, tokenizer, metrics, args.last, args.fp16, val_src, val_tgt)
    return 0


def keep_state(args) -> int:
    import shutil

    from .training.train import STATE, compact_state

    work, keep = Path(args.run) / "train", Path(args.to)
    keep.mkdir(parents=True, exist_ok=True)
    compact_state(work / STATE, keep / STATE)
    for name in ("metrics.json", "spm.model"):
        shutil.copy(work / name, keep / name)
    return 0


def translate(args) -> int:
    import tempfile

    from .archive import open_model
    from .translator import MAX_SENTENCES, sentences

    with tempfile.TemporaryDirectory(prefix="transformer-model-") as work:  # a zip unpacks here, for this run
        tr = open_model(args.checkpoint, work, device=args.device)
        texts = [sentences(text)[:MAX_SENTENCES] for text in args.text]  # each text sentence by sentence, as the page
        outs = list(tr.translate_batch([s for parts in texts for s in parts], pick(DecodeOptions, args)))
    outs = iter(outs)
    for parts in texts:  # one line per text: its sentences' translations joined
        print(" ".join(next(outs).text for _ in parts))
    return 0


def evaluate(args) -> int:
    from .training.data import open_corpora
    from .training.evaluate import evaluate as score, read_test_set, record, report
    from .training.noise import perturb
    from .translator import Translator

    if args.class_sets:
        return evaluate_class_sets(args)
    if bool(args.data_dir) == bool(args.src and args.ref):
        return fail("give --src and --ref, or --data-dir (with --split), or --class-sets")
    tr = Translator.load(args.checkpoint, device="cpu" if args.int8 else args.device, int8=args.int8)
    if args.data_dir:
        src, refs = open_corpora(args.data_dir, tr.metrics.pair)[0].split(args.split)
        args.src = f"{args.data_dir} ({args.split})"
    else:
        src, refs = read_test_set(args.src, args.ref)
    src = [perturb(s, args.perturb) for s in src]
    options = DecodeOptions("beam" if args.beam > 1 else "greedy", beam_size=max(args.beam, 1),
                            length_penalty=args.length_penalty)
    result = score(tr, src, refs, options, args.batch_size, args.limit)
    if args.output:
        Path(args.output).write_text("\n".join(result["hypotheses"]) + "\n")
    if args.record:
        record(args.checkpoint, args.record, result, vars(args))
    print(report(result))
    return 0


def evaluate_class_sets(args) -> int:
    from .metrics import Metrics
    from .training.class_sets import class_sets, report
    from .translator import Translator

    tr = Translator.load(args.checkpoint, device="cpu" if args.int8 else args.device, int8=args.int8)
    options = DecodeOptions("beam" if args.beam > 1 else "greedy", beam_size=max(args.beam, 1))
    result = class_sets(tr, options)
    print(report(result))
    if args.record:
        metrics = Metrics.load(args.checkpoint)
        lists = ("wrong", "lost", "changed")  # the sentences behind the figures are printed, not kept
        metrics.class_sets = {name: {k: v for k, v in r.items() if k not in lists} | {"beam": args.beam}
                              for name, r in result.items()}
        metrics.save(args.checkpoint)
    return 0


def export(args) -> int:
    from .interop.export import export as write

    print(f"wrote {write(args.checkpoint, args.out, args.format, args.quantization)}")
    return 0


def import_marian(args) -> int:
    from .interop.marian import import_marian as write

    print(f"wrote {write(args.source, args.out)}")
    return 0


def count_words(args) -> int:
    from .metrics import Metrics
    from .training.train import training_pairs
    from .words import TrainingWords

    metrics = Metrics.load(args.checkpoint)
    if not metrics.train_config:
        return fail(f"{args.checkpoint} has no training run in its metrics.json (an imported model?): nothing to count")
    words = TrainingWords.count(*training_pairs(args.data_dir, metrics.pair, metrics.train_config.get("phrasebook", "")),
                                metrics.pair.split("-")[1])
    words.save(args.checkpoint)
    print(f"{args.checkpoint}/words.json: {len(words.english)} English words in lowercase, {len(words.both)} "
          f"written on both sides, {len(words.written)} written in the references")
    return 0


# -----------------------------------------------------------------------------
# The parser


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m transformer", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="train a model from its recipe (--recipe recipes/en-de.toml), or from flags, and "
                       "write a checkpoint directory")
    p.add_argument("--recipe", help="a recipe file (recipes/*.toml): everything that makes the model, from scratch "
                                    "or (init_from) from a checkpoint; then averaged, evaluated and stamped")
    p.add_argument("--data", type=Path, help="with --recipe: the folder holding its corpora (default ../shared/data)")
    p.add_argument("--data-dir", action="append",
                   help="without --recipe: a corpus folder, e.g. ../shared/data/multi30k; repeat it to train on "
                        "several (../shared/data/tatoeba: its held-out val split is ours, see data.HELDOUT)")
    p.add_argument("--out", help="checkpoint directory to write, e.g. checkpoints/en-de (with --recipe: runs/NAME)")
    p.add_argument("--resume", action="store_true", help="continue from <out>/train/state.safetensors")
    p.add_argument("--limit", type=int, default=0, help="use only the first N training sentences (smoke tests)")
    add_dataclass_options(p, ModelConfig, skip=("vocab_size", "pad_id", "bos_id", "eos_id", "unk_id", "recipe"))
    add_dataclass_options(p, TrainConfig)
    p.set_defaults(func=train)

    p = sub.add_parser("average", help="re-average the last k epoch snapshots of a training run into its checkpoint")
    p.add_argument("--checkpoint", required=True, help="a checkpoint directory written by train (with train/ inside)")
    p.add_argument("--data-dir", required=True, help="for the val BLEU of the averaged model")
    p.add_argument("--last", type=int, required=True)
    p.add_argument("--fp16", type=lambda s: s.lower() in ("1", "true", "yes"), default=True, metavar="BOOL")
    p.set_defaults(func=average)

    p = sub.add_parser("keep-state", help="a run's resumable state, small enough for git (bf16 Adam moments), "
                       "with its curves and vocabulary: what a run on another machine resumes from")
    p.add_argument("--run", required=True, help="the run's --out directory (with train/ inside)")
    p.add_argument("--to", required=True, help="the folder to write, e.g. resume/en-de")
    p.set_defaults(func=keep_state)

    p = sub.add_parser("count-words", help="the words a checkpoint's training pairs write (words.json), which the "
                       "page reads to say when a translation left a word in English")
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--data-dir", required=True, action="append", help="the corpora it trained on, as for train")
    p.set_defaults(func=count_words)

    p = sub.add_parser("translate", help="translate text with a checkpoint")
    p.add_argument("--checkpoint", required=True, help="a checkpoint folder, an OPUS-MT (Marian) folder, or a zip of "
                   "either (checked first: transformer/archive.py)")
    add_dataclass_options(p, DecodeOptions)
    p.add_argument("--device", default="auto")
    p.add_argument("text", nargs="+", help="one or more texts, each translated sentence by sentence (at most 20) "
                   "and printed on a line of its own")
    p.set_defaults(func=translate)

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
    p.add_argument("--perturb", default="none", choices=list(PERTURBATIONS),
                   help="type the sources as a class might: all lowercase, no final punctuation, ALL CAPITALS, "
                        "apostrophes dropped, British spellings")
    p.add_argument("--class-sets", action="store_true",
                   help="instead of a test set: the first-minute, names and numbers sets (data/*.json)")
    p.add_argument("--output", help="also write the translations to this file")
    p.add_argument("--record", metavar="NAME", nargs="?", const="class_sets",
                   help="store the scores in the checkpoint's metrics.json under test.NAME (class_sets with --class-sets)")
    p.set_defaults(func=evaluate)

    p = sub.add_parser("export", help="write a checkpoint in another engine's format (CTranslate2)")
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--format", default="ctranslate2", help="ctranslate2 (the only one so far)")
    p.add_argument("--out", required=True, help="folder to write, e.g. exports/en-de-ct2")
    p.add_argument("--quantization", default=None, help="store the weights as int8, int8_float32, int16 or float16")
    p.set_defaults(func=export)

    p = sub.add_parser("import-marian", help="an OPUS-MT (Marian) model as a checkpoint of ours")
    p.add_argument("source", help="a folder written by MarianMTModel.save_pretrained (with its tokenizer's files), "
                                  "or a Hub name such as Helsinki-NLP/opus-mt-en-de (needs a network)")
    p.add_argument("out", help="the checkpoint directory to write, e.g. checkpoints/en-de-opus-mt")
    p.set_defaults(func=import_marian)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if getattr(args, "threads", 0):
        import torch

        torch.set_num_threads(args.threads)
    try:
        return args.func(args)
    except (InputError, ValueError) as e:  # user input: a sentence, never a traceback
        return fail(str(e))


if __name__ == "__main__":
    sys.exit(main())
