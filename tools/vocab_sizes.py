"""The vocabulary for what people type: how sizes cut a class's words, before the GPU compares them on validation.

    python tools/vocab_sizes.py en-de --data-dir ../shared/data [--sizes 8000,12000,16000]

Learns the joint sentencepiece model the first-minute recipe learns (both corpora, both sides, names and numbers
drawn anew, byte fallback, digits split) at each size and prints, beside the shipped model: pieces per sentence
on both corpora's validation sources and targets, the share of words cut into three or more pieces, and how the
words of the first minute are cut. Writes runs/vocab/PAIR-SIZE.model.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import torch  # noqa: E402

from transformer.config import TrainConfig  # noqa: E402
from transformer.tokenizer import Tokenizer  # noqa: E402
from transformer.training.data import open_corpora  # noqa: E402
from transformer.training.train import read_corpora, vocabulary  # noqa: E402

WORDS = "Hello What My Nice favourite Hallo Tschüss Bonjour Anna Mohammed 1989 12345 Geburtstag anniversaire"


def stats(tok: Tokenizer, texts: list[str]) -> tuple[float, float]:
    pieces = [tok.sp.encode(t, out_type=str) for t in texts]
    words = [w for t in texts for w in t.split()]
    cut = sum(len(tok.sp.encode(w)) >= 3 for w in words)
    return sum(map(len, pieces)) / len(texts), cut / len(words)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pair")
    ap.add_argument("--data-dir", default="../shared/data")
    ap.add_argument("--sizes", default="8000,12000,16000")
    ap.add_argument("--swap-names", type=float, default=0.5)
    ap.add_argument("--templates", type=float, default=0.02)
    args = ap.parse_args()
    torch.set_num_threads(1)
    dirs = [f"{args.data_dir}/multi30k", f"{args.data_dir}/tatoeba"]
    val_src, val_tgt = [], []
    for corpus in open_corpora(dirs, args.pair):
        s, t = corpus.pairs("val")
        val_src, val_tgt = val_src + s, val_tgt + t
    models = {"shipped": Tokenizer.load(f"checkpoints/{args.pair}/spm.model")}
    for size in map(int, args.sizes.split(",")):
        tcfg = TrainConfig(pair=args.pair, vocab_size=size, byte_fallback=True, split_digits=True,
                           swap_names=args.swap_names, templates=args.templates, oversample="multi30k:2")
        train_src, train_tgt, *_ = read_corpora(dirs, tcfg)
        models[f"{size}"] = tok = vocabulary(tcfg, train_src, train_tgt)
        Path("runs/vocab").mkdir(parents=True, exist_ok=True)
        tok.save(f"runs/vocab/{args.pair}-{size}.model")
    print(f"| vocabulary | pieces per English sentence | per {args.pair[3:]} sentence | English words in 3+ pieces "
          f"| {args.pair[3:]} words in 3+ pieces |\n| --- | ---: | ---: | ---: | ---: |")
    for name, tok in models.items():
        (ps, cs), (pt, ct) = stats(tok, val_src), stats(tok, val_tgt)
        print(f"| {name} | {ps:.2f} | {pt:.2f} | {100 * cs:.1f} % | {100 * ct:.1f} % |")
    print()
    for word in WORDS.split():
        print(f"| {word} | " + " | ".join(" ".join(tok.sp.encode(word, out_type=str)) for tok in models.values()) + " |")


if __name__ == "__main__":
    main()
