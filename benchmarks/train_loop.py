"""The training loop's own cost: `train()` on a model too small for its arithmetic to matter (2 + 2 layers, d_model 32,
512-token batches), on the shipped models' data and recipe (names, templates, copies and typing drawn anew each
epoch), so that what it times is what a GPU run's CPU side does each step. Target tokens a second per epoch.

    python benchmarks/train_loop.py [--code DIR] [--data-dir ../shared/data] [--limit 3000] [--epochs 2]

--code: another checkout (e.g. `git worktree add /tmp/before HEAD~1`), to compare two commits one after the other
on an otherwise idle machine; --limit: the first N pairs of each corpus (the classroom corpus is kept whole)."""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--code", default=str(ROOT), help="the checkout whose transformer/ is timed")
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--limit", type=int, default=3000)
    ap.add_argument("--epochs", type=int, default=2)
    args = ap.parse_args()
    code = Path(args.code).resolve()
    sys.path.insert(0, str(code))
    from transformer.config import ModelConfig, TrainConfig
    from transformer.training.train import train

    tcfg = TrainConfig(pair="en-de", epochs=args.epochs, max_tokens=512, warmup=100, threads=1, timeline="",
                       vocab_from=str(ROOT / "checkpoints" / "en-de"), oversample="multi30k:4,phrasebook:8,words:2",
                       phrasebook=f"{code}/data/phrasebook.txt,{code}/data/classroom", swap_names=0.5, templates=0.02,
                       copies=0.01, source_noise=0.3, snapshot_epochs="0", average_last=1, val_bleu_every=10,
                       save_every_s=10_000)
    mcfg = ModelConfig(vocab_size=8000, d_model=32, n_heads=2, n_encoder_layers=2, n_decoder_layers=2, d_ff=64,
                       max_len=64)
    data = [str(Path(args.data_dir) / "multi30k"), str(Path(args.data_dir) / "tatoeba")]
    with tempfile.TemporaryDirectory() as out:
        t0 = time.time()
        metrics = train(data, out, mcfg, tcfg, limit=args.limit)
        whole = time.time() - t0
    rates = ", ".join(f"{row['tokens_per_s']:,.0f}" for row in metrics.epochs)
    losses = ", ".join(f"{row['train_loss']:.6f}" for row in metrics.epochs)
    print(f"{code}: target tokens a second per epoch {rates}; train loss {losses}; {whole:.1f} s in all")


if __name__ == "__main__":
    main()
