"""What an OPUS-MT-sized model costs in the playground on this machine: a random MarianMTModel of opus-mt-en-de's
sizes (d_model 512, 6 + 6 layers, 8 heads, d_ff 2048, 58,101 pieces, 74M parameters), imported into our module
tree, then one translation and every view of the page drawn for it, each timed (median of --repeats, fresh caches).

    python benchmarks/marian_cost.py [--threads 1] [--repeats 3] [--keep DIR]

Needs transformers (requirements-dev.txt). The tokenizer files reuse our shipped sentencepiece model, padded
with unused pieces to Marian's vocabulary size, so embeddings and the output projection have the real size.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import app  # noqa: E402
from transformer.interop.marian import import_marian  # noqa: E402

TEXT = "A young man in a red jacket is riding his bicycle past an old stone church today."
SIZES = dict(d_model=512, encoder_layers=6, decoder_layers=6, encoder_attention_heads=8, decoder_attention_heads=8,
             encoder_ffn_dim=2048, decoder_ffn_dim=2048, max_position_embeddings=512)
VOCAB = 58101


def opus_mt_sized(folder: Path) -> None:
    """A random MarianMTModel of opus-mt-en-de's sizes and its tokenizer files, saved in `folder`."""
    from transformers import MarianConfig, MarianMTModel

    spm = ROOT / "checkpoints" / "en-de" / "spm.model"
    shutil.copyfile(spm, folder / "source.spm")
    shutil.copyfile(spm, folder / "target.spm")
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=str(spm))
    vocab = {"</s>": 0, "<unk>": 1}
    for i in range(4, sp.get_piece_size()):
        vocab.setdefault(sp.id_to_piece(i), len(vocab))
    while len(vocab) < VOCAB - 1:
        vocab[f"▁unused{len(vocab)}"] = len(vocab)
    vocab["<pad>"] = VOCAB - 1
    (folder / "vocab.json").write_text(json.dumps(vocab))
    config = MarianConfig(vocab_size=VOCAB, decoder_vocab_size=VOCAB, activation_function="swish",
                          scale_embedding=True, pad_token_id=VOCAB - 1, eos_token_id=0,
                          decoder_start_token_id=VOCAB - 1, forced_eos_token_id=0, **SIZES)
    torch.manual_seed(0)
    MarianMTModel(config).save_pretrained(folder)


def timed(fn, repeats: int, reset=lambda: None) -> float:
    times = []
    for _ in range(repeats):
        reset()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="keep the imported checkpoint here")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    work = Path(tempfile.mkdtemp(prefix="opus-mt-sized-"))
    (work / "hf").mkdir()
    opus_mt_sized(work / "hf")
    out = args.keep or work / "checkpoints" / "en-de-opus-mt"
    import_marian(str(work / "hf"), out)
    translators, problems = app.load_translators(out.parent, "cpu")
    assert not problems, problems
    page = app.build_page(translators)
    pair = out.name
    tr = translators[pair]
    print(f"{sum(p.numel() for p in tr.model.parameters()):,} parameters, {args.threads} thread(s)")
    inputs = set(page.panel.controls) | {c for v in page.views.values() for c in v.reads} | {page.result, page.tabs.signal}
    values = {c: c.value for c in inputs} | {page.panel.pair: pair, page.panel.text: TEXT}

    def fresh() -> None:
        page.ctx.caches.translations.entries.clear()
        page.ctx.caches.views.entries.clear()

    rows = {"translate (greedy, 15 words; the random model runs to its length bound)":
            timed(lambda: tr.translate(TEXT), args.repeats),
            "Translate click (translation, hooked passes, the Step by step tab)":
            timed(lambda: page.show_translation(values), args.repeats, fresh)}
    out_values = page.show_translation(values)
    values |= {c: v for c, v in out_values.items() if not isinstance(v, dict)}
    for name in page.tabs:
        group = next((g for g, names in page.groups.items() if name in names), None)
        rows[f"open {name}"] = timed(lambda: page.tab_drawer(name, group)(values), args.repeats,
                                     lambda: page.ctx.caches.views.entries.clear())
    print(f"translation: {len(out_values[page.result].translation.target_tokens)} output tokens")
    for name, seconds in rows.items():
        print(f"| {name} | {seconds:.2f} s |")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
