"""One user's translation and everything its views read: what the hooks saw, made once and shared between users.

Every map and every layer input comes from forward hooks (transformer.interpret.analyses.inspect); nothing is threaded
through forward's return values.
"""
from __future__ import annotations

import functools
import hashlib
import threading
from dataclasses import dataclass, field

from .context import SharedCache
from transformer.decoding import DecodeOptions
from transformer.interpret import analyses
from transformer.interpret.analyses import Inspection
from transformer.translator import Translation, Translator


MAX_SENTENCES = 20  # the most sentences one request translates; the model learned single sentences


@functools.lru_cache(maxsize=1)
def _segmenter():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def sentences(text: str) -> list[str]:
    """The text's sentences (pySBD: "Mr. Smith" and "U.S.A." stay whole), stripped, empty ones dropped."""
    return [s.strip() for s in _segmenter().segment(text) if s.strip()]


# The three families panel runs the user's sentence in one batch with this one: the shorter of the two is padded
NEIGHBOUR = "Two dogs are running through a field of tall grass while a man watches."




@dataclass
class Result:
    """One user's current translation and what the hooks saw; lives in that user's gr.State.

    The passes only a few views read (Q/K/V internals, the padded batch) are made when first asked for, once,
    and kept here for every user who shares this result."""

    pair: str
    text: str
    translation: Translation
    inspection: Inspection
    options: DecodeOptions = DecodeOptions()
    translator: Translator | None = field(default=None, repr=False, compare=False)
    _lazy: dict = field(default_factory=dict, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def maps(self):
        return self.inspection.maps

    def _once(self, name: str, make):
        with self._lock:  # two users opening One head at once run its pass once
            if name not in self._lazy:
                self._lazy[name] = make()
            return self._lazy[name]

    @property
    def internals(self) -> dict:
        """Per kind and layer: Q, K, V, the mask, W^O's input and output (analyses.inspect(internals=True))."""
        return self._once("internals", lambda: analyses.inspect(self.translator, self.text, self.translation,
                                                                internals=True).internals)

    @property
    def batch(self) -> list[dict]:
        """analyses.inspect_batch of [text, NEIGHBOUR]: the masks as a padded batch applies them."""
        return self._once("batch", lambda: analyses.inspect_batch(
            self.translator, [self.text, NEIGHBOUR], [self.translation, self.translator.translate(NEIGHBOUR)]))

    @property
    def key(self) -> str:
        """The same for the same pair, text and decoding options: what caches of its views are keyed by."""
        return result_key(self.pair, self.text, self.options)


def result_key(pair: str, text: str, options: DecodeOptions) -> str:
    return hashlib.sha1(repr((pair, text, options)).encode("utf-8", "replace")).hexdigest()[:20]


def run(translator: Translator, pair: str, text: str, options: DecodeOptions = DecodeOptions(),
        cache: SharedCache | None = None) -> Result:
    """Translate, then one hooked teacher-forced pass (maps and layer inputs); the Q/K/V internals and the padded
    batch wait until a view asks for them (Result.internals, Result.batch). Beam search keeps its tree.
    cache: results shared between users (every strategy is repeatable: sampling draws from its seed)."""
    if cache is not None:
        return cache.get(result_key(pair, text, options), lambda: run(translator, pair, text, options))
    translation = translator.translate(text, options, record_tree=options.strategy == "beam")
    inspection = analyses.inspect(translator, text, translation)
    return Result(pair, text, translation, inspection, options, translator)
