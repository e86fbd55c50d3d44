"""The page's runtime: how a click becomes figures. An event brings every input of the page as a dict, the open
tab's key among them (set by the tabs' select handlers). A handler translates, or finds the same translation made for
anyone (`Context.caches`), and draws what the open tab does not show yet (`Page.draw`): each view's part for the
pair and for the translation, made once for everyone; its `shown` state says what it shows. Late answers are
dropped (`context.Newest`). Every other tab draws itself when opened; a link opens a view by its key.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

import gradio as gr

from playground import links, registry, results
from transformer.errors import InputError

from .context import Context, Newest
from .handlers import beside, friendly, shared
from .panel import TranslatePanel
from .tabs import Tabs
from .view import key_of, values_set

EMPTY = "(Type an English sentence in the box above, then press Enter or Translate.)"
TRANSLATE_JS = "(...args) => tp.translating(args)"  # marks the translation shown as old until the new one lands
CHECK_JS = "(open) => tp.translated(open)"  # after a translation: the tab opened meanwhile, if any, asks to be drawn


@dataclass
class Page:
    demo: gr.Blocks
    ctx: Context
    panel: TranslatePanel
    result: gr.State  # per user: the current results.Result (shared with every user who asked the same)
    tabs: Tabs  # the tabs, and the inputs that say which view is open
    views: dict  # key -> View, in the registry's order
    newest: Newest = field(default_factory=Newest)

    def draw(self, tab: str, result, values: dict) -> dict:
        """What tab `tab` needs that it does not show yet: each of its views' part for the chosen pair and for the
        current translation (View.show)."""
        out = {}
        for view in (self.views[key] for key in registry.tabs().get(tab, [])):
            drawn = view.show(values[self.panel.pair], result, values)
            out, values = out | drawn, values | values_set(drawn)  # a view reads what one drawn before it set
        return out

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
            key = ("panel", result.key, key_of(values, [panel.n_samples]))
            out = shared(self.ctx.caches.views, key, lambda: panel.fill(result, values)) | {self.result: result}
            out |= panel.joined(translator, result, parts, out)  # the views show the first sentence
        except InputError as e:  # bad settings: said in place, and gone with the next good translation
            return {panel.translation: "", panel.notice: html.escape(str(e)), panel.samples: ""}
        out |= self.draw(registry.open_tab(values.get(self.tabs.open)), result, values)
        if self.newest.stale(request, ticket):
            return {}  # the user has asked for a newer translation since: this one would overwrite it
        self.newest.landed(request, ticket, result)
        return out

    @friendly
    def redraw_open(self, values: dict, request: gr.Request | None = None) -> dict:
        """The tab open now shows the user's newest translation: after a translation (the user may have switched
        tabs while it ran), as a tab opens, and again when a newer one landed while it drew (context.Newest)."""
        tab, shown = registry.open_tab(values.get(self.tabs.open)), values.get(self.result)
        result = self.newest.result(request, shown)  # None: a newer one landed, and is no longer kept
        if result is None and shown is not None:
            return {}
        out = self.draw(tab, result, values)
        newest = self.newest.result(request, result)  # a newer one may have landed while this drew
        return out if newest is result else (self.draw(tab, newest, values) if newest is not None else {})

    def opener(self, tab: str | None, group: str | None = None):
        """The select handler of a view's tab (or of a group's, tab None: the view open in it, as its input says):
        it draws what the tab lacks, and says which view is open (the open tab's input, and its group's)."""
        @friendly
        def select(values: dict, request: gr.Request | None = None) -> dict:
            shown = tab or values.get(self.tabs.group_open[group])
            if group is not None and shown not in registry.members(group):  # not one of the group's: its first
                shown = registry.members(group)[0]
            return self.redraw_open(values | {self.tabs.open: shown}, request) | self.tabs.says(shown)
        return select

    @friendly
    def show_part(self, values: dict, request: gr.Request, link: gr.EventData) -> dict:
        """A link's view (link.view, a key) and the part of it asked for (link.focus, "view=attention&kind=cross&
        layer=1&step=4"): its tabs selected, the view drawn, then the part (View.focus), when that view is in the tab."""
        shown = registry.open_tab(link.view)
        out = self.tabs.selected(shown) | self.redraw_open(values | {self.tabs.open: shown}, request)
        where = dict(parse_qsl(link.focus or ""))
        view, result = self.views.get(where.pop("view", "")), values.get(self.result)
        if view is not None and view.name in registry.tabs()[shown] and result is not None:
            out |= {c: beside(out.get(c), value) for c, value in view.focus(result, values, where).items()}
        return out

    @friendly
    def open(self, values: dict, request: gr.Request) -> dict:
        """Page load: a shared link's settings applied (links.read), then the translation (made once per server for
        everyone who opens the same link) in the tab that opens first. A link's own tab is selected here and drawn
        by the event the browser sends next (tp.translated)."""
        panel, lesson = self.panel, self.views["lesson"]
        link = links.read(dict(request.query_params) if request is not None else {}, values, panel, lesson)
        out = {c: link.values[c] for c in [panel.pair, panel.text, lesson.number] + panel.decoding}
        out |= {panel.present: link.present} | (self.tabs.selected(link.opened) if link.opened != registry.FIRST else {})
        try:
            out |= self.show_translation(link.values | {self.tabs.open: registry.FIRST})
        except gr.Error as e:  # e.g. an empty text in the link: the page still opens, and says why
            link.problems.append(str(e.message))
        if link.problems:
            note = "The link's settings were not all usable: " + "; ".join(link.problems) + "."
            out[panel.notice] = " ".join(filter(None, [note, out.get(panel.notice, "")]))
        return out
