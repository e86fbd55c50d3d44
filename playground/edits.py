"""Edits that change one thing in a sentence, for the minimal-pair lab: gender (he/she, brother/sister, ...),
singular/plural, tense, negation, a/the, one noun for another. Each is a word-for-word rule on the sentence as typed; the view keeps those that apply
and says which keep the number of source pieces (so that positions line up)."""
from __future__ import annotations

import re

SWAPS = {  # kind: pairs of words swapped either way (case kept)
    "gender": [("he", "she"), ("his", "her"), ("him", "her"), ("man", "woman"), ("boy", "girl"), ("men", "women"),
               ("father", "mother"), ("brother", "sister"), ("son", "daughter")],
    "tense": [("is", "was"), ("am", "was"), ("are", "were"), ("has", "had"), ("will", "did")],
    "a/the": [("a", "the"), ("an", "the")],
    "another noun": [("dog", "cat"), ("car", "bike"), ("house", "school"), ("ball", "book"), ("doctor", "teacher"),
                     ("street", "beach"), ("apple", "orange")],
}
NEGATABLE = ("am", "is", "are", "was", "were", "can", "will")  # a "not" goes after these


def matched(word: str, like: str) -> str:
    """`word` in the case of `like` (Dog -> Cat, DOG -> CAT)."""
    return word.upper() if like.isupper() and len(like) > 1 else word.capitalize() if like[:1].isupper() else word


def swap(text: str, pairs: list[tuple[str, str]]) -> str:
    """Every word of `pairs` replaced by its partner, either way; the first match only, so one thing changes."""
    table = {a: b for a, b in pairs}
    for a, b in pairs:  # back the other way: the first pair that names a word decides (the -> a, not an)
        table.setdefault(b, a)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(table, key=len, reverse=True))) + r")\b", re.I)
    return pattern.sub(lambda m: matched(table[m.group(0).lower()], m.group(0)), text, count=1)


def plural(text: str) -> str:
    """"The dog is ..." -> "The dogs are ..."; "The dogs are ..." -> "The dog is ..." (regular nouns)."""
    one = re.compile(r"\b(the|a|an|one)\s+([a-z]+?)\s+(is|was)\b", re.I)
    many = re.compile(r"\b(the|two)\s+([a-z]+?)s\s+(are|were)\b", re.I)
    irregular = ("man", "child", "person", "foot", "mouse", "sheep", "fish")  # "the mans" is no English
    if one.search(text):
        return one.sub(lambda m: m.group(0) if m.group(2).lower().endswith(irregular) else
                       f"{matched('the', m.group(1))} {m.group(2)}s {'are' if m.group(3).lower() == 'is' else 'were'}",
                       text, count=1)
    return many.sub(lambda m: f"{matched('the', m.group(1))} {m.group(2)} {'is' if m.group(3).lower() == 'are' else 'was'}",
                    text, count=1)


def negation(text: str) -> str:
    """"... is running" -> "... is not running"; a "not" already there goes."""
    if re.search(r"\bnot\b", text, re.I):
        return re.sub(r"\s+not\b", "", text, count=1, flags=re.I)
    return re.sub(r"\b(" + "|".join(NEGATABLE) + r")\b", lambda m: m.group(0) + " not", text, count=1, flags=re.I)


def swapped(text: str, edited: str) -> str:
    """The one word a swap changed, as "sister → brother"."""
    old, new = text.split(), edited.split()
    at = next(i for i, (a, b) in enumerate(zip(old, new)) if a != b)
    return f"{old[at].strip('.,!?;:')} → {new[at].strip('.,!?;:')}"


def edits(text: str) -> list[tuple[str, str]]:
    """(kind, edited sentence) for every kind of edit that changes `text`, in a fixed order; a swap's kind names
    the words it swapped ("gender: sister → brother")."""
    made = [(kind, swap(text, pairs)) for kind, pairs in SWAPS.items()]
    made = [(f"{kind}: {swapped(text, edited)}" if edited != text else kind, edited) for kind, edited in made]
    made += [("singular/plural", plural(text)), ("negation", negation(text))]
    return [(kind, edited) for kind, edited in made if edited != text]
