"""Ten sentences a class typed, before and after the third stage, as tables for docs/training.md: python benchmarks/everyday_ten.py

Before: the second-stage checkpoints' greedy translations, kept in training/before.json (typed_ten_greedy) when
they were replaced. Now: the shipped checkpoints, greedy."""
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import torch  # noqa: E402
from transformer import Translator  # noqa: E402

torch.set_num_threads(2)
sentences = json.loads((ROOT / "training" / "typed_ten.json").read_text())
before = json.loads((ROOT / "training" / "before.json").read_text())["typed_ten_greedy"]
for pair in ("en-de", "en-fr"):
    now = [t.text for t in Translator.load(ROOT / "checkpoints" / pair, device="cpu").translate_batch(sentences)]
    print(f"\n| English | {pair.upper().replace('-', '→')} before | now |\n| --- | --- | --- |")
    for row in zip(sentences, before[pair], now):
        print("| " + " | ".join(text.replace("|", "\\|") for text in row) + " |")
