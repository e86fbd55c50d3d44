"""What every view shares: the loaded checkpoints, user-facing errors, the decoding options from the UI."""
from __future__ import annotations

import functools
import html
import inspect
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

import gradio as gr
import plotly.graph_objects as go

from transformer import Translator
from playground import figures
from playground.cache import SharedCache
from transformer.errors import InputError
from playground.pieces import KIND_BUTTONS
from transformer.model import KINDS

ROOT = Path(__file__).resolve().parents[2]
EXPLAIN = json.loads((ROOT / "assets" / "explanations.json").read_text(encoding="utf-8"))
PAIR_NAMES = {"en-de": "English → German", "en-fr": "English → French"}
log = logging.getLogger("transformer-playground")


@dataclass
class Context:
    """The server's read-only state: every checkpoint, loaded once, and where downloads go."""

    translators: dict[str, Translator]
    downloads: Path  # every download of the page (transformer.downloads: one writer, pruned hourly)
    bertviz_scripts: str | list[str] = "inline"  # bertviz_document's scripts: "inline", "cdn" or their URLs
    drawn: SharedCache = field(default_factory=lambda: SharedCache(256, ttl_s=1800))  # views' updates, successes only

    @property
    def pairs(self) -> list[str]:
        known = [p for p in PAIR_NAMES if p in self.translators]
        return known + [p for p in self.translators if p not in PAIR_NAMES]

    def label(self, pair: str) -> str:
        """What the page calls a loaded checkpoint: "English → German", or "English → German (OPUS-MT)" for a model
        imported into the folder en-de-opus-mt (any other folder name is shown as it is)."""
        imported = self.translators[pair].metrics.imported is not None
        name = pair.removesuffix("-opus-mt") if imported else pair
        return PAIR_NAMES.get(name, name) + (" (OPUS-MT)" if imported else "")

    def translator(self, pair: str) -> Translator:
        if pair not in self.translators:
            raise InputError(f"unknown language pair {pair!r}; available: {', '.join(self.pairs) or 'none'}")
        return self.translators[pair]


def friendly(fn):
    """Every handler's way to the page. Its figures are sent as the JSON the page receives (serialized); bad input
    (InputError, raised on purpose) becomes its plain message in the page (gr.Error), never a traceback; anything
    else is a bug: logged with its traceback on the server and reported in one sentence. Works on generators
    (streamed updates) too."""
    def failed(e: Exception) -> gr.Error:
        if isinstance(e, gr.Error):
            return e
        if isinstance(e, InputError):  # the user's input: said in the page, no traceback in the server's log
            return gr.Error(str(e), print_exception=False)
        log.exception("%s failed", fn.__qualname__)  # keep the server up, say so in words
        return gr.Error(f"Something went wrong ({type(e).__name__}); please try other settings.")

    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def streamed(*args, **kwargs):
            try:
                for update in fn(*args, **kwargs):
                    yield serialized(update)
            except Exception as e:
                raise failed(e) from None
        return streamed

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return serialized(fn(*args, **kwargs))
        except Exception as e:
            raise failed(e) from None
    return wrapper


def serialized(updates):
    """Updates (a dict of them, or one value) with every plotly figure turned into the JSON the page receives, once:
    a drawn view that many users are sent is serialized one time, not once per user."""
    if isinstance(updates, dict):
        return {c: serialized(u) for c, u in updates.items()}
    return gr.components.plot.PlotData(type="plotly", plot=updates.to_json()) if isinstance(updates, go.Figure) else updates


def copied(updates: dict) -> dict:
    """Cached updates for one more user: gr.update dicts copied (gradio may change them), figures shared."""
    return {c: dict(u) if isinstance(u, dict) else u for c, u in updates.items()}


def restore_hint(path: Path | None) -> str:
    """How to get a checkpoint's files back, in a sentence (empty for a model that was not loaded from files)."""
    if path is None:
        return ""
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    return (f"Restore it with `git checkout -- {shown}` or retrain it with `python -m transformer train "
            f"--data-dir ../shared/data/multi30k --pair {path.name} --out {shown}`.")


class PartlyDrawn(Exception):
    """Raised by a view drawn but for one part: its updates, and a sentence on the part that failed. The page shows
    both and keeps neither in its cache, so the next request tries that part again."""

    def __init__(self, updates: dict, message: str):
        super().__init__(message)
        self.updates, self.message = updates, message


class View:
    """One view of the page. `controls`: what `fill` reads; `outputs`: what it sets for a new translation;
    `pair_inputs` and `pair_outputs`: the same for `on_pair`, a newly chosen checkpoint. `problem` is the view's own
    notice: a view that fails says so there, and the rest of the page goes on working. `shown` is the view's own
    per-user state, {"pair": ..., "fill": result key}: what it shows now; only a handler that draws the view reads
    and writes it."""

    name: str = ""  # set by the page: its key among the views
    controls: list = []
    outputs: list = []
    pair_inputs: list = []
    pair_outputs: list = []
    focus_outputs: list = []  # what `focus` sets besides its outputs

    def focus(self, result, values: dict, where: dict[str, str]) -> dict:
        """The part a click elsewhere asked for (the glance's boxes: `where` holds "kind", "layer", "step"), drawn
        for this translation; a view without parts draws nothing more."""
        return {}

    @property
    def reads(self) -> list:
        """Every component its fill and on_pair read, its own state included."""
        return self.controls + self.pair_inputs + [self.shown]

    @property
    def draws(self) -> list:
        """Every component its fill and on_pair may set, its notice and its state included."""
        return self.outputs + self.pair_outputs + self.focus_outputs + [self.problem, self.shown]

    def notice(self) -> gr.Markdown:
        """The view's problem notice, hidden until something fails, and its state; call it inside the view's tab."""
        self.problem = gr.Markdown(visible=False, elem_classes="problem")
        self.shown = gr.State(None)
        return self.problem

    def guarded(self, make, translator: Translator | None = None) -> tuple[dict, str]:
        """(make()'s updates, "") or, if it fails, ({}, a sentence saying what went wrong): the caller shows it in
        the view's notice, and nothing that failed is kept as drawn."""
        unavailable = "**This view is unavailable:** "
        try:
            return make(), ""
        except PartlyDrawn as e:
            return serialized(e.updates), e.message
        except InputError as e:
            return {}, unavailable + str(e)
        except Exception as e:  # a broken file or a bug: the log has the traceback, the page one sentence
            log.exception("%s failed", type(self).__name__)
            hint = restore_hint(getattr(translator, "path", None))
            return {}, unavailable + f"this view could not be drawn ({type(e).__name__}: {str(e)[:300]}). {hint}"

    def notice_update(self, problems: list[str]) -> dict:
        """The notice showing every part's failure (both of on_pair and fill), or hidden when none failed."""
        return {self.problem: gr.update(value=" ".join(problems), visible=bool(problems))}


# In the browser: open a view by "tab" or "group/inner tab" (the glance's boxes, the lesson's "Go deeper"); a tab's
# button, or its line in the "More tabs" menu of a narrow screen. Part of each script that uses it.
OPEN_VIEW_JS = """
window.tpOpenView = (path, focus) => {
    const tab = (label) => [...document.querySelectorAll('button[role=tab], .overflow-dropdown button')]
        .find(b => b.textContent.trim() === label);
    const [outer, inner] = path.split('/');
    tab(outer)?.click();
    if (inner) setTimeout(() => tab(inner)?.click(), 80);
    if (focus) {  // a part of the view (a glance box's kind and layer, or step): asked for once its tab is open
        window.tpFocus = focus;
        setTimeout(() => document.getElementById('show-part')?.click(), 200);
    }
};
"""


def folded(entry: dict) -> str:
    """A view's mechanism and references, folded until asked for (HTML's own <details>: no component of their own,
    so the page stays as light as before)."""
    parts = [("How it works", entry.get("how", "")), ("References", entry.get("refs", ""))]
    return "\n".join(f"<details><summary>{title}</summary>\n\n{text}\n\n</details>" for title, text in parts if text)


def explained(entry: dict, plain: str | None = None) -> str:
    """What a view says first (its plain words, or `plain` when they carry the checkpoint's numbers), then the
    rest, folded."""
    return (entry["plain"] if plain is None else plain) + "\n\n" + folded(entry)


def kind_radio(value: str) -> gr.Radio:
    """The attention-kind choice the Attention and One head views share."""
    return gr.Radio([(KIND_BUTTONS[kind], kind) for kind in KINDS], value=value, label="Attention")


def layer_choices(translator: Translator) -> list[tuple[str, int]]:
    """(shown from 1, index) of the deeper stack's layers (a view clamps them to the chosen kind's depth)."""
    return [(str(i + 1), i) for i in range(max(translator.cfg.n_encoder_layers, translator.cfg.n_decoder_layers))]


def head_choices(translator: Translator) -> list[tuple[str, int]]:
    """(shown from 1, index) of a layer's heads."""
    return [(str(h + 1), h) for h in range(translator.cfg.n_heads)]


def need(result):
    """The current translation, or a plain message when there is none yet."""
    if result is None:
        raise InputError("translate a sentence first")
    return result


def cards(items: list[tuple[str, str]]) -> str:
    """Titled boxes side by side, every text escaped."""
    return '<div class="cards">' + "".join(
        f'<div class="card"><div class="card-title">{html.escape(t)}</div><div>{html.escape(x)}</div></div>'
        for t, x in items) + "</div>"


def token_diff(before: list[str], after: list[str], before_label: str, after_label: str) -> str:
    """Both token sequences as HTML, with removed tokens struck out and added ones highlighted."""
    def span(tok: str, cls: str) -> str:
        return f'<span class="tok {cls}">{html.escape(tok.replace("▁", " ").strip() or tok)}</span>'

    old, new = figures.token_changes(before, after)
    changed = sum(c for _, c in old) + sum(c for _, c in new)
    return (f'<div class="diff"><div><b>{html.escape(before_label)}</b>: '
            f'{" ".join(span(t, "removed" if c else "same") for t, c in old)}</div>'
            f'<div><b>{html.escape(after_label)}</b>: {" ".join(span(t, "added" if c else "same") for t, c in new)}</div>'
            f"<div>{changed} token{'s' if changed != 1 else ''} changed</div></div>")
