"""The named endpoints for gradio_client: /translate, /attention and /patch."""
from __future__ import annotations

import gradio as gr

from playground import doubts, downloads
from transformer.interpret.capture import parse_head
from transformer.decoding import DecodeOptions
from transformer.errors import InputError
from transformer.interpret import analyses
from transformer.translator import MAX_SENTENCES, sentences

from playground.context import Context
from playground.view import to_page


def heads_off(spec: str) -> list[tuple[str, int, int]]:
    """'cross:0:1,encoder:2:3' -> [('cross', 0, 1), ('encoder', 2, 3)]."""
    if not isinstance(spec, str):
        raise InputError(f"ablate lists heads as text, e.g. 'cross:0:1,encoder:2:3'; got {spec!r}")
    return [parse_head(h.strip()) for h in spec.split(",") if h.strip()]


def parts_of(text) -> list:
    """The text's sentences, as the page splits them; a text with none (or not text) as it is: the translator
    says why it cannot translate it."""
    return (sentences(text) if isinstance(text, str) else []) or [text]


def said(translator, sentence: str, out) -> dict:
    """One sentence's translation as the API returns it: the model's own pieces, per-step probabilities and what the
    page says under it."""
    return {"sentence": sentence, "translation": out.text, "source_tokens": out.source_tokens,
            "target_tokens": out.target_tokens, "truncated": out.truncated, "unsure": out.unsure,
            "carried": out.carried, "warnings": doubts.warnings_under(translator, sentence, out),
            "steps": [{"token": s.token, "prob": s.prob, "alternatives": s.alternatives,
                       "guarded": s.guarded, "removed": s.removed} for s in out.steps]}


def register(ctx: Context) -> None:
    """Add both endpoints to the gr.Blocks being built."""
    default_pair = ctx.pairs[0] if ctx.pairs else "en-de"

    @to_page
    def translate(text: str, pair: str = default_pair, strategy: str = "greedy", temperature: float = 1.0,
                  top_k: int = 0, top_p: float = 1.0, seed: int = 0, beam_size: int = 4, length_penalty: float = 1.0,
                  max_len: int = 0, ablate: str = "", stutter_guard: bool = True) -> tuple[str, dict]:
        """Translate `text`, sentence by sentence as the page does (at most MAX_SENTENCES); returns the
        translations joined and the first sentence's tokens and per-step probabilities, with every sentence's in
        "sentences". `ablate` lists heads to switch off, e.g. "cross:0:1,encoder:2:3"."""
        options = DecodeOptions(strategy, temperature, top_k, top_p, seed, beam_size, length_penalty, max_len,
                                stutter_guard)
        translator, off = ctx.translator(pair), heads_off(ablate)
        parts = parts_of(text)
        each = [said(translator, part, analyses.ablated(translator, part, options, off))
                for part in parts[:MAX_SENTENCES]]
        return (" ".join(s["translation"] for s in each),
                each[0] | {"sentences": each, "left_out": len(parts) - len(each)})

    @to_page
    def attention(text: str, pair: str = default_pair, translation: str = "", ablate: str = "",
                  sentence: int = 0) -> dict:
        """Attention maps (L, H, query, key) of one sentence of `text` (`sentence` counts from 0: the first, as the
        page's views show) and its greedy translation (or the one given), with the heads in `ablate` switched off."""
        t, off = ctx.translator(pair), heads_off(ablate)
        parts = parts_of(text)
        if isinstance(sentence, bool) or not isinstance(sentence, int) or not 0 <= sentence < len(parts):
            raise InputError(f"sentence counts the text's sentences from 0: this text has {len(parts)}, so 0 to "
                             f"{len(parts) - 1}; got {sentence!r}")
        part = parts[sentence]
        maps = analyses.attention(t, part, translation or analyses.ablated(t, part, None, off), ablate=off)
        return downloads.attention_payload(maps) | {"sentence": part, "sentences": len(parts)}

    @to_page
    def patch(first: str, second: str, pair: str = default_pair, direction: str = "denoising") -> dict:
        """Activation patching for a minimal pair (analyses.patch): the shares per site, (layers, positions or
        heads), with the pieces and both translations."""
        if not isinstance(second, str) or not second.strip():
            raise InputError("give the second sentence of the pair")
        return analyses.patch(ctx.translator(pair), first, second, direction).to_dict()

    gr.api(translate, api_name="translate")
    gr.api(attention, api_name="attention")
    gr.api(patch, api_name="patch")
