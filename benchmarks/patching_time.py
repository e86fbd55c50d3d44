"""How long one activation-patching sweep takes on one CPU thread, per site, for a 15-piece sentence pair (the goal:
under 1 s each), and the whole view's work (every site and DecoderLens): python benchmarks/patching_time.py"""
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import torch  # noqa: E402

from transformer import Translator  # noqa: E402
from transformer.interpret import patching  # noqa: E402
from transformer.interpret import analyses  # noqa: E402

FIRST = "A young man in a red shirt is playing the guitar on the stage."
SECOND = "A young man in a red shirt is playing the piano on the stage."  # differs late: a long prefix

torch.set_num_threads(1)
for pair in ("en-de", "en-fr"):
    tr = Translator.load(ROOT / "checkpoints" / pair, device="cpu")
    src_a = torch.tensor([tr.source_ids(FIRST)[0]])  # (1, S)
    src_b = torch.tensor([tr.source_ids(SECOND)[0]])
    out = analyses.patch(tr, FIRST, SECOND, sites=())  # the pair's prefix and pieces
    tgt_in = torch.tensor([out.prefix])
    a, b = out.first_token, out.second_token
    first = patching.run_on_prefix(tr.model, src_a, tgt_in, a, b)
    second = patching.run_on_prefix(tr.model, src_b, tgt_in, a, b)
    print(f"{pair}: {src_a.size(1)} source pieces, {len(out.prefix)} target positions, "
          f"{tr.cfg.n_encoder_layers}+{tr.cfg.n_decoder_layers} layers, {tr.cfg.n_heads} heads")
    for site in patching.SITES:
        patching.sweep(tr.model, site, second, first, tgt_in, a, b)  # warm-up
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            patching.sweep(tr.model, site, second, first, tgt_in, a, b)
            times.append(time.perf_counter() - t0)
        print(f"  {site:<15} sweep median {1000 * statistics.median(times):6.1f} ms (5 runs)")
    t0 = time.perf_counter()
    analyses.patch(tr, FIRST, SECOND)
    analyses.decoder_lens(tr, FIRST)
    print(f"  the view's whole work (both translations, every sweep, DecoderLens): {time.perf_counter() - t0:.2f} s")
