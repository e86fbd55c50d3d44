"""The page's runtime: how a click becomes figures, read top-down.

1. **An event starts in the browser** with the page's values. The open view's key is one of them: a hidden input
   that each tab's select handler sets as it draws the tab (a group's: the view open in it, in its own input).
2. **A handler** (Page's methods, each wired by `listen`) gets every input as a dict, and
   - translates, or finds the same translation already made for anyone (`Context.caches.translations`), and
   - draws the views of the open tab (`Page.draw`): each view's part for the pair and for the translation, once;
     the view's `shown` state says what it shows, so opening its tab again sends nothing.
3. **A view's updates** come from `Context.caches.views` when any user has drawn the same view of the same
   translation with the same settings: they are made (and their figures serialized) once for a class.
4. **Late answers are dropped** (`context.Newest`): a translation after which the same user asked for a newer one, or
   a view drawn from an older translation than the user's newest, sends nothing.

Every other tab draws itself when opened (its select event), once per translation. A link (a glance box, the
Lesson's "go deeper", a shared ?view=) opens a view by its key: the server selects its tabs and sets the inputs.
"""
from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

import gradio as gr

from playground import registry, results
from transformer.errors import InputError

from .context import Context, Newest
from .handlers import beside, copied, friendly, serialized
from .panel import TranslatePanel

EMPTY = "(Type an English sentence in the box above, then press Enter or Translate.)"
TRANSLATE_JS = "(...args) => tp.translating(args)"  # marks the translation shown as old until the new one lands
CHECK_JS = "(open) => tp.translated(open)"  # after a translation: the tab opened meanwhile, if any, asks to be drawn


@dataclass
class Page:
    demo: gr.Blocks
    ctx: Context
    panel: TranslatePanel
    result: gr.State  # per user: the current results.Result (shared with every user who asked the same)
    open_tab: gr.Textbox  # hidden: the open view's key, set by each tab's select handler
    group_open: dict  # group key -> a hidden Textbox: the view open inside that group
    views: dict  # key -> View, in the registry's order
    top: gr.Tabs  # the top level of tabs
    group_tabs: dict  # group key -> the gr.Tabs holding its views
    newest: Newest = field(default_factory=Newest)

    # -- drawing what is seen -------------------------------------------------------------------------------------

    def draw(self, tab: str, result, values: dict) -> dict:
        """What tab `tab` needs that it does not show yet: its views' part for the chosen pair and for the current
        translation. Each view's state says what it shows; a part that fails is shown in its notice and is not
        marked as shown, so the next visit tries it again."""
        pair = values[self.panel.pair]
        translator = self.ctx.translator(pair)
        out = {}
        for view in (self.views[key] for key in registry.tabs().get(tab, [])):
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
            if view.outputs and result is not None and shown.get("fill") != result.key:
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
        return copied(self.ctx.caches.views.get(key, lambda: serialized(make())))

    @staticmethod
    def key_of(values: dict, controls: list) -> str:
        return json.dumps([values.get(c) for c in controls], default=str)

    def visible(self, values: dict) -> str:
        """The tab open in the browser as the event started."""
        key = values.get(self.open_tab) or registry.FIRST
        return registry.tab_of(key) if key in registry.BY_KEY else registry.FIRST

    def selected(self, key: str) -> dict:
        """The tabs that show view `key`, selected by their ids, and the inputs that say it is open."""
        entry = registry.entry(registry.tab_of(key))
        out = {self.top: gr.Tabs(selected=entry.group or entry.key)} | self.says(entry.key)
        return out | ({self.group_tabs[entry.group]: gr.Tabs(selected=entry.key)} if entry.group else {})

    def says(self, tab: str) -> dict:
        """The inputs that say tab `tab` is open: the open tab's, and its group's when it sits in one."""
        group = registry.entry(tab).group
        return {self.open_tab: tab} | ({self.group_open[group]: tab} if group else {})

    # -- the handlers ---------------------------------------------------------------------------------------------

    @friendly
    def show_translation(self, values: dict, request: gr.Request | None = None) -> dict:
        """Translate with the panel's settings (or find the same translation already made for anyone) and draw the
        tab that is open; the other tabs draw themselves when opened. values maps each input to its value."""
        ticket = self.newest.asked(request)
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
            result = results.run(translator, pair, parts[0], panel.options(values), self.ctx.caches.translations)
            key = ("panel", result.key, self.key_of(values, [panel.n_samples]))
            out = self.shared(key, lambda: panel.fill(result, values)) | {self.result: result}
            out |= panel.joined(translator, result, parts, out)  # the views show the first sentence
        except InputError as e:  # bad settings: said in place, and gone with the next good translation
            return {panel.translation: "", panel.notice: html.escape(str(e)), panel.samples: ""}
        out |= self.draw(self.visible(values), result, values)
        if self.newest.stale(request, ticket=ticket):
            return {}  # the user has asked for a newer translation since: this one would overwrite it
        self.newest.landed(request, ticket, result.key)
        return out

    @friendly
    def redraw_open(self, values: dict, request: gr.Request | None = None) -> dict:
        """After a translation: the tab open now (the user may have switched while it ran) shows it."""
        result = values.get(self.result)
        out = self.draw(self.visible(values), result, values)
        return {} if result is not None and self.newest.stale(request, key=result.key) else out

    def opener(self, tab: str | None, group: str | None = None):
        """The select handler of a view's tab (or of a group's, tab None: the view open in it, as its input says):
        it draws what the tab lacks, and says which view is open (the open tab's input, and its group's)."""
        @friendly
        def select(values: dict, request: gr.Request | None = None) -> dict:
            shown = tab or values.get(self.group_open[group])
            if group is not None and shown not in registry.members(group):  # not one of the group's: its first
                shown = registry.members(group)[0]
            return self.redraw_open(values | {self.open_tab: shown}, request) | self.says(shown)
        return select

    @friendly
    def show_part(self, values: dict, request: gr.Request, link: gr.EventData) -> dict:
        """A link's view (link.view, a key) and the part of it asked for (link.focus, "view=attention&kind=cross&
        layer=1&step=4"): its tabs selected, the view drawn, then the part (View.focus), when that view is in the tab."""
        shown = registry.tab_of(link.view) if link.view in registry.BY_KEY else registry.FIRST
        out = self.selected(shown) | self.redraw_open(values | {self.open_tab: shown}, request)
        where = dict(parse_qsl(link.focus or ""))
        view, result = self.views.get(where.pop("view", "")), values.get(self.result)
        if view is not None and view.name in registry.tabs()[shown] and result is not None:
            out |= {c: beside(out.get(c), value) for c, value in view.focus(result, values, where).items()}
        return out

    @friendly
    def open(self, values: dict, request: gr.Request) -> dict:
        """Page load: apply a shared link's URL parameters, then show the translation (made once per server for
        everyone who opens the same link) in the tab that opens first. A link's own tab (?lesson=N, ?view=key) is
        selected here and drawn by the event the browser sends next (tp.translated)."""
        panel = self.panel
        query = dict(request.query_params) if request is not None else {}
        values, problems = panel.from_query(values, query)
        out = {c: values[c] for c in [panel.pair, panel.text] + panel.decoding}
        out[panel.present] = query.get("present", "") in ("1", "true", "yes")
        opened = registry.FIRST
        if "lesson" in query:  # the Lesson, at that step
            lesson = self.views["lesson"]
            number, problem = lesson.number_from(query["lesson"])
            values[lesson.number], out[lesson.number], opened = number, number, "lesson"
            problems += [problem] if problem else []
        elif query.get("view") in registry.BY_KEY:
            opened = registry.tab_of(query["view"])
        if "view" in query and query["view"] not in registry.BY_KEY:  # said beside a lesson=N too
            problems.append(f"view={query['view']!r} is not a view of this page")
        if opened != registry.FIRST:
            out |= self.selected(opened)
        try:
            out |= self.show_translation(values | {self.open_tab: registry.FIRST})
        except gr.Error as e:  # e.g. an empty text in the link: the page still opens, and says why
            problems.append(str(e.message))
        if problems:
            note = "The link's settings were not all usable: " + "; ".join(problems) + "."
            out[panel.notice] = " ".join(filter(None, [note, out.get(panel.notice, "")]))
        return out
