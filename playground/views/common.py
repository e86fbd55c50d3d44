"""What several views share: the attention-kind, layer and head menus, and the notation of changed pieces."""
from __future__ import annotations

import difflib
import html

import gradio as gr

from transformer import Translator
from transformer.errors import InputError
from playground.pieces import KIND_BUTTONS, shown
from transformer.model import KINDS
from playground.i18n import ENGLISH, N_, Texts, _l


def kind_radio(value: str) -> gr.Radio:
    """The attention-kind choice the Attention and One head views share."""
    return gr.Radio([(_l(KIND_BUTTONS[kind]), kind) for kind in KINDS], value=value, label=_l("Attention"))


def layer_choices(translator: Translator | None) -> list[tuple[str, int]]:
    """(shown from 1, index) of the deeper stack's layers (a view clamps them to the chosen kind's depth)."""
    if translator is None:
        return [("1", 0)]
    return [(str(i + 1), i) for i in range(max(translator.cfg.n_encoder_layers, translator.cfg.n_decoder_layers))]


def head_choices(translator: Translator | None) -> list[tuple[str, int]]:
    """(shown from 1, index) of a layer's heads."""
    return [(str(h + 1), h) for h in range(translator.cfg.n_heads if translator is not None else 1)]


def first_translator(ctx) -> Translator | None:
    """The model a view's menus show before any event has drawn them (the first pair's)."""
    return ctx.translator(ctx.pairs[0]) if ctx.pairs else None


def need(result):
    """The current translation, or a plain message when there is none yet."""
    if result is None:
        raise InputError(N_("translate a sentence first"))
    return result


def cards(items: list[tuple[str, str]]) -> str:
    """Titled boxes side by side, every text escaped."""
    return '<div class="cards">' + "".join(
        f'<div class="card"><div class="card-title">{html.escape(t)}</div><div>{html.escape(x)}</div></div>'
        for t, x in items) + "</div>"


def token_changes(before: list[str], after: list[str]) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Both token sequences, each token with whether it changed (removed from `before`, added in `after`)."""
    old, new = [], []
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
        old += [(t, op != "equal") for t in before[a0:a1]]
        new += [(t, op != "equal") for t in after[b0:b1]]
    return old, new


def token_diff(before: list[str], after: list[str], before_label: str, after_label: str, unit: str = "piece",
               _: Texts = ENGLISH) -> str:
    """Both sequences as HTML, removed items struck out and added ones highlighted; pieces (unit "piece") written
    as every view writes them (no ▁, a dash inside a word, start and end), words as they are; its counts in the
    language of `_`."""
    def span(item: str, first: bool, cls: str) -> str:
        return f'<span class="tok {cls}">{html.escape(shown(item, first) if unit == "piece" else item)}</span>'

    old, new = token_changes(before, after)
    gone, came = sum(c for _, c in old), sum(c for _, c in new)
    counted = (lambda n: _.plural("{n} piece", "{n} pieces", n)) if unit == "piece" else (
        lambda n: _.plural("{n} word", "{n} words", n))
    changed = _("{gone} struck out, {came} new", gone=counted(gone), came=counted(came))
    return (f'<div class="diff"><div><b>{html.escape(before_label)}</b>: '
            f'{" ".join(span(t, i == 0, "removed" if c else "same") for i, (t, c) in enumerate(old))}</div>'
            f'<div><b>{html.escape(after_label)}</b>: '
            f'{" ".join(span(t, i == 0, "added" if c else "same") for i, (t, c) in enumerate(new))}</div>'
            f"<div>{changed}</div></div>")