"""sacreBLEU (cased and lowercased) and chrF of a checkpoint on a pair of files or a corpus's split."""
from __future__ import annotations

import json
import time

from sacrebleu.metrics import BLEU, CHRF

from .data import read_lines
from ..decoding import DecodeOptions
from ..errors import InputError
from ..metrics import Metrics


def score_translations(hyps: list[str], refs: list) -> dict:
    """Corpus BLEU cased, BLEU lowercased (the papers' convention), chrF, with sacreBLEU signatures.

    refs: one reference per hypothesis, or reference streams (stream k: each sentence's k-th reference or None)."""
    streams = refs if refs and isinstance(refs[0], list) else [refs]
    bleu, bleu_lc, chrf = BLEU(), BLEU(lowercase=True), CHRF()
    return {
        "bleu": bleu.corpus_score(hyps, streams).score,
        "bleu_lc": bleu_lc.corpus_score(hyps, streams).score,
        "chrf": chrf.corpus_score(hyps, streams).score,
        "references": len(streams),
        "signatures": {
            "bleu": str(bleu.get_signature()),
            "bleu_lc": str(bleu_lc.get_signature()),
            "chrf": str(chrf.get_signature()),
        },
    }


def read_test_set(src_path: str, ref_path: str) -> tuple[list[str], list[str]]:
    src, refs = read_lines(src_path), read_lines(ref_path)
    if len(src) != len(refs):
        raise InputError(f"{src_path} has {len(src)} lines but {ref_path} has {len(refs)}")
    return src, refs


def evaluate(translator, src: list[str], refs: list, options: DecodeOptions = DecodeOptions(),
             batch_size: int = 64, limit: int = 0) -> dict:
    """Scores of `translator` on sources `src` against refs (one per source, or reference streams)."""
    if limit:
        src = src[:limit]
        refs = [stream[:limit] for stream in refs] if refs and isinstance(refs[0], list) else refs[:limit]
    t0 = time.perf_counter()
    out = translator.translate_batch(src, options, batch_size=batch_size)
    seconds = time.perf_counter() - t0
    result = score_translations([t.text for t in out], refs)
    result.update(sentences=len(src), seconds=seconds, hypotheses=[t.text for t in out])
    return result


def record(checkpoint: str, name: str, result: dict, options: dict) -> None:
    """Keep the scores in the checkpoint's metrics.json (the model card shows them), with the command's options."""
    metrics = Metrics.load(checkpoint)
    keep = ("bleu", "bleu_lc", "chrf", "references", "sentences", "seconds", "signatures")
    metrics.test[name] = {k: result[k] for k in keep} | {
        "beam": options["beam"], "length_penalty": options["length_penalty"], "src": options["src"],
        "int8": options.get("int8", False), "perturb": options.get("perturb", "none")}
    metrics.save(checkpoint)


def report(result: dict) -> str:
    """The human-readable lines, then one JSON line with the figures."""
    sig = result["signatures"]
    lines = [
        f"BLEU (cased)       {result['bleu']:6.2f}  {sig['bleu']}",
        f"BLEU (lowercased)  {result['bleu_lc']:6.2f}  {sig['bleu_lc']}",
        f"chrF               {result['chrf']:6.2f}  {sig['chrf']}",
        json.dumps({k: round(result[k], 4) if isinstance(result[k], float) else result[k]
                    for k in ("bleu", "bleu_lc", "chrf", "sentences", "seconds")}),
    ]
    return "\n".join(lines)
