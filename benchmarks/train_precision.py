"""Training speed: float32 against bf16 autocast of the linear layers, at today's size and larger, on the CPU or a GPU.

    python benchmarks/train_precision.py [--threads 1] [--steps 6] [--sizes 128:256,128:1024,192:768]
    python benchmarks/train_precision.py --device cuda --tokens 16384 --steps 20 \
        --sizes 128:256:4:4,256:1024:4:4,256:1024:6:4,384:1536:6:6,512:2048:6:6

One training step (forward, loss, backward, Adam) on a batch shaped like the training's (`--tokens` a side,
sentences of 12 pieces), timed over `--steps` after warm-ups, for each size (d_model:d_ff, or
d_model:d_ff:encoder layers:decoder layers; 4 heads of 64 from d_model 256 up) and precision. bf16 casts the
linear layers' matrices (autocast's list); the log-softmax and the loss stay float32. Prints target tokens per
second and the bf16 / fp32 ratio.
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


def tokens_per_s(size: str, bf16: bool, steps: int, batch: int, length: int, device: str) -> float:
    d_model, d_ff, n_enc, n_dec = (list(map(int, size.split(":"))) + [4, 4])[:4]
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=8000, d_model=d_model, d_ff=d_ff, n_heads=max(4, d_model // 64),
                      n_encoder_layers=n_enc, n_decoder_layers=n_dec)
    model = Transformer(cfg).to(device)
    optimizer = make_optimizer(model)
    src = torch.randint(4, 8000, (batch, length), device=device)  # (B, S)
    tgt = torch.randint(4, 8000, (batch, length + 1), device=device)  # (B, T+1)
    warmup = 3 if device != "cpu" else 1
    for i in range(warmup + steps):
        if i == warmup:
            sync(device)
            t0 = time.perf_counter()
        _, n = train_step(model, optimizer, src, tgt, 1e-4, 0.1, cfg.pad_id, bf16=bf16)
    sync(device)
    return int(n) * steps / (time.perf_counter() - t0)


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--sizes", default="128:256,128:1024")
    ap.add_argument("--length", type=int, default=12)
    ap.add_argument("--tokens", type=int, default=8192, help="tokens a side per batch")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    batch = args.tokens // args.length
    where = torch.cuda.get_device_name() if args.device.startswith("cuda") else f"{args.threads} thread"
    print(f"| size | fp32 tokens/s | bf16 tokens/s | bf16 / fp32 |  ({where}, batch {batch}x{args.length})")
    print("| --- | ---: | ---: | ---: |")
    for size in args.sizes.split(","):
        fp32 = tokens_per_s(size, False, args.steps, batch, args.length, args.device)
        bf16 = tokens_per_s(size, True, args.steps, batch, args.length, args.device)
        print(f"| {size} | {fp32:,.0f} | {bf16:,.0f} | {bf16 / fp32:.2f} |", flush=True)


if __name__ == "__main__":
    main()
