"""A teacher's part of a class on the page: start it and end it (its summary downloaded), the teacher's own parts
(End, the join card, the list of students) polled every second, the wall's and the list's buttons, the teacher's
place kept in the teacher's browser (a restart or another replica comes back to it), and a model the teacher brought shared
with the class. Every action is checked against the class's secret, on the server (ClassPanel.teaching_class)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

import gradio as gr

from .. import downloads, links
from ..context import TICKETS
from ..view import to_page
from . import pages
from .common import ACT_JS, CLASS_VIEWS, TEACHER_TICK_S, ClassMemory, bold, client_address, plain, quiet
from .store import ClassError, shown_code
from playground.i18n import N_, Texts, _l, language_of

STARTS = (10, 600)  # per client address: classes started (events, per seconds; counted in the store)
PLACE_FIELDS = {"pair", "text", "present", "lesson", "view", "sentence", *links.QUERY_FIELDS}  # a link's place


@dataclass
class TeacherParts:
    """A teacher's own parts, built for the teacher's page (ClassPanel.build_parts): End, the join card in its fold
    (whose label says the class and its count) and the list of students (with the lock: its own buttons)."""

    end: gr.Button
    join_fold: gr.Accordion
    card: gr.HTML
    roster: gr.HTML

    @classmethod
    def build(cls, card: str = "") -> TeacherParts:
        with gr.Column(elem_id="class-teacher"):
            end = gr.Button(_l("End the class: download its summary"), size="sm", variant="stop", elem_id="class-end")
            with gr.Accordion(_l("Join: the QR code, the link and the code"), open=True,
                              elem_id="class-join-card") as join_fold:
                shown = gr.HTML(card, elem_id="class-card")
            with gr.Accordion(_l("Students"), open=False, elem_id="class-students"):
                roster = gr.HTML(elem_id="class-roster", js_on_load=ACT_JS)
        return cls(end, join_fold, shown, roster)


class TeacherSide:
    """The teacher's handlers, on the class's parts of the page (`frame`, a ClassPanel) and what the class reads of
    the page (`frame.page`)."""

    def __init__(self, frame):
        self.frame, self.store, self.ctx, self.page = frame, frame.store, frame.ctx, frame.page

    def wire(self, event) -> object:
        """Start (in the settings' fold and in presentation mode's bar), End in the bar, the wall's buttons and the
        page's closing; the wall's event (which puts a sentence in the panel) is given back: the page translates
        after it."""
        frame, common = self.frame, dict(show_progress="hidden")
        for start in (frame.start, frame.present_start):
            started = start.click(None, None, frame.address, js=links.ADDRESS_JS)  # in the browser
            event(started.then, self.begin, [], [frame.address, frame.teacher], [frame.teacher, frame.entry,
                                                                                 frame.said] + frame.teacher_view,
                  **common)
        self.ends(frame.present_end)
        self.page.demo.unload(self.forget)
        return event(frame.wall.act, self.act, [], [frame.teacher], [frame.said, self.page.panel.pair,
                                                                     self.page.panel.text], **common)

    @to_page
    def begin(self, values: dict, request: gr.Request) -> dict:
        """A new class, unless this browser already runs one: that one is shown again, never lost."""
        running = values.get(self.frame.teacher) or {}
        if running.get("code"):
            try:
                self.frame.teaching_class(values)
                _ = Texts(language_of(request))
                return self.teacher_shows(request) | {
                    self.frame.said: _("Class {code} is still running in this browser: end it first (its summary "
                                       "downloads), then start another.", code=bold(shown_code(running["code"])))}
            except ClassError:
                pass  # ended elsewhere, or expired: a new one may start
        if not self.frame.limited("start", client_address(request, self.frame.trusted), STARTS):
            _ = Texts(language_of(request))
            return {self.frame.said: _("Several classes were started from here just now: wait a few minutes.")}
        code, secret = self.store.start()
        address = links.shared_address(values[self.frame.address] or "", self.ctx.public_url)
        teacher = {"code": code, "secret": secret, "link": pages.join_link(address, code)}
        self.frame.memory(request, fresh=True)
        _ = Texts(language_of(request))
        return ({self.frame.teacher: teacher, self.frame.entry: gr.Accordion(open=False),
                 self.frame.said: _("Class {code} started: the class joins with the QR code or the link.",
                                    code=bold(shown_code(code)))}
                | self.teacher_shows(request))

    def teacher_shows(self, request) -> dict:
        """The teacher's parts of the page, built and shown (no Start while it runs); the class drawn at its first
        poll."""
        frame = self.frame
        return {frame.wall_fold: gr.Accordion(visible=True), frame.entry_column: gr.Column(visible=False),
                frame.present_start: gr.Button(visible=False), frame.present_end: gr.Button(visible=True)
                } | self.teaches(request, True)

    def teacher_gone(self, request) -> dict:
        frame = self.frame
        return {frame.wall_fold: gr.Accordion(visible=False), frame.teacher: {},
                frame.entry_column: gr.Column(visible=True), frame.present_start: gr.Button(visible=True),
                frame.present_end: gr.Button(visible=False)} | self.teaches(request, False)

    def teaches(self, request, teaching: bool) -> dict:
        """The page's session runs a class, or no longer does: the teacher's parts are built (or taken away), and the
        Lesson and Step by step, when this visitor has them, built again with the class's parts or without."""
        session = self.page.sessions.of(request)
        if session.teaching == teaching:
            return {}
        session.teaching = teaching
        return {self.frame.parts: next(TICKETS)} | {self.page.rebuilt[unit]: next(TICKETS) for unit in CLASS_VIEWS
                                                    if unit in session.built}

    @quiet
    def tick_teacher(self, values: dict, request: gr.Request, parts: TeacherParts | None = None) -> dict:
        """The class as the projector shows it (in the teacher's `parts`; by default a copy off the page), when it
        changed; and what the teacher shows now, written for the students who follow (the sentence, and the Lesson
        step when the Lesson is open)."""
        memory, parts = self.frame.memory(request), parts or self.frame.off_page[0]
        try:
            class_id = self.frame.teaching_class(values)
        except ClassError:  # ended elsewhere, or expired
            _ = Texts(language_of(request))
            return self.teacher_gone(request) | {self.frame.said: _("The class has ended.")}
        session = self.page.sessions.of(request)
        _ = Texts(session.language)
        self.write_shown(memory, class_id, values, session)
        placed = self.keep_place(values, session)
        version = self.store.version(class_id)
        if version is None or version == memory.seen:
            return placed
        state = self.store.state(class_id, roster=True)
        memory.seen = state.version
        teacher = values[self.frame.teacher]
        drawn = {parts.join_fold: _("Class {code} · {joined}: the QR code, the link and the code",
                                    code=shown_code(state.code), joined=pages.joined(state.students, state.locked, _)),
                 parts.card: pages.join_card(teacher["link"], state.code, state.students, state.locked, _),
                 parts.roster: pages.roster_html(state, _),
                 self.frame.wall: pages.wall_html(state, teacher=True, _=_)}
        out = memory.changed(drawn)
        if parts.join_fold in out:  # its label, which says the class and its count
            out[parts.join_fold] = gr.Accordion(label=out[parts.join_fold])
        return out | placed

    def write_shown(self, memory: ClassMemory, class_id: int, values: dict, session) -> None:
        """What the teacher shows now, for the students who follow: the sentence, and the Lesson's step when the
        Lesson is open (context.Session)."""
        result, page = values.get(self.page.result), self.page
        if result is None:
            return
        number, on_lesson = session.lesson_step, session.tab == "lesson"
        shown = (result.pair, result.text, number if on_lesson else None)
        if memory.shown == shown:
            return
        step = page.lesson.made_step(result, number, session.language) if on_lesson else None
        self.store.show(class_id, result.pair, result.text, values.get(self.page.panel.translation) or
                        result.translation.text, shown[2], step.title if step else "", plain(step.question) if step
                        else "")
        memory.shown = shown

    def keep_place(self, values: dict, session) -> dict:
        """The teacher's place on the page (the sentence and its settings, presentation mode, the open view and the
        Lesson's step), kept in the teacher's browser with the class's secret (gr.BrowserState: it outlives the
        app's restart and a move to another replica) as the query of the link "Link to this" would write, once the
        page shows a translation: the page comes back to it as it opens (ClassPanel.place). The update when it
        moved (the browser sends what it keeps with every poll)."""
        teacher = values.get(self.frame.teacher) or {}
        if values.get(self.page.result) is None or not teacher.get("code"):
            return {}
        place = urlsplit(links.write("", values, self.page.panel, session.tab, session.lesson_step)).query
        return {} if teacher.get("place") == place else {self.frame.teacher: teacher | {"place": place}}

    @to_page
    def toggle_lock(self, values: dict, request: gr.Request | None = None) -> dict:
        class_id, _ = self.frame.teaching_class(values), Texts(language_of(request))
        locked = not self.store.state(class_id, wall=0).locked
        self.store.lock(class_id, locked)
        return {self.frame.said: _("The class is closed: no new student can join (those in it can come back).")
                if locked else _("The class is open to new students again.")}

    @to_page
    def finish(self, values: dict, request: gr.Request | None = None) -> dict:
        """The class's summary written for download, then the class deleted (and the model it shared unshared)."""
        class_id, _ = self.frame.teaching_class(values), Texts(language_of(request))
        state = self.store.end(class_id)
        labels = {pair: _(self.ctx.label(pair)) for pair in self.ctx.pairs}
        with self.frame.lock:
            shared = self.frame.models.pop(class_id, None)
        if shared is not None:
            labels[shared[0]] = self.ctx.label(shared[0]) if self.ctx.uploads.translator(shared[0]) else _("its model")
        path = downloads.write(self.ctx.downloads, f"class-{state.code.lower()}", pages.summary(state, labels, _),
                               suffix=".html")
        return self.teacher_gone(request) | {
            self.frame.summary: gr.update(value=str(path)),
            self.frame.said: _("Class {code} ended: its summary is downloading, and its data is deleted.",
                               code=shown_code(state.code))}

    @to_page
    def act(self, values: dict, clicked: gr.EventData, request: gr.Request | None = None) -> dict:
        """A button of the wall or of the list of students: "open" puts the sentence in the panel (the page then
        translates it, and every view shows it), "hide" takes it off every screen; "hide-all" and "show-all" do so
        with every sentence of one student, "remove" takes the student out of the class, "remove-marked" every
        student who joined without the page's pass, "remove-nameless" every one without a nickname; "lock" closes
        the class to new students, or opens it again."""
        class_id = self.frame.teaching_class(values)
        what, which = getattr(clicked, "act", ""), getattr(clicked, "id", "")
        _ = Texts(language_of(request))
        if what == "lock":
            return self.toggle_lock(values, request)
        if what in ("remove-marked", "remove-nameless"):
            n = self.store.remove_all(class_id, passless=what == "remove-marked")
            return {self.frame.said: _.plural("{n} student taken out of the class: they cannot come back.",
                                              "{n} students taken out of the class: they cannot come back.", n)}
        if what in ("remove", "hide-all", "show-all"):
            if not re.fullmatch(r"[0-9a-f]{64}", str(which)):
                raise ClassError(N_("That is not a student of this class."))
            if what == "remove":
                self.store.remove(class_id, which)
                return {self.frame.said: _("Taken out of the class: their sentences are hidden and they cannot come "
                                           "back.")}
            self.store.hide_all(class_id, which, hidden=what == "hide-all")
            return {self.frame.said: _("Hidden on every screen.") if what == "hide-all" else _("Shown again.")}
        try:
            sentence_id = int(which)
        except (TypeError, ValueError):
            raise ClassError(N_("That is not a sentence of the wall.")) from None
        if what == "hide":
            self.store.hide(class_id, sentence_id)
            return {self.frame.said: _("Hidden on every screen.")}
        found = self.store.sentence(class_id, sentence_id)
        if found["pair"] not in self.ctx.pairs:
            raise ClassError(N_("That sentence's language pair is not loaded here."))
        return {self.page.panel.pair: found["pair"], self.page.panel.text: found["text"]}

    def share_after(self, brought, event) -> None:
        """`brought`: a visitor's event that opens a model they uploaded (the Model card's); a teacher's is shared
        with the class after it."""
        event(brought.success, self.share_brought, [], [self.frame.teacher], [self.frame.said],
              show_progress="hidden")

    @to_page
    def share_brought(self, values: dict, request: gr.Request) -> dict:
        """A model the teacher brought while teaching: in the class's language menus too (the phones this process
        serves), until the class ends or the teacher's page closes."""
        try:
            class_id = self.frame.teaching_class(values)
        except ClassError:
            return {}  # not teaching: the model is this page's alone
        session, key = getattr(request, "session_hash", None) or "", values.get(self.page.panel.pair)
        if not any(u.key == key for u in self.ctx.uploads.of(session)):
            return {}
        with self.frame.lock:
            self.frame.models[class_id] = (key, session)
        self.store.touch(class_id)  # every phone draws its menu again
        _ = Texts(language_of(request))
        return {self.frame.said: _("Your model is in the class's language menu too, until the class ends.")}

    def forget(self, request: gr.Request) -> None:
        """A teacher's page closed: the model it shared leaves its class's menus."""
        session = getattr(request, "session_hash", None)
        with self.frame.lock:
            gone = [c for c, (_, s) in self.frame.models.items() if s == session]
            for class_id in gone:
                del self.frame.models[class_id]
        for class_id in gone:
            try:
                self.store.touch(class_id)
            except ClassError:
                pass

    def ends(self, button: gr.Button) -> None:
        """`button` ends the class: its summary written, then downloaded by the browser."""
        frame = self.frame
        frame.event([button.click], self.finish, [], [frame.teacher], [frame.summary, frame.said, frame.teacher]
                    + frame.teacher_view, show_progress="hidden").success(
            None, js="() => document.getElementById('class-summary')?.click()")

    def wire_teacher(self, parts: TeacherParts) -> None:
        """A teacher's parts, built for the teacher's page: polled every TEACHER_TICK_S, End, and the list of
        students' buttons."""
        frame, event, common = self.frame, self.frame.event, dict(show_progress="hidden")

        def tick(values: dict, request: gr.Request) -> dict:
            return self.tick_teacher(values, request, parts)
        panel = self.page.panel  # what the teacher's place reads (`keep_place`)
        event([gr.Timer(TEACHER_TICK_S).tick], tick, [], [frame.teacher, panel.translation, panel.text, panel.present,
                                                          panel.which, *panel.decoding],
              [parts.join_fold, parts.card, parts.roster, frame.teacher, frame.said] + frame.teacher_view,
              queue=False, **common)
        self.ends(parts.end)
        event(parts.roster.act, self.act, [], [frame.teacher], [frame.said], **common)  # a custom event: one at a time
