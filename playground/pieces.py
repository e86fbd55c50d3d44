"""How the page writes what the model reads and counts, in every view and figure a class sees.

Pieces without sentencepiece's word-start mark: a piece that starts a word is written as it is, one that continues
the word before gets a dash ("Ich" is "I", "-ch"); <s> is "start", </s> is "end"; a byte of a character the vocabulary
lacks is written as its character when it is one ("<"), else as "byte D0". Positions, steps, layers and heads
are counted from 1. The raw pieces stay in the library's results (the API returns them as the model has them).
"""
from __future__ import annotations

import html

from transformer.tokenizer import BYTE_PIECE

from playground.i18n import ENGLISH, N_, Texts

# The three kinds of attention (transformer.model.ATTENTION_KINDS) in the page's words: a title, a button's label
KIND_NAMES = {"encoder": N_("encoder self-attention"), "decoder": N_("decoder self-attention (masked)"),
              "cross": N_("cross-attention (decoder -> encoder)")}  # a menu's labels (_l), a figure's titles
KIND_BUTTONS = {"encoder": N_("Encoder self"), "decoder": N_("Decoder self (masked)"), "cross": N_("Cross")}
# The attribution methods (transformer.interpret.attribution.METHODS) as the page names them, in its order
METHOD_NAMES = {"attention": N_("attention (last layer)"), "attention_norm": N_("attention × norm"),
                "gradient_x_input": N_("gradient × input"), "integrated_gradients": N_("integrated gradients"),
                "alti_plus": "ALTI+", "rollout": N_("attention rollout")}
SPECIAL = {"<s>": "start", "</s>": "end", "<pad>": "pad", "<unk>": "unknown"}


def piece(token: str) -> str:
    """A piece without the word-start mark "▁" (the glance shows a gap instead)."""
    byte = BYTE_PIECE.fullmatch(token)
    if byte:  # a printable ASCII byte is its character; another is one byte of a longer character
        return chr(int(byte[1], 16)) if 32 < int(byte[1], 16) < 127 else f"byte {byte[1]}"
    return SPECIAL.get(token, token.replace("▁", "")) or "␣"


def starts_word(token: str) -> bool:
    return token.startswith("▁") or token in SPECIAL


def shown(token: str, first: bool = False) -> str:
    """A piece in a list of pieces: a dash before one that continues the word before it."""
    plain = first or starts_word(token) or BYTE_PIECE.fullmatch(token) or not piece(token)[:1].isalnum()
    return piece(token) if plain else "-" + piece(token)


def _spelled(token: str) -> bool:
    return any(c.isalnum() for c in token)


def word_span(tokens: list[str], i: int) -> tuple[int, int]:
    """The pieces [start, end) of the word piece i belongs to: from the piece that starts it (sentencepiece's mark)
    to the next that starts one, less the punctuation at its edges ("street" keeps its "." out, "J'ai" its "'")."""
    start, end = i, i + 1
    while start > 0 and not starts_word(tokens[start]) and tokens[start - 1] not in SPECIAL:
        start -= 1
    while end < len(tokens) and not starts_word(tokens[end]):
        end += 1
    while start < i and not _spelled(tokens[start]):
        start += 1
    while end - 1 > i and not _spelled(tokens[end - 1]):
        end -= 1
    return start, end


def word_of(tokens: list[str], i: int) -> str:
    """The whole word piece i belongs to: "habe" for the piece "be" of "ha", "be"."""
    start, end = word_span(tokens, i)
    return "".join(t.replace("▁", "") for t in tokens[start:end])


def named(tokens: list[str], i: int, _: Texts = ENGLISH) -> str:
    """Piece i as a sentence names it: “Ich” when it is a whole word, else the piece “-be” of “habe” (never a
    piece called a word: a class reads "be" as the English word). Punctuation and start/end are named as they are.
    `_`: the language it is said in (playground.i18n.Texts)."""
    token = tokens[i]
    if token in SPECIAL or (token != "▁" and not _spelled(token)):
        return _.quoted(piece(token))
    whole = word_of(tokens, i)
    if whole == token.replace("▁", ""):
        return _.quoted(whole)
    return _("the piece {piece} of {word}", piece=_.quoted(shown(token, first=word_span(tokens, i)[0] == i)),
             word=_.quoted(whole))


def labels(tokens: list[str], escaped: bool = True, symbols: bool = False) -> list[str]:
    """Axis labels of a sequence of pieces: "1 A", "2 man", ... Escaped for plotly, which draws labels as HTML;
    escaped=False for a menu's choices, which gradio writes as text. symbols=True: each token a whole symbol (a toy
    task's), never marked as continuing the one before."""
    write = html.escape if escaped else str
    return [f"{i + 1} {write(shown(t, first=i == 0 or symbols))}" for i, t in enumerate(tokens)]


def number(i: int) -> int:
    """A layer, head, step or position as the page counts it."""
    return i + 1


def listed(numbers: list[int]) -> str:
    """[1, 2, 4, 8, 131, 132, 133] -> "1, 2, 4, 8 and 131-133" (runs of three or more as a range)."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    parts = [f"{r[0]}-{r[-1]}" if len(r) >= 3 else ", ".join(map(str, r)) for r in runs]
    parts = [p for part in parts for p in part.split(", ")]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
