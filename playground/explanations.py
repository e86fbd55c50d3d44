"""Each view's words (assets/explanations.json): its plain words first (in the page's language), how it works and
references folded (English: the fold says so)."""
from __future__ import annotations

import json
import re

from .context import ROOT
from .i18n import ENGLISH, Texts

EXPLAIN = json.loads((ROOT / "assets" / "explanations.json").read_text(encoding="utf-8"))


def extract(fileobj, keywords, comment_tags, options):
    """Babel's extractor for the explanations (babel.cfg): each view's plain words are a text of the catalogue;
    how it works and its references stay English."""
    for key, entry in json.load(fileobj).items():
        if entry.get("plain"):
            yield 1, None, entry["plain"], [f"the plain words of the view {key!r} (assets/explanations.json)"]


WRITTEN_TAGS = ("details", "summary", "sub", "sup", "br")  # the tags the explanations write as tags
NOT_A_TAG = re.compile(rf"<(?!/?(?:{'|'.join(WRITTEN_TAGS)})\b)")  # any other "<": a start or end token ("<s>")


def as_text(text: str) -> str:
    """`text` for Markdown with every "<" that does not open one of WRITTEN_TAGS written as text: the start token
    "<s>" would otherwise be read as HTML's struck-through text, and everything after it drawn struck through."""
    return NOT_A_TAG.sub("&lt;", text)


def folded(entry: dict, _: Texts = ENGLISH) -> str:
    """A view's mechanism and references, folded until asked for (HTML's own <details>: no component of their own,
    so the page stays as light as before); in another language the fold says that its text is English."""
    parts = [(_("How it works"), as_text(entry.get("how", ""))), (_("References"), as_text(entry.get("refs", "")))]
    said = "" if _.language == "en" else "\n\n" + _("(in English)")
    return "\n".join(f"<details><summary>{title}</summary>{said}\n\n{text}\n\n</details>" for title, text in parts
                     if text)


def explained(entry: dict, plain: str | None = None, _: Texts = ENGLISH, **values) -> str:
    """What a view says first (its plain words, or `plain` when they carry the checkpoint's numbers; `values` fill
    the words' {names}), in the language of `_`, then the rest, folded."""
    words = _(entry["plain"]) if plain is None else plain
    return as_text(words.format(**values) if values else words) + "\n\n" + folded(entry, _)
