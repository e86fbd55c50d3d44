"""Training speed on this CPU: float32 against bf16 autocast of the linear layers, at today's size and wider.

    python benchmarks/train_precision.py [--threads 1] [--steps 6] [--sizes 128:256,128:1024,192:768]

One training step (forward, loss, backward, Adam) on a batch shaped like the training's (8,192 tokens a side,
sentences of 12 pieces), timed over `--steps` after one warm-up, for each d_model:d_ff and precision. bf16 casts
the linear layers' matrices (autocast's list for the CPU); attention scores and the log-softmax stay float32
because the model computes them in float32 itself. Prints target tokens per second and the bf16 / fp32 ratio.
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import torch  # noqa: E402

from transformer.config import ModelConfig  # noqa: E402
from transformer.model import Transformer  # noqa: E402
from transformer.training.train import make_optimizer, train_step  # noqa: E402


def tokens_per_s(d_model: int, d_ff: int, bf16: bool, steps: int, batch: int, length: int) -> float:
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=8000, d_model=d_model, d_ff=d_ff, n_heads=4, n_encoder_layers=4, n_decoder_layers=4)
    model = Transformer(cfg)
    optimizer = make_optimizer(model)
    src = torch.randint(4, 8000, (batch, length))  # (B, S)
    tgt = torch.randint(4, 8000, (batch, length + 1))  # (B, T+1)
    times = []
    for i in range(steps + 1):
        t0 = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            _, n = train_step(model, optimizer, src, tgt, 1e-4, 0.1, cfg.pad_id)
        times.append(time.perf_counter() - t0)
    return n / (sum(times[1:]) / steps)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--sizes", default="128:256,128:1024")
    ap.add_argument("--length", type=int, default=12)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    batch = 8192 // args.length
    print(f"| d_model:d_ff | fp32 tokens/s | bf16 tokens/s | bf16 / fp32 |  ({args.threads} thread, batch {batch}x{args.length})")
    print("| --- | ---: | ---: | ---: |")
    for size in args.sizes.split(","):
        d, f = map(int, size.split(":"))
        fp32 = tokens_per_s(d, f, False, args.steps, batch, args.length)
        bf16 = tokens_per_s(d, f, True, args.steps, batch, args.length)
        print(f"| {d}:{f} | {fp32:,.0f} | {bf16:,.0f} | {bf16 / fp32:.2f} |", flush=True)


if __name__ == "__main__":
    main()
