"""What the checkpoint tests measure (transformer.training.floors, the tests' own functions), so that their floors
in checkpoints/floors.json can sit well below it: python tools/measure_floors.py en-de [--data-dir DIR]"""
import argparse
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import torch  # noqa: E402

from transformer import Translator  # noqa: E402
from transformer.training import floors  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("pair")
parser.add_argument("--data-dir", type=pathlib.Path, default=ROOT.parent / "shared" / "data")
args = parser.parse_args()
torch.set_num_threads(2)
tr = Translator.load(ROOT / "checkpoints" / args.pair, device="cpu")
for _, out, _, chrf in floors.val_sentences(tr, args.data_dir / "multi30k"):
    print(f"{chrf:5.1f}  {out}")
print(json.dumps({"pair": args.pair} | floors.measure(tr, args.data_dir / "multi30k", args.data_dir / "tatoeba")))
