"""When each piece was decided (analyses.commitment), as a strip of the translation's pieces: under each, the decoder
layer from which the logit lens's top choice is that piece and stays so, and what a lower layer preferred before.
HTML that wraps onto as many lines as its box takes (a phone's included)."""
from __future__ import annotations

import html

from transformer.interpret.analyses import Commitment

from playground.i18n import ENGLISH, Texts
from playground.pieces import shown

# the earlier a piece was settled, the darker its box: a shade per share of the decoder's layers
SHADES = ("#1f5fa8", "#4f86c6", "#8fb4de", "#cfe0f3")


def shade(layer: int, layers: int) -> tuple[str, str]:
    """The box's colour and its text's for a piece settled at `layer` of `layers` (from 1; 0: never: a piece the
    stutter guard, sampling or beam search chose): white text on the two darker shades."""
    if layer <= 0:
        return "#eee", "#111"
    level = min(len(SHADES) - 1, (layer - 1) * len(SHADES) // max(layers, 1))
    return SHADES[level], "#fff" if level < 2 else "#111"


def changes_of_mind(c: Commitment, t: int) -> list[str]:
    """What the layers below the settled one preferred at piece t, less the piece the decoder was given there (the one
    before it, or the start): lower layers often just repeat their input, which is no change of mind."""
    given = c.pieces[t - 1] if t else "<s>"
    return [p for p in c.earlier[t] if p != given]


def unsettled(t: int, steps: list, strategy: str, _: Texts) -> str:
    """What a piece that no layer made its top choice says of why it was written all the same: the stutter guard
    took the model's first choice away at that step ("guarded"), it was drawn ("sampled"), or beam search kept it
    on a better path ("searched")."""
    if t < len(steps) and getattr(steps[t], "guarded", False):
        return _("guarded")
    return {"sample": _("sampled"), "beam": _("searched")}.get(strategy, _("not its first choice"))


def strip(c: Commitment, _: Texts = ENGLISH, steps: list = (), strategy: str = "greedy") -> str:
    """The strip, its plain sentence above it and the encoder's answer (DecoderLens) under it; every piece escaped.
    `steps` and `strategy`: the translation's steps (where the stutter guard chose) and how it was decoded, which
    say why a piece no layer chose was written (`unsettled`)."""
    L = c.decoder_layers
    items = []
    for t, (token, layer) in enumerate(zip(c.pieces, c.settled)):
        text = html.escape(shown(token, first=t == 0))
        background, colour = shade(layer, L)
        said = _("layer {n}", n=layer) if layer else unsettled(t, steps, strategy, _)
        before = ", ".join(html.escape(shown(p, first=True)) for p in changes_of_mind(c, t))
        was = '<span class="was">' + _("was: {pieces}", pieces=before) + "</span>" if before else ""
        hover = _("{piece}: {said} of {n}", piece=text, said=said, n=L) if layer else f"{text}: {said}"
        items.append(f'<li title="{hover}"><b style="background:{background};color:{colour}">'
                     f'{text}</b><span>{said}</span>{was}</li>')
    changed = sum(bool(changes_of_mind(c, t)) for t in range(len(c.pieces)))
    E = c.encoder_total
    if c.encoder_layers == E:
        encoder = _("The encoder: the decoder needs all {total} of its layers to write this translation", total=E)
    elif c.encoder_layers == 1:
        encoder = _("The encoder: with only its first layer of {total}, the decoder would already write the same "
                    "translation", total=E)
    else:  # more than one, and so plural in every language
        encoder = _("The encoder: with its first {n} layers of {total}, the decoder would already write the same "
                    "translation", n=c.encoder_layers, total=E)
    changes = (_.plural("On {n} piece, a lower layer first preferred another (was: …).",
                        "On {n} pieces, a lower layer first preferred another (was: …).", changed)
               if changed else _("No lower layer preferred another piece on the way."))
    return ('<div class="decided"><p>' + _("<b>When it decided.</b> Under each piece, the decoder layer (of {n}) from "
                                          "which it is the model's top choice and stays so; the darker, the earlier.",
                                          n=L)
            + f' {changes}</p><ol class="decided-strip">{"".join(items)}</ol><p class="small">{encoder} '
            + _("(each layer's output read as the decoder's memory). Lower layers often first repeat the piece they "
                "were given; that is not counted as a change of mind.") + "</p></div>")
