"""Ten everyday sentences before and after the second stage, as a README table: python tools/everyday_ten.py

Before: the Multi30k-only checkpoints' greedy translations, kept in training/before.json when they were replaced.
After: the shipped checkpoints, greedy."""
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import torch
from transformer import Translator

torch.set_num_threads(2)
sentences = json.loads((ROOT / "training" / "everyday_ten.json").read_text())
before = json.loads((ROOT / "training" / "before.json").read_text())["everyday_ten_greedy"]
for pair in ("en-de", "en-fr"):
    after = [t.text for t in Translator.load(ROOT / "checkpoints" / pair, device="cpu").translate_batch(sentences)]
    print(f"\n| English | {pair.upper().replace('-', '→')} before | after |\n| --- | --- | --- |")
    for row in zip(sentences, before[pair], after):
        print("| " + " | ".join(text.replace("|", "\\|") for text in row) + " |")
