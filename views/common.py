"""What every view shares: the loaded checkpoints, user-facing errors, the decoding options from the UI."""
from __future__ import annotations

import functools
import html
import json
import logging
from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from transformer import Translator

ROOT = Path(__file__).resolve().parents[1]
EXPLAIN = json.loads((ROOT / "assets" / "explanations.json").read_text(encoding="utf-8"))
PAIR_NAMES = {"en-de": "English → German", "en-fr": "English → French"}
log = logging.getLogger("transformer-playground")


@dataclass
class Context:
    """The server's read-only state: every checkpoint, loaded once, and where downloads go."""

    translators: dict[str, Translator]
    downloads: Path  # attention JSON files, pruned hourly
    bertviz_offline: bool = True  # False: bertviz's scripts come from its CDN

    @property
    def pairs(self) -> list[str]:
        known = [p for p in PAIR_NAMES if p in self.translators]
        return known + [p for p in self.translators if p not in PAIR_NAMES]

    def translator(self, pair: str) -> Translator:
        if pair not in self.translators:
            raise ValueError(f"unknown language pair {pair!r}; available: {', '.join(self.pairs) or 'none'}")
        return self.translators[pair]


def friendly(fn):
    """Bad input becomes a plain message in the page (gr.Error), never a traceback; anything unexpected is
    logged with its traceback on the server and reported in one sentence."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except (ValueError, KeyError) as e:
            raise gr.Error(str(e).strip("'\"")) from None
        except Exception as e:  # keep the server up, say so in words
            log.exception("%s failed", fn.__qualname__)
            raise gr.Error(f"Something went wrong ({type(e).__name__}); please try other settings.") from None
    return wrapper


KIND_CHOICES = [("Encoder self", "encoder"), ("Decoder self (masked)", "decoder"), ("Cross", "cross")]


def kind_radio(value: str) -> gr.Radio:
    """The attention-kind choice the Attention and One head views share."""
    return gr.Radio(KIND_CHOICES, value=value, label="Attention")


def layer_choices(translator: Translator) -> list[int]:
    """Layer numbers of the deeper stack (a view clamps them to the chosen kind's depth)."""
    return list(range(max(translator.cfg.n_encoder_layers, translator.cfg.n_decoder_layers)))


def need(result):
    """The current translation, or a plain message when there is none yet."""
    if result is None:
        raise ValueError("translate a sentence first")
    return result


def cards(items: list[tuple[str, str]]) -> str:
    """Titled boxes side by side, every text escaped."""
    return '<div class="cards">' + "".join(
        f'<div class="card"><div class="card-title">{html.escape(t)}</div><div>{html.escape(x)}</div></div>'
        for t, x in items) + "</div>"
