"""Transformer Playground: the Gradio page, assembled from one builder per view (views/). The work lives in transformer/."""
from __future__ import annotations

import argparse
import gc
import html
import inspect
import itertools
import json
import os
import shutil
import tempfile
import warnings
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl

import gradio as gr
import torch

from transformer import CheckpointError, Translator
from playground import results
from playground.cache import SharedCache
from playground.bertviz_view import script_files
from transformer.errors import InputError
from transformer.translator import resolve_device
from playground.views.ablation import AblationView
from playground.views.api import register as register_api
from playground.views.attention import AttentionView
from playground.views.beam_tree import BeamTreeView
from playground.views.bertviz import BertvizView
from playground.views.card import CardView
from playground.views.compare import CompareView
from playground.views.common import ROOT, Context, copied, friendly, restore_hint, serialized
from playground.views.families import FamiliesView
from playground.views.glance import GlanceView
from playground.views.inside import InsideHeadView
from playground.views.lesson import LessonView
from playground.views.live import LiveView
from playground.views.positional import PositionalView
from playground.views.rollout import RolloutView
from playground.views.schedule import ScheduleView
from playground.views.steps import StepsView
from playground.views.timeline import TimelineView
from playground.views.translate import TranslatePanel
from playground.views.used import UsedView

CSS = (ROOT / "assets" / "style.css").read_text(encoding="utf-8")


# -----------------------------------------------------------------------------
# Loading: every checkpoint under checkpoints/, once; problems are reported, not fatal


def load_translators(root: Path, device: str, int8: bool = False) -> tuple[dict[str, Translator], list[str]]:
    translators, problems = {}, []
    dirs = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    for path in dirs:
        try:
            translators[path.name] = Translator.load(path, device=device, int8=int8)
        except CheckpointError as e:
            problems.append(f"{e}. {restore_hint(path)}")
    if not dirs:
        problems.append(f"No checkpoint directories under {root}: train one with `python -m transformer train ...`.")
    return translators, problems


# -----------------------------------------------------------------------------
# The page: the translate panel on top, one tab per view. A view is drawn when its tab is seen: a translation
# draws the open tab, and every other tab draws itself when opened, once per translation (or per pair).
# Events may finish in any order: each view keeps its own state of what it shows; which tab is open is read in the
# browser when an event starts (OPEN_JS), never stored; a late answer drawn from an older translation is dropped.


FIRST_TAB = "glance"  # what the page shows under the panel when it opens
OPEN_JS = "(open, ...rest) => [window.tpOpen || '%s', ...rest]" % FIRST_TAB  # the open view, as the browser knows it
# The page's load: a link with ?lesson=N opens the Lesson (the load handler selects its tab)
LOAD_JS = ("(open, ...rest) => { if (new URLSearchParams(location.search).has('lesson')) window.tpOpen = 'lesson'; "
           "return [window.tpOpen || '%s', ...rest]; }" % FIRST_TAB)
# A translation draws the tab open when it starts (one event on the queue per click). Only when the user opened
# another tab meanwhile does the browser ask for that one too, through the hidden redraw button.
# While it runs, the translation shown is marked as old (class "stale"), until the new one lands.
TRANSLATE_JS = ("(open, ...rest) => { window.tpDrawn = window.tpOpen || '%s'; "
                "document.getElementById('translation')?.classList.add('stale'); "
                "return [window.tpDrawn, ...rest]; }" % FIRST_TAB)
CHECK_JS = ("() => { document.getElementById('translation')?.classList.remove('stale'); "
            "if ((window.tpOpen || '%s') !== window.tpDrawn) document.getElementById('redraw-open')?.click(); }"
            % FIRST_TAB)


def selecting_js(name: str, group: str | None, inner: bool) -> str:
    """What a tab's select does in the browser before its handler runs: remember which view is open (and, inside a
    group, which inner tab), then send that as the handler's first input."""
    if group is not None and not inner:  # the group's own tab: its inner tab that was open last
        remember = f"window.tpOpen = (window.tpInner || {{}})[{json.dumps(group)}] || {json.dumps(name)};"
    elif group is not None:
        remember = (f"window.tpInner = window.tpInner || {{}}; window.tpInner[{json.dumps(group)}] = "
                    f"{json.dumps(name)}; window.tpOpen = {json.dumps(name)};")
    else:
        remember = f"window.tpOpen = {json.dumps(name)};"
    return f"(open, ...rest) => {{ {remember} return [window.tpOpen, ...rest]; }}"


# A part of a view asked for (a glance box: tpOpenView's focus, once its tab is open) rides along after "?"
FOCUS_JS = ("(open, ...rest) => { const focus = window.tpFocus; window.tpFocus = null; "
            "return [(window.tpOpen || '%s') + (focus ? '?' + focus : ''), ...rest]; }" % FIRST_TAB)


@dataclass
class Page:
    demo: gr.Blocks
    ctx: Context
    panel: TranslatePanel
    result: gr.State  # per user: the current results.Result (shared with every user who asked the same)
    open_tab: gr.Textbox  # hidden: the open view's name, written by the browser as each event starts
    views: dict  # name -> View
    tabs: dict  # tab name -> the names of the views drawn in it
    groups: dict  # group label -> its tabs, the first one open by default
    results: SharedCache  # translations and their hooked passes, for every user
    top: gr.Tabs  # the top level of tabs: a link with ?lesson=N opens the Lesson
    newest: OrderedDict = field(default_factory=OrderedDict)  # session -> (its newest translate request, result key)

    # -- drawing what is seen -----------------------------------------------------------

    def draw(self, tab: str, result, values: dict) -> dict:
        """What tab `tab` needs that it does not show yet: its views' part for the chosen pair and for the current
        translation. Drawn once per translation (and per pair); opening the tab again sends nothing. Each view's
        state says what it shows; a part that fails is shown in its notice and is not marked as shown."""
        pair = values[self.panel.pair]
        translator = self.ctx.translator(pair)
        out = {}
        for view in (self.views[name] for name in self.tabs.get(tab, [])):
            shown = dict(values.get(view.shown) or {})
            problems, drew = [], False
            if view.pair_outputs and shown.get("pair") != pair:
                key = (view.name, pair, self.key_of(values, view.pair_inputs))
                updates, problem = view.guarded(lambda: self.shared(key, lambda: view.on_pair(translator, pair, values)),
                                                translator)
                out |= updates
                values = values | {c: u["value"] for c, u in updates.items() if isinstance(u, dict) and "value" in u}
                problems += [problem] if problem else []
                shown["pair"] = None if problem else pair
                drew = True
            if hasattr(view, "fill") and result is not None and shown.get("fill") != result.key:
                key = (view.name, result.key, self.key_of(values, view.controls))
                owner = self.ctx.translator(result.pair)
                drawn, problem = view.guarded(lambda: self.shared(key, lambda: view.fill(result, values)), owner)
                out |= {c: out[c] | u if isinstance(u, dict) and isinstance(out.get(c), dict) else u  # both: keep both
                        for c, u in drawn.items()}
                problems += [problem] if problem else []
                shown["fill"] = None if problem else result.key
                drew = True
            if drew:
                out |= view.notice_update(problems) | {view.shown: shown}
        return out

    def shared(self, key: tuple, make) -> dict:
        """A drawn view's updates from the shared cache (successes only); gr.update dicts are copied."""
        return copied(self.ctx.drawn.get(key, lambda: serialized(make())))

    @staticmethod
    def key_of(values: dict, controls: list) -> str:
        return json.dumps([values.get(c) for c in controls], default=str)

    # -- late answers ----------------------------------------------------------------------

    def asked(self, request) -> int | None:
        """A new translate request of this user's session: its number (None outside a browser session)."""
        session = getattr(request, "session_hash", None)
        if session is None:
            return None
        ticket = next(TICKETS)
        self.newest[session] = (ticket, None)
        self.newest.move_to_end(session)
        while len(self.newest) > 10_000:  # sessions long gone
            self.newest.popitem(last=False)
        return ticket

    def stale(self, request, ticket: int | None = None, key: str | None = None) -> bool:
        """True for an answer the user no longer waits for: a translation after which a newer one was asked for,
        or a view drawn from another translation than the session's newest finished one."""
        session = getattr(request, "session_hash", None)
        if session is None or session not in self.newest:
            return False
        newest_ticket, newest_key = self.newest[session]
        if ticket is not None:
            return ticket != newest_ticket
        return key is not None and newest_key is not None and key != newest_key

    # -- the handlers ------------------------------------------------------------------------

    @friendly
    def show_translation(self, values: dict, request: gr.Request | None = None) -> dict:
        """Translate with the panel's settings (or find the same translation already made for anyone) and draw the
        tab that is open; the other tabs draw themselves when opened. values maps each input to its value."""
        ticket = self.asked(request)
        panel = self.panel
        if not values[panel.text].strip():  # said where the translation goes; the views keep what they show, and say so
            previous = values.get(self.result)
            kept = (f"The box is empty: the pictures below still show the last sentence translated, "
                    f"“{html.escape(previous.text)}”." if previous is not None else "")
            return {panel.translation: EMPTY, panel.notice: kept, panel.samples: ""}
        pair = values[panel.pair]
        translator = self.ctx.translator(pair)
        parts = results.sentences(values[panel.text])  # the model learned single sentences: one at a time
        try:
            result = results.run(translator, pair, parts[0], panel.options(values), self.results)
            key = ("panel", result.key, self.key_of(values, [panel.n_samples]))
            out = self.shared(key, lambda: panel.fill(result, values)) | {self.result: result}
            out |= panel.joined(translator, result, parts, out)  # the views show the first sentence
        except InputError as e:  # bad settings: said in place, and gone with the next good translation
            return {panel.translation: "", panel.notice: html.escape(str(e)), panel.samples: ""}
        out |= self.draw(self.visible(values), result, values)
        if self.stale(request, ticket=ticket):
            return {}  # the user has asked for a newer translation since: this one would overwrite it
        if ticket is not None:
            self.newest[request.session_hash] = (ticket, result.key)
        return out

    @friendly
    def redraw_open(self, values: dict, request: gr.Request | None = None) -> dict:
        """After a translation: the tab open now (the user may have switched while it ran) shows it."""
        result = values.get(self.result)
        out = self.draw(self.visible(values), result, values)
        return {} if result is not None and self.stale(request, key=result.key) else out

    def visible(self, values: dict) -> str:
        open_tab = (values.get(self.open_tab) or FIRST_TAB).partition("?")[0]  # after "?": a part asked for
        return open_tab if open_tab in self.tabs else FIRST_TAB

    def opener(self, tab: str | None, group: str | None = None):
        """The select handler of a tab (or of a group of tabs: then its open inner tab, as the browser says)."""
        @friendly
        def select(values: dict, request: gr.Request | None = None) -> dict:
            shown = self.visible(values) if tab is None else tab
            if group is not None and shown not in self.groups[group]:
                shown = self.groups[group][0]
            return self.redraw_open(values | {self.open_tab: shown}, request)
        return select

    @friendly
    def show_part(self, values: dict, request: gr.Request | None = None) -> dict:
        """A glance box's part ("?view=attention&kind=cross&layer=1&step=4" after the open tab's name): the open tab
        drawn, then that view's part (View.focus), when the view is in it."""
        shown = self.visible(values)
        out = self.redraw_open(values | {self.open_tab: shown}, request)
        where = dict(parse_qsl((values.get(self.open_tab) or "").partition("?")[2]))
        view, result = self.views.get(where.pop("view", "")), values.get(self.result)
        if view is not None and view.name in self.tabs[shown] and result is not None:
            out |= {c: beside(out.get(c), value) for c, value in view.focus(result, values, where).items()}
        return out

    @friendly
    def open(self, values: dict, request: gr.Request) -> dict:
        """Page load: apply a shared link's URL parameters, then show the translation (made once per server for
        everyone who opens the same link) in the tab that opens first."""
        panel = self.panel
        query = dict(request.query_params) if request is not None else {}
        values, problems = panel.from_query(values, query)
        out = {c: values[c] for c in [panel.pair, panel.text] + panel.decoding}
        out[panel.present] = query.get("present", "") in ("1", "true", "yes")
        opened = FIRST_TAB
        if "lesson" in query:  # the Lesson, at that step (LOAD_JS has told the browser it is open)
            lesson = self.views["lesson"]
            number, problem = lesson.number_from(query["lesson"])
            values[lesson.number], out[lesson.number], opened = number, number, "lesson"
            out[self.top] = gr.Tabs(selected="lesson")
            problems += [problem] if problem else []
        try:
            out |= self.show_translation(values | {self.open_tab: opened})
        except gr.Error as e:  # e.g. an empty text in the link: the page still opens, and says why
            problems.append(str(e.message))
        if problems:
            note = "The link's settings were not all usable: " + "; ".join(problems) + "."
            out[panel.notice] = " ".join(filter(None, [note, out.get(panel.notice, "")]))
        return out


def beside(drawn, value):
    """A focus's plain value where drawing already set an update (a menu's new choices): both, the value winning."""
    plain = not isinstance(value, dict) and not hasattr(value, "to_dict")  # not an update, not a figure
    return drawn | {"value": value} if isinstance(drawn, dict) and drawn.get("__type__") == "update" and plain else value


TICKETS = itertools.count(1)
EMPTY = "(Type an English sentence in the box above, then press Enter or Translate.)"


def listen(trigger, handler, inputs: set, outputs: set, js: str | None = None, **kwargs):
    """Wire `handler(values, request)` to `trigger` with the open tab as its first input: OPEN_JS (or `js`) writes
    what the browser has open into it as the event starts, so no handler relies on a stored copy."""
    page_open = next(c for c in inputs if getattr(c, "elem_id", None) == "open-tab")
    ordered = [page_open] + sorted(inputs - {page_open}, key=id)

    def fn(*args):
        out = handler(dict(zip(ordered, args)), args[-1])
        return out or {next(iter(outputs)): gr.skip()}  # nothing to send: gradio needs one component named

    # gradio passes the request to a positional parameter annotated gr.Request: one per input, then the request
    fn.__signature__ = inspect.Signature(
        [inspect.Parameter(f"input_{i}", inspect.Parameter.POSITIONAL_ONLY) for i in range(len(ordered))]
        + [inspect.Parameter("request", inspect.Parameter.POSITIONAL_ONLY, annotation=gr.Request)])
    fn.__annotations__ = {"request": gr.Request}
    return trigger(fn, ordered, outputs, js=js or OPEN_JS, api_visibility="private", **kwargs)


def build_page(translators: dict[str, Translator], problems: list[str] | None = None,
               bertviz_offline: bool = True, cache_size: int = 32) -> Page:
    """The whole page; bertviz_offline=False loads bertviz's scripts from its CDN instead of the app's copies.
    cache_size: translations kept for every user (with their hooked passes; see docs/many-users.md)."""
    scripts = "cdn"
    if bertviz_offline:  # jQuery, d3 and the shim: static files of the app, sent once, cached by the browser
        gr.set_static_paths([str(p) for p in script_files()])
        scripts = [f"gradio_api/file={p}" for p in script_files()]
    ctx = Context(translators, Path(tempfile.mkdtemp(prefix="transformer-playground-")), scripts,
                  SharedCache(8 * cache_size, ttl_s=1800))
    weakref.finalize(ctx, shutil.rmtree, ctx.downloads, ignore_errors=True)  # at exit, or when the page goes
    with gr.Blocks(title="Transformer Playground", delete_cache=(3600, 3600)) as demo:
        gr.HTML('<div id="masthead"><h1>Transformer Playground</h1><p>Type an English sentence and watch a small '
                "Transformer translate it: where it looks, how sure it is, and how it learned.</p></div>",
                apply_default_css=False)
        for problem in problems or []:
            gr.Markdown(f"**Checkpoint problem:** {problem}", elem_classes="problem")
        result = gr.State(None)
        open_tab = gr.Textbox(FIRST_TAB, visible=False, elem_id="open-tab")
        redraw = gr.Button("Redraw the open tab", visible="hidden", elem_id="redraw-open")  # clicked by CHECK_JS
        part = gr.Button("Show the part asked for", visible="hidden", elem_id="show-part")  # by tpOpenView
        panel = TranslatePanel(ctx)
        groups = {}

        def group(label: str, make) -> dict:
            """A top-level tab holding several views, each in a tab of its own: the top level fits one line."""
            with gr.Tab(label, id=label) as tab, gr.Tabs():  # ids of our own: the browser tells the tabs apart
                made = make()
            groups[label] = (tab, list(made))
            return made

        with gr.Tabs() as top:
            views = {"glance": GlanceView(), "lesson": LessonView(ctx), "steps": StepsView()}
            with views["steps"].tab:
                views["beam_tree"] = BeamTreeView(ctx)
            views |= group("Attention", lambda: {  # where the model looks, and how those numbers are made
                "attention": AttentionView(ctx), "inside": InsideHeadView(ctx), "families": FamiliesView(),
                "rollout": RolloutView(ctx), "bertviz": BertvizView(ctx)})
            views |= group("Beyond attention", lambda: {"used": UsedView(ctx), "ablation": AblationView(ctx)})
            views |= group("Training", lambda: {  # how the model learns
                "schedule": ScheduleView(ctx, panel.pair), "timeline": TimelineView(ctx, panel.pair),
                "live": LiveView()})
            views |= group("The model", lambda: {  # what it is made of, and other models beside it
                "positional": PositionalView(ctx, panel.pair), "compare": CompareView(ctx), "card": CardView()})
        for name, view in views.items():
            view.name = name
        tabs = {name: [name] for name in views if name != "beam_tree"} | {"steps": ["steps", "beam_tree"]}
        page = Page(demo, ctx, panel, result, open_tab, views, tabs, {g: names for g, (_, names) in groups.items()},
                    SharedCache(cache_size), top)

        panel.wire()
        for view in views.values():
            if hasattr(view, "wire"):
                view.wire(result)
        every = list(views.values())
        inputs = set(panel.controls) | {c for v in every for c in v.reads} | {result, open_tab}
        outputs = {c for v in every for c in v.draws} | set(panel.outputs) | {result}
        triggers = (panel.go.click, panel.text.submit, panel.picked.then,  # Enter, an example, another pair,
                    panel.pair.input, panel.reseeded.then, panel.compared.then)  # New sample, the comparison
        for trigger in triggers:
            translated = listen(trigger, page.show_translation, inputs, outputs, js=TRANSLATE_JS)
            translated.then(None, js=CHECK_JS)  # in the browser: no second event unless the open tab changed
        listen(redraw.click, page.redraw_open, inputs, outputs - set(panel.outputs) - {result}, show_progress="hidden",
               trigger_mode="always_last")  # a click while one is pending still runs, after it: the newest wins
        listen(part.click, page.show_part, inputs, outputs - set(panel.outputs) - {result}, js=FOCUS_JS,
               show_progress="hidden", trigger_mode="always_last")

        def on_select(tab: gr.Tab, handler, names: list[str], js: str) -> None:
            """tab's select event: it reads and sets what the views it may draw read and set."""
            drawn = [views[n] for name in names for n in tabs[name]]
            listen(tab.select, handler, {open_tab, panel.pair, result} | {c for v in drawn for c in v.reads},
                   {c for v in drawn for c in v.draws}, js=js)

        group_of = {name: label for label, (_, names) in groups.items() for name in names}
        for name in tabs:
            group = group_of.get(name)
            on_select(views[name].tab, page.opener(name, group), [name], selecting_js(name, group, inner=True))
        for label, (tab, names) in groups.items():
            on_select(tab, page.opener(None, label), names, selecting_js(names[0], label, inner=False))
        if ctx.pairs:  # the page opens translated, with a shared link's settings when it has them
            opened = (outputs | {panel.pair, panel.text, panel.present, top, views["lesson"].number}
                      | set(panel.decoding))
            listen(demo.load, page.open, inputs, opened, js=LOAD_JS,
                   concurrency_limit=4)  # served from the caches: a class opening at once waits little
        register_api(ctx)
    return page


def build_demo(translators: dict[str, Translator], problems: list[str] | None = None,
               bertviz_offline: bool = True) -> gr.Blocks:
    return build_page(translators, problems, bertviz_offline).demo


# -----------------------------------------------------------------------------
# Serving


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Serve the Transformer Playground.")
    on_space = bool(os.environ.get("SPACE_ID"))  # a Hugging Face Space must bind every interface
    parser.add_argument("--checkpoints", type=Path, default=ROOT / "checkpoints")
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda (falls back to cpu with a warning)")
    parser.add_argument("--host", default="0.0.0.0" if on_space else "127.0.0.1")
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", 7860)))
    parser.add_argument("--share", action="store_true", help="also serve through a public gradio.live link")
    parser.add_argument("--int8", action="store_true",
                        help="dynamic int8 feed-forward layers and output projection (CPU only; faster on batches)")
    parser.add_argument("--threads", type=int, default=1,
                        help="intra-op threads for every request (the queue runs two at once; docs/many-users.md)")
    parser.add_argument("--bertviz-cdn", action="store_true",
                        help="load bertviz's scripts from its CDN (smaller pages) instead of the local copies")
    return parser.parse_args(argv)


def serving_device(requested: str) -> str:
    """The device to ask for. ZeroGPU lends a GPU only inside @spaces.GPU calls and may answer "CUDA" outside
    them too: there `auto` means the CPU (the model is tiny), so no page depends on a GPU quota."""
    return "cpu" if requested == "auto" and os.environ.get("SPACES_ZERO_GPU") else requested


def main() -> None:
    args = parse_args()
    torch.set_num_threads(max(1, args.threads))  # one core per request: two requests at once fill two cores
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        device = resolve_device(serving_device(args.device))
    for w in caught:
        print(f"warning: {w.message}")
    if args.int8 and device.type != "cpu":
        print("warning: int8 runs on the CPU only; using the CPU")
        device = resolve_device("cpu")
    translators, problems = load_translators(args.checkpoints, str(device), int8=args.int8)
    for problem in problems:
        print(f"warning: {problem}")
    demo = build_demo(translators, problems, bertviz_offline=not args.bertviz_cdn)
    # The models and the page live as long as the server: out of the garbage collector's sight, so that its full
    # passes (triggered by every request's allocations) do not walk hundreds of thousands of objects each time
    gc.freeze()
    demo.queue(default_concurrency_limit=2)
    demo.launch(server_name=args.host, server_port=args.port, share=args.share, css=CSS,
                theme=gr.themes.Default(font=[gr.themes.Font("system-ui"), "sans-serif"]))


if __name__ == "__main__":
    main()
