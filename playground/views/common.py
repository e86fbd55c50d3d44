"""What every view shares: the loaded checkpoints, user-facing errors, the decoding options from the UI."""
from __future__ import annotations

import contextlib
import difflib
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
from playground.cache import SharedCache
from transformer.errors import InputError
from playground.pieces import KIND_BUTTONS, shown
from transformer.model import KINDS

ROOT = Path(__file__).resolve().parents[2]
EXPLAIN = json.loads((ROOT / "assets" / "explanations.json").read_text(encoding="utf-8"))
PAIR_NAMES = {"en-de": "English → German", "en-fr": "English → French"}
log = logging.getLogger("transformer-playground")


@dataclass
class Context:
    """The server's state shared by every user: every checkpoint, loaded once, where downloads go, and the page's
    caches, each named for what it holds (every one shared by all users, bounded, successes only)."""

    translators: dict[str, Translator]
    downloads: Path  # every download of the page (playground.downloads: one writer, pruned hourly)
    bertviz_scripts: str | list[str] = "inline"  # bertviz_document's scripts: "inline", "cdn" or their URLs
    # translations with their hooked passes (results.Result), by pair, text and decoding settings
    translations: SharedCache = field(default_factory=lambda: SharedCache(32))
    # each view's drawn updates (figures serialized once), by view, translation and the view's settings
    drawn_views: SharedCache = field(default_factory=lambda: SharedCache(256, ttl_s=1800))
    # the Lesson's steps, by translation and step number
    lesson_steps: SharedCache = field(default_factory=lambda: SharedCache(160, ttl_s=1800))

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
    """One view of the page, declared in playground.registry. The base class builds what every view shares, once:
    its tab (or, for a view drawn inside another's tab, a heading), its plain words with "How it works" folded below,
    and its notice; then the view's own `build()` lays out the rest. The hooks are no-ops until a view overrides them:

    - `on_pair(translator, pair, values)`: the updates for a newly chosen checkpoint (reads `pair_inputs`, sets
      `pair_outputs`);
    - `fill(result, values)`: the updates that show a translation (reads `controls`, sets `outputs`);
    - `focus(result, values, where)`: a part asked for by a click elsewhere (sets `focus_outputs` too);
    - `wire(result)`: the view's own events.

    The page calls on_pair and fill when the view's tab is seen, once per pair and per translation, through
    `guarded`: a view that fails says so in its own notice and the rest of the page goes on working. `shown` is the
    view's per-user state, {"pair": ..., "fill": result key}: what it shows now. Handlers return dicts of updates,
    never positional tuples, and can be called directly in tests."""

    explained_below = False  # the glance: its picture first, its words under it

    def __init__(self, entry, ctx: Context, panel):
        self.name, self.label, self.ctx, self.panel = entry.key, entry.label, ctx, panel
        self.controls, self.outputs, self.pair_inputs, self.pair_outputs, self.focus_outputs = [], [], [], [], []
        if entry.inside is None:
            self.tab = gr.Tab(entry.label, id=entry.key, elem_id=f"{entry.key}-tab")
        with self.tab if entry.inside is None else contextlib.nullcontext():
            heading = f"### {entry.label}\n" if entry.inside else ""
            words = self.introduction()
            if words is not None and not self.explained_below:
                self.about = gr.Markdown(heading + words, elem_classes="plain")
            self.problem = gr.Markdown(visible=False, elem_classes="problem")  # hidden until something fails
            self.shown = gr.State(None)
            self.build()
            if words is not None and self.explained_below:
                self.about = gr.Markdown(words, elem_classes="plain")

    def introduction(self) -> str | None:
        """What the view says first: its plain words, then the rest folded. "" for a view whose words carry the
        checkpoint's numbers (it sets `self.about` per pair); None for a view with no words of its own."""
        entry = EXPLAIN.get(self.name)
        return explained(entry) if entry else None

    def build(self) -> None:
        """The view's own components, inside its tab, under its words and notice."""

    def on_pair(self, translator: Translator, pair: str, values: dict) -> dict:
        return {}

    def fill(self, result, values: dict) -> dict:
        return {}

    def focus(self, result, values: dict, where: dict[str, str]) -> dict:
        """The part a click elsewhere asked for (the glance's boxes: `where` holds "kind", "layer", "step"), drawn
        for this translation; a view without parts draws nothing more."""
        return {}

    def wire(self, result: gr.State) -> None:
        """The view's own events (its menus, sliders and buttons)."""

    @property
    def reads(self) -> list:
        """Every component its fill and on_pair read, its own state included."""
        return self.controls + self.pair_inputs + [self.shown]

    @property
    def draws(self) -> list:
        """Every component its fill and on_pair may set, its notice and its state included."""
        return self.outputs + self.pair_outputs + self.focus_outputs + [self.problem, self.shown]

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
        raise InputError("translate a sentence first")
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


def token_diff(before: list[str], after: list[str], before_label: str, after_label: str, unit: str = "piece") -> str:
    """Both sequences as HTML, removed items struck out and added ones highlighted; pieces (unit "piece") written
    as every view writes them (no ▁, a dash inside a word, start and end), words as they are."""
    def span(item: str, first: bool, cls: str) -> str:
        return f'<span class="tok {cls}">{html.escape(shown(item, first) if unit == "piece" else item)}</span>'

    old, new = token_changes(before, after)
    gone, came = sum(c for _, c in old), sum(c for _, c in new)
    counted = lambda n: f"{n} {unit}{'s' if n != 1 else ''}"
    return (f'<div class="diff"><div><b>{html.escape(before_label)}</b>: '
            f'{" ".join(span(t, i == 0, "removed" if c else "same") for i, (t, c) in enumerate(old))}</div>'
            f'<div><b>{html.escape(after_label)}</b>: '
            f'{" ".join(span(t, i == 0, "added" if c else "same") for i, (t, c) in enumerate(new))}</div>'
            f"<div>{counted(gone)} struck out, {counted(came)} new</div></div>")