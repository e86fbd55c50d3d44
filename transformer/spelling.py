"""British and American spellings of the words a class types. The corpora and our classroom corpus write
American; training turns some sources British (transformer/training/noise.py), and the translator reads a British
spelling as its American twin, a rule like reading capitals in lowercase: the model cuts "favourite colour" into
rare pieces and writes a made-up word for it, while it knows "favorite color" (docs/training.md)."""
from __future__ import annotations

import re

# American -> British, whole words (noise.py also turns -ize / -yze verbs into -ise / -yse)
BRITISH = {
    "color": "colour", "colors": "colours", "colorful": "colourful", "favorite": "favourite",
    "favorites": "favourites", "flavor": "flavour", "honor": "honour", "humor": "humour", "neighbor": "neighbour",
    "neighbors": "neighbours", "neighborhood": "neighbourhood", "behavior": "behaviour", "labor": "labour",
    "center": "centre", "centers": "centres", "theater": "theatre", "meter": "metre", "meters": "metres",
    "liter": "litre", "kilometer": "kilometre", "kilometers": "kilometres", "traveled": "travelled",
    "traveling": "travelling", "canceled": "cancelled", "jewelry": "jewellery", "gray": "grey", "mom": "mum",
    "moms": "mums", "defense": "defence", "license": "licence", "catalog": "catalogue",
    "dialog": "dialogue", "pajamas": "pyjamas",
}
AMERICAN = {b: a for a, b in BRITISH.items()}


def american(text: str) -> str:
    """British spellings written American ("my favourite colour" -> "my favorite color"), capitals kept."""
    def word(m: re.Match) -> str:
        w = m.group(0)
        new = AMERICAN.get(w.lower())
        if new is None:
            return w
        return new.upper() if w.isupper() and len(w) > 1 else new.capitalize() if w[0].isupper() else new

    return re.sub(r"[A-Za-z]+", word, text)
