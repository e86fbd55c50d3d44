"""How a handler is wired and how its answer reaches the page (`listen`, `to_page`), and the View base class: what
every view of the page shares (its tab, words and notice) and how it draws what it lacks (`View.show`)."""
from __future__ import annotations

import contextlib
import functools
import inspect
import json
import logging
import re
from pathlib import Path

import gradio as gr
import plotly.graph_objects as go

from transformer import Translator
from transformer.errors import InputError

from .context import ROOT, Context, Result
from .gradio_internals import Block, component_id, plot_data
from .explanations import EXPLAIN, explained
from .i18n import DEFAULT, ENGLISH, LANGUAGE, Texts, _l, language_of


# -----------------------------------------------------------------------------
# How a handler is wired and how its answer reaches the page: figures serialized once, bad input said in words,
# bugs logged.

log = logging.getLogger("transformer-playground")


def to_page(fn):
    """Every handler's way to the page. Its figures are sent as the JSON the page receives (serialized); bad input
    (InputError, raised on purpose) becomes its plain message in the page (gr.Error), never a traceback; anything
    else is a bug: logged with its traceback on the server and reported in one sentence. Works on generators
    (streamed updates) too."""
    def failed(e: Exception, args: tuple, kwargs: dict) -> gr.Error:
        if isinstance(e, gr.Error):
            return e
        if isinstance(e, InputError):  # the user's input: said in the page (in its language where the catalogue
            # has the sentence), no traceback in the server's log
            request = next((a for a in (*args, *kwargs.values()) if isinstance(a, gr.Request)), None)
            return gr.Error(e.said(Texts(language_of(request))), print_exception=False)
        log.exception("%s failed", fn.__qualname__)  # keep the server up, say so in words
        return gr.Error(f"Something went wrong ({type(e).__name__}); please try other settings.")

    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def streamed(*args, **kwargs):
            began(args)
            try:
                for update in fn(*args, **kwargs):
                    yield serialized(update, file_name(args))
            except Exception as e:
                raise failed(e, args, kwargs) from None
        return streamed

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        began(args)
        try:
            return serialized(fn(*args, **kwargs), file_name(args))
        except Exception as e:
            raise failed(e, args, kwargs) from None
    return wrapper


def began(args: tuple) -> None:
    """A handler of a view built for one visitor has begun (the visitor changed one of its controls): a drawing of
    that view that began before it read the control's old value, and sends nothing of the view (Page.redraw)."""
    if args and isinstance(args[0], View) and args[0].built_on_opening:
        args[0].own_events += 1


def file_name(args: tuple) -> str:
    """What a view's handler draws is saved under: the view's name and the translation's sentence, when the
    handler is a view's and reads a translation (its arguments say)."""
    view = next((a for a in args if isinstance(a, View)), None)
    result = next((a for a in args if isinstance(a, Result)), None)
    return f"{view.name} {result.text}" if view is not None and result is not None else ""


def serialized(updates, name: str = ""):
    """Updates (a dict of them, or one value) with every plotly figure turned into the JSON the page receives, once:
    a drawn view that many users are sent is serialized one time, not once per user. `name`: what the figure's
    camera button saves it as ("attention-two-dogs-run.png", not plotly's "newplot.png")."""
    if isinstance(updates, dict):
        return {c: serialized(u, name) for c, u in updates.items()}
    if not isinstance(updates, go.Figure):
        return updates
    plot = updates.to_json()
    if name:  # plotly.js reads a figure's "config" beside its data and layout (gradio passes it on)
        stem = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60].rstrip("-") or "figure"
        plot = plot[:-1] + ', "config": ' + json.dumps({"toImageButtonOptions": {"filename": stem}}) + "}"
    return plot_data(plot)


def copied(updates: dict) -> dict:
    """Cached updates for one more user: gr.update dicts copied (gradio may change them), figures shared."""
    return {c: dict(u) if isinstance(u, dict) else u for c, u in updates.items()}


def shared(cache, key: tuple, make, name: str = "", view=None) -> dict:
    """Updates made and serialized once for everyone (a SharedCache keeps successes only), copied for each user;
    `name`: what its figures are saved as (serialized). Of a `view` built for each visitor, they are kept by the
    attribute that holds each component (View.parts) and given back for this visitor's components."""
    if view is None:
        return copied(cache.get(key, lambda: serialized(make(), name)))
    kept = cache.get(key, lambda: {view.part_names[component_id(c)]: u
                                   for c, u in serialized(make(), name).items()})
    return copied({view.parts[n]: u for n, u in kept.items()})


def beside(drawn, value):
    """A focus's plain value where drawing already set an update (a menu's new choices): both, the value winning."""
    plain = not isinstance(value, dict) and not hasattr(value, "to_dict")  # not an update, not a figure
    return drawn | {"value": value} if isinstance(drawn, dict) and drawn.get("__type__") == "update" and plain else value


def listen(trigger, handler, inputs: set, outputs: set, **kwargs):
    """Wire `handler(values, request)` to `trigger`: gradio passes a set of inputs as one dict, ordered by creation
    (the open tab, created first, is the first value an event's js sees), and the request by its annotation."""
    @functools.wraps(handler)  # the handler's own signature, which gradio reads (the request, a link's event data)
    def sent(*args):
        return handler(*args) or gr.skip()  # nothing to send: gradio still needs an update per output
    return trigger(sent, inputs, outputs, api_visibility="private", **kwargs)


# -----------------------------------------------------------------------------
# The View base class


def restore_hint(path: Path | None) -> str:
    """How to get a checkpoint's files back, in a sentence (empty for a model that was not loaded from files)."""
    if path is None:
        return ""
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    recipe = ROOT / "recipes" / f"{path.name}.toml"
    again = (f"retrain it with `python -m transformer train --recipe {recipe.relative_to(ROOT)} --out {shown}`"
             if recipe.is_file() else "retrain it from its recipe (docs/training.md)")
    return f"Restore it with `git checkout -- {shown}` or {again}."


class PartlyDrawn(Exception):
    """Raised by a view drawn but for one part: its updates, and a sentence on the part that failed. The page shows
    both and keeps neither in its cache, so the next request tries that part again."""

    def __init__(self, updates: dict, message: str):
        super().__init__(message)
        self.updates, self.message = updates, message


LINKED = "tp.linked(element, trigger, 'open')"  # gr.HTML's js_on_load: its links fire its 'open' event (page.js)


class View:
    """One view of the page, declared in playground.registry. The base class builds what every view shares, once:
    its tab (or, for a view drawn inside another's tab, a heading), its plain words with "How it works" folded below,
    and its notice; then the view's own `build()` lays out the rest. The hooks are no-ops until a view overrides them:

    - `on_pair(translator, pair, values)`: the updates for a newly chosen checkpoint (reads `pair_inputs`, sets
      `pair_outputs`);
    - `fill(result, values)`: the updates that show a translation (reads `controls`, sets `outputs`); a view that only
      draws figures of the translation declares them instead (`figures`);
    - `focus(result, values, where)`: a part asked for by a click elsewhere (sets `focus_outputs` too);
    - `wire(result)`: the view's own events;
    - `starting_from(session)`: a view built for one visitor, set as that visitor's session left it.

    The page calls on_pair and fill when the view's tab is seen, once per pair and per translation, through `show`
    and `guarded`: a view that fails says so in its own notice and the rest of the page goes on working. What it shows
    now ({"pair": ..., "fill": result key}) is kept in the user's `context.Session`. Handlers return dicts of
    updates, never positional tuples, and can be called directly in tests.

    Most views are built for each visitor who opens their top-level tab (`built_on_opening`, playground/page.py:
    the page's components cost every visitor's opening); `tab` is then the tab made for it there."""

    explained_below = False  # the glance: its picture first, its words under it
    figures: dict = {}  # a view that draws only figures of the translation: {its output's attribute: figure(result)}
    built_on_opening = True  # False: built on the page, for every visitor (a view that page-wide events draw)

    def __init__(self, entry, ctx: Context, panel, tab: gr.Tab | None = None):
        self.name, self.label, self.ctx, self.panel = entry.key, entry.label, ctx, panel
        self.own_events = 0  # its own handlers begun (`began`): a visitor's own copy counts that visitor's
        self.controls, self.outputs, self.pair_inputs, self.pair_outputs, self.focus_outputs = [], [], [], [], []
        self.links: list[gr.HTML] = []  # its HTML whose links open other views (made with js_on_load=LINKED)
        own_tab = entry.inside is None and tab is None
        if entry.inside is None:
            self.tab = tab or gr.Tab(_l(entry.label), id=entry.key, elem_id=f"{entry.key}-tab")
        with self.tab if own_tab else contextlib.nullcontext():
            self.inside = entry.inside
            self.heading = self.heading_in(ENGLISH)
            self.introduced = self.introduction()
            # its words and, when a part fails, its notice above them: above the view, or (explained_below) made now
            # and placed under it
            self.about = gr.Markdown(self.heading + (self.introduced or ""), elem_classes="plain",
                                     visible=bool(self.heading or self.introduced), render=not self.explained_below)
            self.build()
            if self.explained_below:
                self.about.render()

    @functools.cached_property
    def parts(self) -> dict:
        """Every component the view holds, by the attribute that holds it ("plot", or "plots.2" for one in a list):
        the same names in every visitor's copy of a view."""
        named, seen = {}, set()
        for name, held in vars(self).items():
            for i, c in enumerate(held if isinstance(held, (list, tuple)) else [held]):
                if isinstance(c, Block) and component_id(c) not in seen:
                    named[f"{name}.{i}"], seen = c, seen | {component_id(c)}
        return named

    @functools.cached_property
    def part_names(self) -> dict:
        """Each component's id -> its name in `parts`."""
        return {component_id(c): n for n, c in self.parts.items()}

    def heading_in(self, _: Texts) -> str:
        """A view drawn inside another's tab is headed by its name."""
        return "### " + _(self.label) + "\n" if self.inside else ""

    def introduction(self, _: Texts = ENGLISH) -> str | None:
        """What the view says first, in the language of `_`: its plain words, then the rest folded. "" for a view
        whose words carry the checkpoint's numbers (it overrides `explanation` and lists `self.about` in its
        pair_outputs); None for a view with no words of its own."""
        entry = EXPLAIN.get(self.name)
        return explained(entry, _=_) if entry else None

    def explanation(self, translator: Translator, _: Texts = ENGLISH) -> str:
        """Its words for this checkpoint: the same for every checkpoint, unless a view overrides this."""
        return (self.introduced if _.language == DEFAULT else self.introduction(_)) or ""

    def build(self) -> None:
        """The view's own components, inside its tab, under its words and notice."""

    def on_pair(self, translator: Translator, pair: str, values: dict) -> dict:
        return {}

    def fill(self, result, values: dict) -> dict:
        return {getattr(self, name): figure(result, _=texts(values)) for name, figure in self.figures.items()}

    def focus(self, result, values: dict, where: dict[str, str]) -> dict:
        """The part a click elsewhere asked for (the glance's boxes: `where` holds "kind", "layer", "step"), drawn
        for this translation; a view without parts draws nothing more."""
        return {}

    def wire(self, result: gr.State) -> None:
        """The view's own events (its menus, sliders and buttons)."""

    def starting_from(self, session) -> None:
        """Built for one visitor (playground/page.py: build_tab): what it starts from of the visitor's
        context.Session."""

    @property
    def reads(self) -> list:
        """Every component its fill and on_pair read."""
        return self.controls + self.pair_inputs

    @property
    def draws(self) -> list:
        """Every component its fill and on_pair may set, its words (and notice) included."""
        return self.outputs + self.pair_outputs + self.focus_outputs + [self.about]

    def show(self, pair: str, result, values: dict, shown: dict) -> tuple[dict, dict]:
        """(updates, what it shows then): what this view lacks (`shown` says what it shows) of the chosen pair and of
        `result` (None: no translation yet), made once for everyone. A part that fails is said in the notice, not
        marked as shown, so that the next visit tries it again. No updates when it lacks nothing."""
        shown, problems, out, drew = dict(shown), [], {}, False
        views, translator = self.ctx.caches.views, self.ctx.translator(pair)
        language = values.get(LANGUAGE, DEFAULT)
        new_pair = shown.get("pair") != pair
        if self.pair_outputs and new_pair:
            key = (self.name, pair, key_of(values, self.pair_inputs), values.get(LANGUAGE))
            out, problem = self.guarded(lambda: shared(views, key, lambda: self.on_pair(translator, pair, values),
                                                       f"{self.name} {pair}", self),
                                        translator, Texts(language))
            values = values | values_set(out)  # the fill reads what its pair's part set
            problems, shown["pair"], drew = [problem] if problem else [], None if problem else pair, True
        if self.outputs and result is not None and shown.get("fill") != result.key:
            key = (self.name, result.key, key_of(values, self.controls), values.get(LANGUAGE))
            drawn, problem = self.guarded(lambda: shared(views, key, lambda: self.fill(result, values),
                                                         f"{self.name} {result.text}", self),
                                          self.ctx.translator(result.pair), Texts(language))
            out |= {c: out[c] | u if isinstance(u, dict) and isinstance(out.get(c), dict) else u  # both: keep both
                    for c, u in drawn.items()}
            problems += [problem] if problem else []
            shown["fill"], drew = None if problem else result.key, True
        if not drew:
            return {}, shown
        # its words, with the notice above them, sent only when they change (a fold the user opened stays open): a
        # failure, a new pair's numbers, or the first drawing in another language than the page was built in
        if (problems or shown.get("notice") or (new_pair and self.about in self.pair_outputs)
                or shown.get("language", DEFAULT) != language):
            out[self.about] = self.notice(problems, translator, Texts(language))
        shown["notice"], shown["language"] = bool(problems), language
        return out, shown

    def guarded(self, make, translator: Translator | None = None, _: Texts = ENGLISH) -> tuple[dict, str]:
        """(make()'s updates, "") or, if it fails, ({}, a sentence saying what went wrong, in the language of `_`):
        the caller shows it in the view's notice, and nothing that failed is kept as drawn."""
        unavailable = _("**This view is unavailable:**") + " "
        try:
            return make(), ""
        except PartlyDrawn as e:
            return serialized(e.updates), e.message
        except InputError as e:
            return {}, unavailable + e.said(_)
        except Exception as e:  # a broken file or a bug: the log has the traceback, the page one sentence
            log.exception("%s failed", type(self).__name__)
            hint = self.hint(translator)
            return {}, unavailable + _("this view could not be drawn ({error}).",
                                       error=f"{type(e).__name__}: {str(e)[:300]}") + f" {hint}"

    def hint(self, translator: Translator | None) -> str:
        """How to get a broken checkpoint's files back; nothing for a model a page brought (it has no files here
        to restore)."""
        uploads = self.ctx.uploads
        if translator is None or (uploads is not None and uploads.holds(translator)):
            return ""
        return restore_hint(getattr(translator, "path", None))

    def notice(self, problems: list[str], translator: Translator, _: Texts = ENGLISH) -> dict:
        """Its words for this checkpoint (in the language of `_`), under a notice of every part's failure (both of
        on_pair and fill) when one failed."""
        words, problem = self.guarded(lambda: self.explanation(translator, _), translator, _)  # a broken file's words
        problems = problems + [problem] if problem and problem not in problems else problems
        notice = f'<div class="problem">\n\n{" ".join(problems)}\n\n</div>\n\n' if problems else ""
        text = notice + self.heading_in(_) + (words or "")
        return gr.update(value=text, visible=bool(text))


def texts(values: dict | None = None, request=None) -> Texts:
    """The language a view draws in: the page's, from an event's values (the runtime adds it) or its request."""
    return Texts(values.get(LANGUAGE, DEFAULT) if values is not None else language_of(request))


def key_of(values: dict, controls: list) -> str:
    """The values of `controls`, as one key of a shared cache."""
    return json.dumps([values.get(c) for c in controls], default=str)


def values_set(updates: dict) -> dict:
    """The values that `updates` sets, by component."""
    return {c: u["value"] for c, u in updates.items() if isinstance(u, dict) and "value" in u}


