"""Text as a class types it: the perturbations `evaluate --perturb` measures and the training noise draws from.

Only the source side is perturbed; the target stays clean, as a translation should be.
"""
from __future__ import annotations

import random
import re

from ..tokenizer import BRITISH, american

FINAL_PUNCT = re.compile(r"[\s.!?…。]+$")


def no_final_punct(text: str) -> str:
    """'Where is it?' -> 'Where is it' (the final run of . ! ? … and spaces)."""
    return FINAL_PUNCT.sub("", text)


APOSTROPHE = re.compile(r"(?<=[A-Za-z])['’](?=[A-Za-z])")


def no_apostrophes(text: str) -> str:
    """"I don't like it, I'm sure" -> "I dont like it, Im sure" (an apostrophe inside a word dropped)."""
    return APOSTROPHE.sub("", text)


IZE = re.compile(r"\b(\w{3,})(iz|yz)(e|es|ed|ing|ation|ations)\b")
IZE_KEEP = {"size", "sizes", "sized", "prize", "prizes", "seize", "seized", "citizen"}


def british(text: str) -> str:
    """American spellings as a British class writes them: "my favorite color" -> "my favourite colour",
    "organize" -> "organise" (capitals kept)."""
    def word(m: re.Match) -> str:
        w = m.group(0)
        new = BRITISH.get(w.lower())
        if new is None:
            return w
        return new.capitalize() if w[0].isupper() else new

    text = re.sub(r"[A-Za-z]+", word, text)
    return IZE.sub(lambda m: m.group(0) if m.group(0).lower() in IZE_KEEP
                   else m.group(1) + m.group(2)[0] + "s" + m.group(3), text)



def lower_names(text: str) -> str:
    """Capitals inside the sentence missing ("I live in Manchester with Anna" -> "... manchester with anna")."""
    return text[:1] + re.sub(r"(?<=\s)[A-Z](?=[a-z])", lambda m: m.group(0).lower(), text[1:])


PERTURBATIONS = {  # the variants `evaluate --perturb` names
    "none": lambda s: s,
    "lower": str.lower,
    "nopunct": no_final_punct,
    "upper": str.upper,
    "noapos": no_apostrophes,
    "british": british,
}

# The training noise: (share among perturbed sentences, what is done). Lowercase is how a class types most;
# capitals are rare in the data, so they get a share of their own; apostrophes dropped go with lowercase, as typed.
NOISE_MIX = (
    (0.24, str.lower),
    (0.14, no_final_punct),
    (0.18, lambda s: no_final_punct(s.lower())),
    (0.09, str.upper),
    (0.03, lambda s: no_final_punct(s.upper())),
    (0.03, lambda s: s[:1].lower() + s[1:]),  # only the sentence's first capital missing
    (0.05, no_apostrophes),
    (0.07, lambda s: no_final_punct(no_apostrophes(s.lower()))),  # "i dont like homework"
    (0.07, british),
    (0.02, american),
    (0.08, lower_names),
)


def perturb(text: str, kind: str) -> str:
    """One of PERTURBATIONS by name; a ValueError names the choices."""
    if kind not in PERTURBATIONS:
        raise ValueError(f"perturbation must be one of {', '.join(PERTURBATIONS)}; got {kind!r}")
    return PERTURBATIONS[kind](text)


def noisy_sources(sources: list[str], share: float, seed: int) -> list[str]:
    """Each source perturbed with probability `share` by a draw from NOISE_MIX; the same seed, the same draw."""
    if share <= 0:
        return list(sources)
    rng = random.Random(seed)
    weights, funcs = zip(*NOISE_MIX)
    out = []
    for s in sources:
        out.append(rng.choices(funcs, weights)[0](s) if rng.random() < share else s)
    return out
