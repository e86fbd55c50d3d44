"""Ten sentences a class typed, before and after a new checkpoint, as tables (the stages' tables in git's history of docs/training.md):

    python benchmarks/everyday_ten.py [--sentences typed_ten] [--before typed_ten_greedy_third]
    python benchmarks/everyday_ten.py --sentences first_ten --before first_ten_greedy_third
    python benchmarks/everyday_ten.py --sentences second_twenty --before second_twenty_greedy_fourth
    python benchmarks/everyday_ten.py --sentences second_twenty --before second_twenty_greedy_sixth
    python benchmarks/everyday_ten.py --sentences second_twenty --before second_twenty_greedy_seventh
    python benchmarks/everyday_ten.py --sentences second_twenty --before second_twenty_greedy_eighth

--sentences names a list in data/ (NAME.json); --before a key of data/before.json, where the greedy
translations of the checkpoints a new one replaced are kept (typed_ten_greedy: the second stage's; *_third: the
third stage's; *_fourth: the fourth stage's, the first minute's; *_sixth: the sixth stage's;
*_seventh: the seventh stage's; *_eighth: the eighth stage's). --keep KEY writes the shipped checkpoints'
translations there instead of printing the tables."""
import argparse
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import torch  # noqa: E402
from transformer import Translator  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--sentences", default="typed_ten")
parser.add_argument("--before", default="typed_ten_greedy_third")
parser.add_argument("--keep", help="record the shipped checkpoints' translations under this key of before.json")
parser.add_argument("--threads", type=int, default=2)
args = parser.parse_args()
torch.set_num_threads(args.threads)
sentences = json.loads((ROOT / "data" / f"{args.sentences}.json").read_text())
kept_file = ROOT / "data" / "before.json"
kept = json.loads(kept_file.read_text())
now = {pair: [t.text for t in Translator.load(ROOT / "checkpoints" / pair, device="cpu").translate_batch(sentences)]
       for pair in ("en-de", "en-fr")}
if args.keep:
    kept[args.keep] = now
    kept_file.write_text(json.dumps(kept, indent=1, ensure_ascii=False) + "\n")
    sys.exit(0)
for pair in ("en-de", "en-fr"):
    print(f"\n| English | {pair.upper().replace('-', '→')} before | now |\n| --- | --- | --- |")
    for row in zip(sentences, kept[args.before][pair], now[pair]):
        print("| " + " | ".join(text.replace("|", "\\|") for text in row) + " |")
