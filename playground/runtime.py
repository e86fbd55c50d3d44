"""The page's runtime: how a click becomes figures. Each browser session's page lives on the server
(`context.Session`): which view is open, the newest translate request, what each view shows. An event brings only
the inputs it reads, as a dict, and returns only what changed.

- Translate draws the panel and, when the first tab is open, that tab; another open tab is told to draw itself
  (the signal, a gr.State: its change event draws the tab the session has open).
- A tab draws what it lacks when it is selected or signalled (`Page.redraw`); switching back sends nothing.
- Late answers are dropped, and a tab drawn from an older translation than the newest draws the newest (`Session`).
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl

import gradio as gr

from playground import context, links, registry
from transformer.errors import InputError
from transformer.translator import MAX_SENTENCES, sentences

from .context import TICKETS, Context, Session, Sessions
from .view import beside, to_page, key_of, serialized, shared, values_set
from .panel import TranslatePanel
from .tabs import Tabs
from .i18n import LANGUAGE, N_, Texts

EMPTY = N_("(Type an English sentence in the box above, then press Enter or Translate.)")


@dataclass
class Page:
    demo: gr.Blocks
    ctx: Context
    panel: TranslatePanel
    result: gr.State  # per user: the current context.Result (shared with every user who asked the same)
    tabs: Tabs  # the tabs, and the signal that draws the open one
    views: dict  # key -> View, in the registry's order (of a view built for each visitor who opens its tab: a copy
    # built off the page, for tools and tests; each visitor's own is wired in its tab's gr.render, playground/page.py)
    classroom: object = None  # the class panel (playground/classroom/panel.py), for tools and tests: it listens to
    # the page's events, and nothing here calls it
    loaders: list = field(default_factory=list)  # what else opening the page does: f(query, values, request) ->
    # updates, run before it translates (a class's link joins the class: playground/classroom/panel.py)
    places: list = field(default_factory=list)  # where a page comes back to: f(query, values) -> the query it opens
    # with, as a link's (a teacher's page: the place their running class kept, after a restart or on another replica)

    @property
    def sessions(self) -> Sessions:
        return self.ctx.sessions

    @property
    def translated(self) -> set:
        """What a translation sets: the panel's outputs, the user's translation, and the signal to the open tab."""
        return set(self.panel.outputs) | {self.result, self.tabs.signal}

    @property
    def first(self) -> list:
        """The first tab's views, drawn with a translation when that tab is open."""
        return [self.views[k] for k in registry.tabs()[registry.FIRST]]

    @property
    def on_page(self) -> dict:
        """The views built on the page, for every visitor (the rest are built for a visitor who opens their tab)."""
        return {key: view for key, view in self.views.items() if not view.built_on_opening}

    def draw(self, session: Session, tab: str, result, values: dict, views: dict | None = None) -> tuple[dict, dict]:
        """(updates, marks): what tab `tab` needs that it does not show yet, each of its views (of `views`, by default
        the page's) part for the chosen pair and for `result` (View.show), and what each view then shows (committed
        by the caller once the updates are sure to be sent)."""
        out, marks, values = {}, {}, values | {LANGUAGE: session.language}
        for view in self.of_tab(tab, views):
            drawn, marks[view.name] = view.show(values[self.panel.pair], result, values, session.shown.get(view.name, {}))
            out, values = out | drawn, values | values_set(drawn)  # a view reads what one drawn before it set
        return out, marks

    def of_tab(self, tab: str, views: dict | None = None) -> list:
        """The views of `views` (by default the page's) that tab `tab` shows, in its order."""
        views = self.views if views is None else views
        return [views[key] for key in registry.tabs()[tab] if key in views]

    @to_page
    def show_translation(self, values: dict, request: gr.Request | None = None, which: int | None = None) -> dict:
        """Translate with the panel's settings (or find the same translation already made for anyone); the first
        tab, when open, is drawn here, and any other open tab is signalled to draw itself. The views show the text's
        first sentence, or sentence `which` (its menu under the translation)."""
        session = self.sessions.of(request)
        ticket = session.ask()
        panel = self.panel
        _ = Texts(session.language)
        if not values[panel.text].strip():  # said where the translation goes; the views keep what they show, and say so
            previous = values.get(self.result)
            kept = (_("The box is empty: the pictures below still show the last sentence translated, {sentence}.",
                      sentence=_.quoted(html.escape(previous.text))) if previous is not None else "")
            return {panel.translation: _(EMPTY), panel.notice: kept, panel.samples: "",
                    panel.which: gr.update(visible=False)}
        pair = values[panel.pair]
        translator = self.ctx.translator(pair)
        parts = sentences(values[panel.text])  # the model learned single sentences: one at a time
        shown = which if isinstance(which, int) and 0 <= which < min(len(parts), MAX_SENTENCES) else 0
        try:
            result = context.run(translator, pair, parts[shown], panel.options(values), self.ctx.caches.translations,
                                 self.ctx.batcher)
            key = ("panel", result.key, key_of(values, [panel.n_samples]), session.language)
            out = shared(self.ctx.caches.views, key, lambda: panel.fill(result, values | {LANGUAGE: session.language}))
            out |= {self.result: result} | panel.joined(translator, result, parts, shown,  # the views show one
                                                        session.language)  # sentence: `shown`
            out |= panel.sentence_menu(parts, shown, not session.panel_only)
        except InputError as e:  # bad settings: said in place, and gone with the next good translation
            return {panel.translation: "", panel.notice: html.escape(e.said(_)), panel.samples: "",
                    panel.which: gr.update(visible=False)}
        drawn, marks = {self.tabs.signal: ticket}, {}
        if session.panel_only:  # e.g. a student's page in a class
            drawn = {}
        elif session.tab == registry.FIRST:  # where a class is: drawn with the translation, one event
            drawn, marks = self.draw(session, registry.FIRST, result, values)
        if session.stale(ticket):
            return {}  # the user has asked for a newer translation since: this one would overwrite it
        session.land(ticket, result)
        session.shown.update(marks)
        return out | drawn

    @to_page
    def show_sentence(self, values: dict, request: gr.Request | None = None) -> dict:
        """Another sentence of the text chosen in the menu under the translation: the views show it."""
        return self.show_translation(values, request, which=values.get(self.panel.which))

    def redraw(self, session: Session, tab: str, values: dict, views: dict | None = None) -> dict:
        """Tab `tab` shows the user's newest translation, and the part a link asked for: as it opens, when signalled
        after a translation, and again when a newer translation landed while it drew (its views of `views`)."""
        shown = values.get(self.result)
        result = session.newest(shown)  # None: a newer one landed, and is no longer kept
        if result is None and shown is not None:
            return {}
        drawing = self.of_tab(tab, views)
        begun = [view.own_events for view in drawing]
        out, marks = self.draw(session, tab, result, values, views)
        newest = session.newest(result)  # a newer one may have landed while this drew
        if newest is not result:
            if newest is None:
                return {}
            (out, marks), result = self.draw(session, tab, newest, values, views), newest
        for view, before in zip(drawing, begun):  # a control of it changed meanwhile: its own handler draws it
            if view.own_events != before:
                out = {c: u for c, u in out.items() if c not in view.draws}
                marks.pop(view.name, None)
        session.shown.update(marks)
        return out | self.focused(session, tab, result, values, out, views)

    def focused(self, session: Session, tab: str, result, values: dict, drawn: dict, views: dict | None = None) -> dict:
        """The part a link asked for (Session.focus: "kind=cross&layer=1&step=4" of a view), when its view is in
        this tab (and in `views`) and there is a translation to show it for."""
        key, where = session.focus or ("", {})
        view = (self.views if views is None else views).get(key)
        if view is None or key not in registry.tabs()[tab] or result is None:
            return {}
        session.focus = None
        part = serialized(view.focus(result, values | {LANGUAGE: session.language}, where), f"{view.name} {result.text}")
        return {c: beside(drawn.get(c), value) for c, value in part.items()}

    def tab_drawer(self, tab: str | None = None, group: str | None = None, views: dict | None = None, wake=None,
                   select: gr.Tabs | None = None):
        """The drawing of a view's tab on its select event (tab None and a group: a group's tab, which shows the view
        open in it; neither: the tab the session has open, on the signal), of its views in `views` (by default the
        page's). It says which view is open (Session.tab, and its group's). `wake(session, view)`: what else opening
        that view sets (Tabs.wake: a tab built for each visitor is built or told to draw); `select`: a group's tabs
        built for this visitor, selected to the view drawn when a link asked for it (Session.linked)."""
        @to_page
        def shown_tab(values: dict, request: gr.Request | None = None) -> dict:
            session = self.sessions.of(request)
            shown = tab or (session.group_tab.get(group, registry.members(group)[0]) if group else session.tab)
            self.mark_tab(session, shown)
            out = self.redraw(session, shown, values, views)
            if select is not None and session.linked == shown:  # a link's view: its tab selected (never the
                session.linked = None  # user's own choice undone by a late answer)
                out[select] = gr.Tabs(selected=shown)
            return out | (wake(session, shown) if wake else {})
        return shown_tab

    @staticmethod
    def mark_tab(session: Session, tab: str) -> None:
        session.tab = tab
        group = registry.entry(tab).group
        if group is not None:
            session.group_tab[group] = tab

    @to_page
    def show_part(self, values: dict, request: gr.Request, link: gr.EventData) -> dict:
        """A link's view (link.view, a key) and the part of it asked for (link.focus, "view=attention&kind=cross&
        layer=1&step=4"): its tabs selected, and the tab signalled to draw it with that part."""
        session, tab = self.sessions.of(request), registry.open_tab(link.view)
        where = dict(parse_qsl(link.focus or ""))
        session.focus = (where.pop("view", ""), where)
        self.mark_tab(session, tab)
        session.linked = tab
        return self.tabs.selected(tab) | {self.tabs.signal: next(TICKETS)}

    @to_page
    def load(self, values: dict, request: gr.Request) -> dict:
        """Page load: a shared link's settings applied (links.read), then the translation (made once per server for
        everyone who opens the same link) in the first tab. A link's own tab is selected and signalled to draw. The
        page's `loaders` run first (a class's link joins the class)."""
        panel, session = self.panel, self.sessions.of(request)
        query = dict(request.query_params) if request is not None else {}
        for place in self.places:
            query = place(query, values)
        link = links.read(query, values, panel, self.views["lesson"])
        # only what the link changes: a page answered late (30 phones opening at once) keeps what was typed meanwhile
        out = {c: link.values[c] for c in [panel.pair, panel.text] + panel.decoding if link.values[c] != values[c]}
        session.lesson_step = link.step or session.lesson_step
        out |= {panel.present: link.present}
        for loader in self.loaders:
            out |= loader(query, values, request)
        try:  # unless Translate was clicked before this load was answered: that translation is the newer
            if session.ticket is None:
                out |= self.show_translation(link.values, request, which=link.sentence)
        except gr.Error as e:  # e.g. an empty text in the link: the page still opens, and says why
            link.problems.append(str(e.message))
        if link.tab != registry.FIRST:
            self.mark_tab(session, link.tab)
            session.linked = link.tab
            out |= self.tabs.selected(link.tab) | {self.tabs.signal: next(TICKETS)}
        if link.problems:
            note = "The link's settings were not all usable: " + "; ".join(link.problems) + "."
            out[panel.notice] = " ".join(filter(None, [note, out.get(panel.notice, "")]))
        return out

    def bringer(self, card=None):
        """The opening of a model uploaded on Model card `card` (a visitor's; by default the page's copy,
        playground.uploads): checked and opened for this session, chosen in its menu, and the sentence translated
        with it; a refusal said in place, the page as it was."""
        @to_page
        def bring_model(values: dict, request: gr.Request | None = None) -> dict:
            shown, panel = card or self.views["card"], self.panel
            upload = values.get(shown.bring)
            if not upload:
                return {}
            path = getattr(upload, "path", upload)  # a path (gradio's upload), or a FileData
            try:
                brought = self.ctx.uploads.add(getattr(request, "session_hash", None) or "", path,
                                               getattr(upload, "orig_name", None) or Path(path).name)
            except InputError as e:
                return {shown.brought: f"**Not loaded:** {html.escape(str(e))}"}
            choices = self.ctx.menu([(brought.label, brought.key)])
            out = self.show_translation(values | {panel.pair: brought.key}, request)
            size = sum(p.numel() for p in brought.translator.model.parameters())
            return out | {panel.pair: gr.update(choices=choices, value=brought.key),
                          shown.brought: f"**{html.escape(brought.label)}** is loaded ({size:,} parameters): it is "
                                         "chosen in the language menu above, and every view shows it. It goes when "
                                         "this page closes."}
        return bring_model

    def bring_model(self, values: dict, request: gr.Request | None = None) -> dict:
        """A model uploaded on the page's copy of the Model card (for tools and tests: `bringer`)."""
        return self.bringer()(values, request)

    def forget_models(self, request: gr.Request) -> None:
        """The page closed: the model it brought goes, with its files."""
        self.ctx.uploads.drop(getattr(request, "session_hash", None) or "")

    @to_page
    def share(self, values: dict, request: gr.Request | None = None) -> dict:
        """The shareable link: the page's address (the browser's, right behind any proxy), the panel's settings, the
        open view and the Lesson's step."""
        session = self.sessions.of(request)
        address = links.write(values[self.panel.link], values, self.panel, session.tab, session.lesson_step,
                              self.ctx.public_url)
        return {self.panel.link: gr.update(value=address, visible=True)}
