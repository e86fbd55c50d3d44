"""One user's translation and everything its views read: what the hooks saw, made once and shared between users.

Every map and every layer input comes from forward hooks (Translator.inspect); nothing is threaded
through forward's return values.
"""
from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

from .cache import SharedCache
from transformer.decoding import DecodeOptions
from transformer.translator import Inspection, Translation, Translator


# The three families panel runs the user's sentence in one batch with this one: the shorter of the two is padded
NEIGHBOUR = "Two dogs are running through a field of tall grass while a man watches."


@functools.lru_cache(maxsize=16)
def neighbour_translation(translator: Translator) -> Translation:
    """NEIGHBOUR's greedy translation by this model (the same every time, so made once)."""
    return translator.translate(NEIGHBOUR)


@dataclass
class Result:
    """One user's current translation and what the hooks saw; lives in that user's gr.State."""

    pair: str
    text: str
    translation: Translation
    inspection: Inspection
    options: DecodeOptions = DecodeOptions()
    batch: list[dict] | None = None  # Translator.inspect_batch of [text, NEIGHBOUR]: masks with padding

    @property
    def maps(self):
        return self.inspection.maps

    @property
    def key(self) -> str:
        """The same for the same pair, text and decoding options: what caches of its views are keyed by."""
        return result_key(self.pair, self.text, self.options)


def result_key(pair: str, text: str, options: DecodeOptions) -> str:
    return hashlib.sha1(repr((pair, text, options)).encode("utf-8", "replace")).hexdigest()[:20]


def run(translator: Translator, pair: str, text: str, options: DecodeOptions = DecodeOptions(),
        cache: SharedCache | None = None) -> Result:
    """Translate, then hooked teacher-forced passes: the sentence alone (maps, layer inputs, Q/K/V), and the
    sentence in a padded batch with NEIGHBOUR (the masks as a batch applies them). Beam search keeps its tree.
    cache: results shared between users (every strategy is repeatable: sampling draws from its seed)."""
    if cache is not None:
        return cache.get(result_key(pair, text, options), lambda: run(translator, pair, text, options))
    translation = translator.translate(text, options, record_tree=options.strategy == "beam")
    inspection = translator.inspect(text, translation, internals=True)
    batch = translator.inspect_batch([text, NEIGHBOUR], [translation, neighbour_translation(translator)])
    return Result(pair, text, translation, inspection, options, batch)
