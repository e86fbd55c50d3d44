"""Text as a class types it: the perturbations `evaluate --perturb` measures and the training noise draws from.

Only the source side is perturbed; the target stays clean, as a translation should be.
"""
from __future__ import annotations

import random
import re

FINAL_PUNCT = re.compile(r"[\s.!?…。]+$")


def no_final_punct(text: str) -> str:
    """'Where is it?' -> 'Where is it' (the final run of . ! ? … and spaces)."""
    return FINAL_PUNCT.sub("", text)


PERTURBATIONS = {  # the variants `evaluate --perturb` names
    "none": lambda s: s,
    "lower": str.lower,
    "nopunct": no_final_punct,
    "upper": str.upper,
}

# The training noise: (share among perturbed sentences, what is done). Lowercase is how a class types most;
# capitals are rare in the data, so they get a share of their own.
NOISE_MIX = (
    (0.35, str.lower),
    (0.20, no_final_punct),
    (0.25, lambda s: no_final_punct(s.lower())),
    (0.12, str.upper),
    (0.04, lambda s: no_final_punct(s.upper())),
    (0.04, lambda s: s[:1].lower() + s[1:]),  # only the sentence's first capital missing
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
