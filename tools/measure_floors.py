"""What the checkpoint tests measure, so their floors can sit well below it: python tools/measure_floors.py en-de"""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import torch
from sacrebleu.metrics import CHRF
from transformer import Translator
from transformer.training.data import Corpus, read_pair
from transformer.training.evaluate import score_translations
torch.set_num_threads(2)
pair = sys.argv[1]
tr = Translator.load(f"checkpoints/{pair}", device="cpu")
src, ref = read_pair("../shared/data/multi30k", "val", *pair.split("-"))
chrf = CHRF()
sent = []
for s, r in zip(src[:8], ref[:8]):
    out = tr.translate(s, "beam", beam_size=4).text
    sent.append(chrf.sentence_score(out, [r]).score)
    print(f"{sent[-1]:5.1f}  {out}")
hyps = [t.text for t in tr.translate_batch(src[100:200], "beam", beam_size=4)]
sc = score_translations(hyps, ref[100:200])
src, streams = Corpus("tatoeba", pathlib.Path("../shared/data/tatoeba"), *pair.split("-")).split("val")
hyps = [t.text for t in tr.translate_batch(src[:100], "greedy")]
everyday = score_translations(hyps, [stream[:100] for stream in streams if any(stream[:100])])
print(json.dumps({"pair": pair, "sentence_chrf_min": min(sent), "sentence_chrf_mean": sum(sent) / len(sent),
                  "val100_bleu": sc["bleu"], "val100_chrf": sc["chrf"],
                  "tatoeba_val100_bleu": everyday["bleu"], "tatoeba_val100_chrf": everyday["chrf"]}))
