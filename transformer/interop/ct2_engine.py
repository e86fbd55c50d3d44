"""Translate with a CTranslate2 export, and time it: the other engine in `python benchmarks/engines.py`.

This file never imports torch. torch and CTranslate2 each bring an OpenMP thread pool, and in one process
they slow each other badly, so the benchmark runs this file as its own process:

    python transformer/ct2_engine.py '{"model": DIR, "compute_type": "int8", "intra_threads": 1, ...}'

It prints one JSON line of timings (see `measure`).
"""
from __future__ import annotations

import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import ctranslate2
import sentencepiece as spm


@dataclass
class Engine:
    """A CTranslate2 export, loaded on the CPU."""

    translator: ctranslate2.Translator
    sp: spm.SentencePieceProcessor  # the checkpoint's own, copied beside the model
    max_len: int  # positions in the exported table: sources are cut to it, outputs stop one short of it

    def pieces(self, text: str) -> list[str]:
        return self.sp.encode(text, out_type=str)

    def translate(self, texts: list[str], beam_size: int = 1, max_batch_size: int = 64, max_decoding_length: int = 0,
                  length_penalty: float = 1.0) -> list[list[str]]:
        """The output pieces of each text (</s> excluded); sp.decode_pieces(...) gives the text.

        beam_size is always passed on: CTranslate2's own default is 2. max_decoding_length 0: as long as
        the position table allows (the decoder's <s> takes position 0).
        """
        results = self.translator.translate_batch(
            [self.pieces(t) for t in texts], beam_size=beam_size, max_batch_size=max_batch_size,
            max_input_length=self.max_len, max_decoding_length=max_decoding_length or self.max_len - 1,
            length_penalty=length_penalty)
        return [r.hypotheses[0] for r in results]


def load(model_dir: str | Path, compute_type: str = "default", inter_threads: int = 1,
         intra_threads: int = 0) -> Engine:
    model_dir = Path(model_dir)
    translator = ctranslate2.Translator(str(model_dir), device="cpu", compute_type=compute_type,
                                        inter_threads=inter_threads, intra_threads=intra_threads)
    max_len = json.loads((model_dir / "model_config.json").read_text())["max_len"]
    return Engine(translator, spm.SentencePieceProcessor(model_file=str(model_dir / "spm.model")), max_len)


def measure(model: str, sentences: list[str], throughput: list[str], compute_type: str = "default",
            intra_threads: int = 2, inter_threads: int = 1, rounds: int = 3, **_) -> dict:
    """Batch-1 greedy latency p50 (ms, median over rounds) and beam-4 throughput (sentences/s, best round)."""
    engine = load(model, compute_type, inter_threads, intra_threads)
    pieces = [engine.pieces(s)[: engine.max_len - 1] for s in sentences]
    greedy = dict(beam_size=1, max_decoding_length=engine.max_len - 1)
    for p in pieces[:3]:  # warm-up
        engine.translator.translate_batch([p], **greedy)

    def p50() -> float:
        times = []
        for p in pieces:
            t0 = time.perf_counter()
            engine.translator.translate_batch([p], **greedy)
            times.append(time.perf_counter() - t0)
        return 1000 * statistics.median(times)

    p50s = [p50() for _ in range(rounds)]
    # Throughput: one call over the whole set, as a server would hand it a queue; with inter_threads > 1,
    # CTranslate2 splits the batches among its workers.
    engine.translate(throughput[:64], beam_size=4)
    seconds = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        engine.translate(throughput, beam_size=4)
        seconds.append(time.perf_counter() - t0)
    return {"greedy_p50_ms": statistics.median(p50s), "beam4_sentences_per_s": len(throughput) / min(seconds)}


if __name__ == "__main__":  # one turn of the benchmark: the job file is the argument
    print(json.dumps(measure(**json.loads(Path(sys.argv[1]).read_text()))))
