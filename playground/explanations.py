"""Each view's words (assets/explanations.json): its plain words first, how it works and references folded."""
from __future__ import annotations

import json

from .context import ROOT

EXPLAIN = json.loads((ROOT / "assets" / "explanations.json").read_text(encoding="utf-8"))


def folded(entry: dict) -> str:
    """A view's mechanism and references, folded until asked for (HTML's own <details>: no component of their own,
    so the page stays as light as before)."""
    parts = [("How it works", entry.get("how", "")), ("References", entry.get("refs", ""))]
    return "\n".join(f"<details><summary>{title}</summary>\n\n{text}\n\n</details>" for title, text in parts if text)


def explained(entry: dict, plain: str | None = None) -> str:
    """What a view says first (its plain words, or `plain` when they carry the checkpoint's numbers), then the
    rest, folded."""
    return (entry["plain"] if plain is None else plain) + "\n\n" + folded(entry)
