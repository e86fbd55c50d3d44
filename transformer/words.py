"""words.json: which English words a checkpoint's training pairs write, and which of them their references write too.

A translation that writes a word of its English source as typed, where the references the model learned from
would not ("Bananas are yellow." → "Bananas sind gelb."), has most likely met a word the model does not know: it
copied what it could not translate. Probabilities often miss it (a copy is an easy, confident choice), so the
page says it in words (playground/panel.warnings). Counted from the unique training pairs when a model is trained,
or for a checkpoint afterwards: `python -m transformer count-words`.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .files import write_json

WORDS = "words.json"
WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")  # letters, with an apostrophe or a hyphen inside
SHORTEST = 3  # shorter words ("an", "so", "am") are too often words of both languages by chance
AT_LEAST = 2  # a word counts when written at least this many times
SENTENCE_END = re.compile(r"[.!?:]\s*$")


@dataclass(frozen=True)
class TrainingWords:
    english: frozenset[str]  # words the English sources write in lowercase (lowercase, SHORTEST letters or more)
    both: frozenset[str]  # words (lowercased) both sides write, in any case: a translation may keep them as typed

    @classmethod
    def count(cls, sources: Iterable[str], targets: Iterable[str], at_least: int = AT_LEAST) -> TrainingWords:
        """From aligned training pairs (each pair once)."""
        lower, source_words, target_words = Counter(), Counter(), Counter()
        for text in sources:
            found = WORD.findall(text)
            lower.update(w for w in found if w.islower() and len(w) >= SHORTEST)
            source_words.update(w.lower() for w in found)
        for text in targets:
            target_words.update(w.lower() for w in WORD.findall(text))
        return cls(frozenset(w for w, n in lower.items() if n >= at_least),
                   frozenset(w for w, n in source_words.items() if n >= at_least and target_words[w] >= at_least))

    def left_in_english(self, source: str, translation: str) -> list[str]:
        """The translation's words that are words of `source` written as typed, though the references would not
        keep them (not in `both`): a word the model most likely did not know. Of the source's words of SHORTEST
        letters or more, those in lowercase; a capitalised one only where capitals say nothing (opening a sentence,
        or all of it shouted) and the sources write it in lowercase elsewhere: any other may be a name, which
        translations keep (names are lost_names's)."""
        shouting = source.upper() == source
        typed = set()
        for match in WORD.finditer(source):
            word, before = match.group(), source[: match.start()]
            lower = word.lower()
            if len(word) < SHORTEST or lower in self.both:
                continue
            opening = not before.strip() or SENTENCE_END.search(before) is not None
            if word.islower() or ((opening or shouting) and lower in self.english):
                typed.add(lower)
        left = []
        for word in WORD.findall(translation):
            if word.lower() in typed and word not in left:
                left.append(word)
        return left

    def save(self, checkpoint: str | Path) -> None:
        write_json(Path(checkpoint) / WORDS, {"english": sorted(self.english), "both": sorted(self.both)})

    @classmethod
    def load(cls, checkpoint: str | Path) -> TrainingWords | None:
        """A checkpoint's words.json; None where it has none (an imported model, or one trained before it)."""
        path = Path(checkpoint) / WORDS
        if not path.is_file():
            return None
        words = json.loads(path.read_text(encoding="utf-8"))
        return cls(frozenset(words["english"]), frozenset(words["both"]))
