"""A class, together, on the page: the teacher starts a class (its QR code, link and code on the projector, the
list of students, the wall), asks the Lesson's questions beside them and reveals them with the Lesson's own Reveal;
students join on their phones (`/?class=CODE`, or the code typed), send what they translate, vote and follow the
teacher. The class lives in the store (store.py); what each page shows of it comes from one poll of the class's
version (a gr.Timer) and is sent only when it changed.

The class listens to the page's events; the page's runtime does not know it exists. A sentence goes to the wall only
after the student's own Translate or Enter (`.success` of those events): a pair switched, an example picked, a
reload or a link never sends. The teacher's controls are bound to a secret kept in the teacher's browser
(gr.BrowserState, encrypted with a key every replica shares), a student to a random token kept in theirs (one
student per browser): a reload, or a move to another replica, keeps both. Every teacher action is checked against
the secret here, on the server; the rate limits are counted in the store, where every replica sees them."""
from __future__ import annotations

import functools
import html
import ipaddress
import re
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

import gradio as gr

from transformer.decoding import DecodeOptions
from transformer.translator import sentences

from .. import context, doubts, downloads, links
from ..context import TICKETS, Context
from ..doubts import words_with_doubts
from ..panel import TranslatePanel
from ..gradio_internals import as_on_the_page
from ..view import to_page, log
from . import pages, passes
from .store import ClassError, Poll, Quiz, Store, TakenOut, normal_code, shown_code
from playground import quiz
from playground.i18n import N_, Texts, _l, gettext, language_of

ACT_JS = "tp.wall(element, trigger, 'act')"  # the wall's and the list's buttons fire their "act" event (assets/page.js)
# a phone's choice buttons fire the question's "vote" event; a student's own translation its "send" event (tp.sent)
VOTE_JS = "tp.question(element, trigger, 'vote', 'send', 'answer')"  # and a quiz's buttons its "answer" event
TEACHER_TICK_S, STUDENT_TICK_S = 1.0, 2.0  # how often a page asks whether its class changed
# The rate limits, counted in the store for every replica: (events, per seconds)
NEW_STUDENTS = (150, 600)  # per client address: a lecture hall may share one router; a script flooding a class
# is stopped here, and seen and shut out by the teacher (the list of students, "Close to new students")
WRONG_CODES = (30, 60)  # per client address: codes that were wrong (a code is not found by trying)
SENDS = (12, 60)  # per student: sentences sent to the wall, and votes changed
ANSWERS = (60, 60)  # per student: a quiz's answers (six questions, changed as a student thinks again)
STARTS = (10, 600)  # per client address: classes started
PLACE_FIELDS = {"pair", "text", "present", "lesson", "view", "sentence", *links.QUERY_FIELDS}  # a link's place
CLASS_VIEWS = ("lesson", "steps")  # the views with a teacher's parts (the question to ask, its votes beside it)


def bold(text: str) -> str:
    """Markdown's bold."""
    return "**" + text + "**"


def plain(text: str) -> str:
    """A Lesson text (Markdown with escaped HTML) as plain text, for a page that escapes what it shows."""
    return html.unescape(re.sub(r"<[^>]+>", "", text.replace("**", "")))


def phone_words(answer: str) -> str:
    """A Lesson answer as a phone shows it: what points at the projector's figure ("the orange square", "the orange
    path in the tree is ...") left out, since a phone does not show the figure."""
    answer = re.sub(r"\s*\([^()]*\borange\b[^()]*\)", "", answer)
    return " ".join(s.strip() for s in sentences(answer) if not re.search(r"\borange\b", s))


def quiet(poll):
    """A page's poll of its class: a failure is logged and the page keeps what it shows (the next poll, a second
    or two later, tries again); never an error box every second."""
    @functools.wraps(poll)
    def polled(*args, **kwargs):
        try:
            return poll(*args, **kwargs)
        except Exception:
            log.exception("%s failed", poll.__qualname__)
            return {}
    return polled


def client_address(request, trusted: frozenset[str]) -> str:
    """The visitor's address: the one the server sees, or, when that is a balancer the app was told to trust
    (--trusted-proxy), the one it forwarded (the last in X-Forwarded-For: the one it added itself)."""
    seen = getattr(getattr(request, "client", None), "host", "") or ""
    if seen in trusted:
        forwarded = [a.strip() for a in (request.headers.get("x-forwarded-for") or "").split(",") if a.strip()]
        if forwarded:
            try:
                return str(ipaddress.ip_address(forwarded[-1]))
            except ValueError:
                pass
    return seen


@dataclass
class ClassMemory:
    """What one page remembers of its class, on the server (ClassPanel.memory): which class it is in and what of it
    the page was last sent, so that a poll sends only what changed."""

    class_id: int | None = None  # the class a student's page is in (found once from its token)
    seen: int | None = None  # the class's version the page last drew
    drawn: dict = field(default_factory=dict)  # id(component) -> the value last sent to it
    poll: Poll | None = None  # the question a phone shows, as last read
    quiz: Quiz | None = None  # the quiz a phone shows (the class's open one), as last read
    shown: tuple | None = None  # what the teacher's page last wrote as shown to the class: (pair, text, step)
    place: str | None = None  # the teacher's place on the page last kept in the store (ClassPanel.keep_place)
    sent: tuple | None = None  # a student's last sentence sent to the wall: (pair, text)

    def changed(self, drawn: dict) -> dict:
        """Of `drawn` (component -> value), what differs from what this page was last sent."""
        out = {c: v for c, v in drawn.items() if self.drawn.get(id(c)) != v}
        self.drawn.update({id(c): v for c, v in out.items()})
        return out


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


@dataclass
class StudentParts:
    """A student's own controls, built for the student's page (ClassPanel.build_parts): the nickname and the two
    switches (as the student's browser keeps them), and Leave."""

    nickname: gr.Textbox
    send: gr.Checkbox
    follow: gr.Checkbox
    leave: gr.Button

    @classmethod
    def build(cls, member: dict) -> StudentParts:
        with gr.Column(elem_id="class-student"):
            with gr.Row():
                nickname = gr.Textbox(member.get("nickname", ""), label=_l("Nickname (optional)"), max_length=24,
                                      min_width=160, elem_id="class-nickname")
                with gr.Column(min_width=160):
                    send = gr.Checkbox(member.get("send", True), label=_l("Send my sentences to the class"),
                                       elem_id="class-send")
                    follow = gr.Checkbox(member.get("follow", True), label=_l("Follow the teacher"),
                                         elem_id="class-follow-toggle")
            leave = gr.Button(_l("Leave the class"), size="sm", elem_id="class-leave")
        return cls(nickname, send, follow, leave)


class ClassPanel:
    """Built in five places: its entry (`entry_controls`, beside the panel's settings), Start and End buttons in
    presentation mode's bar (`present_controls`), the phone's question above the panel (`question_controls`), a
    student's view of the class and the teacher's or the student's own parts, built for the page that needs them,
    under the panel (`build`, `build_parts`), and the wall under the views (`wall_controls`); and in a teacher's
    Lesson and Step by step (`wire_views`)."""

    def __init__(self, ctx: Context, store: Store, trusted_proxies: frozenset[str] = frozenset()):
        self.ctx, self.store, self.trusted = ctx, store, trusted_proxies
        key = self.secret = store.browser_secret()  # also signs the page's passes (passes.py)
        self.teacher = gr.BrowserState({}, storage_key="tp-teacher", secret=key)  # {code, secret, link}
        self.member = gr.BrowserState({}, storage_key="tp-student", secret=key)  # {code, token, nickname, send, follow}
        self.memories: OrderedDict[str, ClassMemory] = OrderedDict()
        self.lock = threading.Lock()  # a page's events run on several threads
        self.models: dict[int, tuple[str, str]] = {}  # class id -> the model its teacher brought and shared: (its
        # key in ctx.uploads, the teacher's session); in this process only (a model lives where it was uploaded)

    def memory(self, request, fresh: bool = False) -> ClassMemory:
        """This page's ClassMemory (`fresh`: forgotten first, as the page joins, starts or leaves a class; a new one
        outside a browser session); the least recently used go first."""
        key = getattr(request, "session_hash", None)
        if key is None:
            return ClassMemory()
        with self.lock:
            if fresh or key not in self.memories:
                self.memories[key] = ClassMemory()
            self.memories.move_to_end(key)
            while len(self.memories) > 10_000:
                self.memories.popitem(last=False)
            return self.memories[key]

    def build_off_page(self) -> None:
        """A teacher's and a student's parts built off the page (`off_page`), for tools and tests (a page's own are
        built for it: `build_parts`). Made before the page is served, their labels are among its translated ones
        (playground.i18n._l)."""
        with gr.Blocks():
            self.off_page = TeacherParts.build(), StudentParts.build({})

    def limited(self, kind: str, who: str, limit: tuple[int, int]) -> bool:
        """True when `who` may do `kind` once more (the event counted in the store)."""
        return self.store.limit(f"{kind} {who}", *limit)

    # -------------------------------------------------------------------------
    # Built into the page

    def entry_controls(self) -> None:
        with gr.Column(scale=1, min_width=240) as self.entry_column, gr.Accordion(
                _l("Class: start one, or join with its code"), open=False, elem_id="class-entry") as self.entry:
            with gr.Row(equal_height=True):
                self.code = gr.Textbox(label=_l("Class code"), placeholder="ABCD-EFGH", max_length=24, scale=2,
                                       min_width=140, elem_id="class-code")
                self.join = gr.Button(_l("Join"), scale=0, min_width=80, elem_id="class-join")
            self.start = gr.Button(_l("Start a class (I teach it)"), elem_id="class-start")

    def present_controls(self) -> None:
        self.present_start = gr.Button(_l("Start a class"), size="sm", scale=0, min_width=90,
                                       elem_id="class-start-present")
        self.present_end = gr.Button(_l("End the class"), size="sm", scale=0, min_width=90, variant="stop",
                                     visible=False,
                                     elem_id="class-end-present")

    def question_controls(self) -> None:
        """A phone's current question, above the panel: in the first screen when it arrives (assets/page.js then
        rings and scrolls to it)."""
        self.question = gr.HTML(elem_id="class-question", js_on_load=VOTE_JS, padding=False)

    def build(self, panel: TranslatePanel) -> None:
        """The class's notices, and the teacher's or the student's own parts, built for the page that runs or joins a
        class (`build_parts`) each time it starts, joins, leaves or ends one: `parts` set to a new number."""
        self.panel = panel
        self.address = gr.Textbox(visible=False, render=False)  # the page's address, put there by the browser
        # (links.ADDRESS_JS); placed with the page's hidden numbers (`wall_controls`), in one form
        self.parts = gr.Number(0, visible=False, render=False)
        self.said = gr.Markdown(elem_classes="notice", elem_id="class-said")
        # hidden, outside the teacher's part (which ends with the class): the browser clicks it once the summary is
        # written (gradio #9230, as the Lesson's notes)
        self.summary = gr.DownloadButton(_l("Summary"), visible="hidden", elem_id="class-summary")
        # a student's page: what the teacher shows, then the class's wall; drawn by the page's own poll (not a part
        # built for the page), which a phone moved to another replica goes on sending
        self.following = gr.HTML(elem_id="class-following", padding=False)
        gr.render(inputs=[self.parts, self.teacher, self.member], triggers=[self.parts.change])(self.build_parts)
        self.student_tick = gr.Timer(STUDENT_TICK_S, active=False)

    def wall_controls(self) -> None:
        """The projector's wall, under the views: it grows with the class, and folds apart (or opens alone in a
        window of its own, `?wall`, for a second screen)."""
        self.address.render()
        self.parts.render()
        with gr.Accordion(_l("The class's wall"), open=True, visible=False,
                          elem_id="class-wall-fold") as self.wall_fold:
            self.wall = gr.HTML(elem_id="class-wall", js_on_load=ACT_JS)

    def build_parts(self, number, teacher: dict, member: dict, request: gr.Request) -> None:
        """This page's own parts of its class (inside a gr.render): a teacher's (the join card, the list of students,
        End, and the timer that polls the class) or a student's (the nickname and the switches, Leave); nothing on a
        page outside a class."""
        session, memory = self.page.sessions.of(request), self.memory(request)
        memory.seen, memory.drawn = None, {}  # new parts: everything drawn again at the next poll
        teacher, member, _ = teacher or {}, member or {}, Texts(language_of(request))
        if session.teaching and teacher.get("code"):
            self.wire_teacher(TeacherParts.build(pages.join_card(teacher["link"], teacher["code"], 0, _=_)))
        elif session.panel_only and member.get("code"):
            self.wire_student(StudentParts.build(member))
        as_on_the_page()

    @property
    def teacher_view(self) -> list:
        """What starting and ending a class set: the wall, the entry, the teacher's parts built again (`parts`), and
        the Lesson and Step by step built again for a page that has them (a teacher's are built with their class's
        parts: `wire_views`)."""
        return [self.wall_fold, self.wall, self.entry_column, self.present_start, self.present_end, self.parts,
                *(self.page.tabs.built[unit] for unit in CLASS_VIEWS)]

    @property
    def student_view(self) -> list:
        return [self.question, self.following, self.student_tick, self.entry_column, self.present_start, self.parts]

    @property
    def opening(self) -> set:
        """What opening the page may set: a class's link joins it, a reload finds the class again."""
        return {self.member, self.teacher, self.entry, self.said, self.page.tabs.top} | set(self.teacher_view) | set(
            self.student_view)

    # -------------------------------------------------------------------------
    # The teacher

    def teaching_class(self, values: dict) -> int:
        """The class id of this page's teacher; ClassError without the class's secret."""
        teacher = values.get(self.teacher) or {}
        return self.store.teacher(str(teacher.get("code", "")), str(teacher.get("secret", "")))

    @to_page
    def begin(self, values: dict, request: gr.Request) -> dict:
        """A new class, unless this browser already runs one: that one is shown again, never lost."""
        running = values.get(self.teacher) or {}
        if running.get("code"):
            try:
                self.teaching_class(values)
                _ = Texts(language_of(request))
                return self.teacher_shows(request) | {
                    self.said: _("Class {code} is still running in this browser: end it first (its summary "
                                 "downloads), then start another.", code=bold(shown_code(running["code"])))}
            except ClassError:
                pass  # ended elsewhere, or expired: a new one may start
        if not self.limited("start", client_address(request, self.trusted), STARTS):
            return {self.said: "Several classes were started from here just now: wait a few minutes."}
        code, secret = self.store.start()
        address = links.shared_address(values[self.address] or "", self.ctx.public_url)
        teacher = {"code": code, "secret": secret, "link": pages.join_link(address, code)}
        self.memory(request, fresh=True)
        _ = Texts(language_of(request))
        return ({self.teacher: teacher, self.entry: gr.Accordion(open=False),
                 self.said: _("Class {code} started: the class joins with the QR code or the link.",
                              code=bold(shown_code(code)))}
                | self.teacher_shows(request))

    def teacher_shows(self, request) -> dict:
        """The teacher's parts of the page, built and shown (no Start while it runs); the class drawn at its first
        poll."""
        return {self.wall_fold: gr.Accordion(visible=True), self.entry_column: gr.Column(visible=False),
                self.present_start: gr.Button(visible=False), self.present_end: gr.Button(visible=True)} | self.teaches(
            request, True)

    def teacher_gone(self, request) -> dict:
        return {self.wall_fold: gr.Accordion(visible=False), self.teacher: {},
                self.entry_column: gr.Column(visible=True), self.present_start: gr.Button(visible=True),
                self.present_end: gr.Button(visible=False)} | self.teaches(request, False)

    def teaches(self, request, teaching: bool) -> dict:
        """The page's session runs a class, or no longer does: the teacher's parts are built (or taken away), and the
        Lesson and Step by step, when this visitor has them, built again with the class's parts or without."""
        session = self.page.sessions.of(request)
        if session.teaching == teaching:
            return {}
        session.teaching = teaching
        return {self.parts: next(TICKETS)} | {self.page.tabs.built[unit]: next(TICKETS) for unit in CLASS_VIEWS
                                              if unit in session.built}

    @quiet
    def tick_teacher(self, values: dict, request: gr.Request, parts: TeacherParts | None = None) -> dict:
        """The class as the projector shows it (in the teacher's `parts`; by default a copy off the page), when it
        changed; and what the teacher shows now, written for the students who follow (the sentence, and the Lesson
        step when the Lesson is open)."""
        memory, parts = self.memory(request), parts or self.off_page[0]
        try:
            class_id = self.teaching_class(values)
        except ClassError:  # ended elsewhere, or expired
            _ = Texts(language_of(request))
            return self.teacher_gone(request) | {self.said: _("The class has ended.")}
        session = self.page.sessions.of(request)
        _ = Texts(session.language)
        self.write_shown(memory, class_id, values, session)
        self.keep_place(memory, class_id, values, session)
        version = self.store.version(class_id)
        if version is None or version == memory.seen:
            return {}
        state = self.store.state(class_id, roster=True)
        memory.seen = state.version
        teacher = values[self.teacher]
        drawn = {parts.join_fold: _("Class {code} · {joined}: the QR code, the link and the code",
                                    code=shown_code(state.code), joined=pages.joined(state.students, state.locked, _)),
                 parts.card: pages.join_card(teacher["link"], state.code, state.students, state.locked, _),
                 parts.roster: pages.roster_html(state, _),
                 self.wall: pages.wall_html(state, teacher=True, _=_)}
        out = memory.changed(drawn)
        if parts.join_fold in out:  # its label, which says the class and its count
            out[parts.join_fold] = gr.Accordion(label=out[parts.join_fold])
        return out

    def write_shown(self, memory: ClassMemory, class_id: int, values: dict, session) -> None:
        """What the teacher shows now, for the students who follow: the sentence, and the Lesson's step when the
        Lesson is open (context.Session)."""
        result, page = values.get(self.page.result), self.page
        if result is None:
            return
        number, on_lesson = session.lesson_step, session.open == "lesson"
        shown = (result.pair, result.text, number if on_lesson else None)
        if memory.shown == shown:
            return
        step = page.views["lesson"].made_step(result, number, session.language) if on_lesson else None
        self.store.show(class_id, result.pair, result.text, values.get(self.panel.translation) or
                        result.translation.text, shown[2], step.title if step else "", plain(step.question) if step
                        else "")
        memory.shown = shown

    def keep_place(self, memory: ClassMemory, class_id: int, values: dict, session) -> None:
        """The teacher's place on the page (the sentence and its settings, presentation mode, the open view and the
        Lesson's step), kept in the store as the query of the link "Link to this" would write, once the page shows
        a translation: the page comes back to it after the app restarts (`place`)."""
        if values.get(self.page.result) is None:
            return
        place = urlsplit(links.write("", values, self.panel, session.open, session.lesson_step)).query
        if memory.place != place:
            self.store.keep_place(class_id, place)
            memory.place = place

    def place(self, query: dict, values: dict) -> dict:
        """Where a teacher's page opens: the place its running class kept (`keep_place`), as a link's query; the page's
        own link (`query`) when it says where to go, or when this page runs no class."""
        if (values.get(self.teacher) or {}).get("code") and not query.keys() & PLACE_FIELDS:
            try:
                return dict(parse_qsl(self.store.place(self.teaching_class(values)))) | query
            except ClassError:
                pass
        return query

    def shown_result(self, class_id: int, values: dict):
        """The translation the teacher's page shows; on a replica that has not seen this page yet (its own was
        stopped), the sentence the class was last shown, translated again (the same for everyone: cached)."""
        result = values.get(self.page.result)
        if result is not None:
            return result
        shown = self.store.state(class_id, wall=0).teacher
        if not shown.get("text") or shown.get("pair") not in self.ctx.pairs:
            raise ClassError(N_("Translate a sentence first: the question is about it."))
        return context.run(self.ctx.translator(shown["pair"]), shown["pair"], shown["text"], DecodeOptions(),
                           self.ctx.caches.translations, self.ctx.batcher)

    @to_page
    def ask_lesson(self, values: dict, request: gr.Request | None = None) -> dict:
        """The Lesson step's question as a poll, its choices computed from the model for the teacher's sentence, in
        the teacher's language."""
        class_id = self.teaching_class(values)
        result = self.shown_result(class_id, values)
        step = self.page.views["lesson"].made_step(result, self.page.sessions.of(request).lesson_step,
                                                   language_of(request))
        if not step.question or len(step.choices) < 2:
            raise ClassError(f"Step {step.number} has no question to vote on for this sentence.")
        explained = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", phone_words(step.answer))  # Markdown's bold; the rest is
        # escaped
        self.store.ask(class_id, plain(step.question), step.choices, step.right, explained, pair=result.pair,
                       text=result.text, step=step.number)
        _ = Texts(language_of(request))
        return {self.said: _("The question is on the class's phones: their votes come in beside it.")}

    @to_page
    def ask_steps(self, values: dict, request: gr.Request | None = None, steps=None) -> dict:
        """Step by step's question (of `steps`, a visitor's view; by default the page's copy): which piece comes next
        at the step shown, its choices the model's top pieces."""
        class_id, _ = self.teaching_class(values), Texts(language_of(request))
        result, steps = self.shown_result(class_id, values), steps or self.page.views["steps"]
        question, choices, right, explained = pages.next_piece_poll(result, int(values[steps.index]) - 1, _)
        self.store.ask(class_id, question, choices, right, explained, pair=result.pair, text=result.text)
        return {self.said: _("The question is on the class's phones: their votes come in beside it.")}

    @to_page
    def reveal_class(self, values: dict, request: gr.Request | None = None) -> dict:
        self.store.reveal(self.teaching_class(values))
        _ = Texts(language_of(request))
        return {self.said: _("Revealed on every phone.")}

    @quiet
    def reveal_with_lesson(self, values: dict, request: gr.Request | None = None) -> dict:
        """The Lesson's own Reveal, on a teacher's page whose class has this step's question open: the class sees
        the answer too (one Reveal for the projector and the phones). Nothing on any other page."""
        teacher = values.get(self.teacher) or {}
        if not teacher.get("code"):
            return {}
        try:
            class_id = self.teaching_class(values)
        except ClassError:
            return {}
        poll = self.store.state(class_id, wall=0).poll
        if poll is None or poll.revealed or poll.step != self.page.sessions.of(request).lesson_step:
            return {}
        self.store.reveal(class_id)
        _ = Texts(language_of(request))
        return {self.said: _("Revealed here and on every phone.")}

    @to_page
    def toggle_lock(self, values: dict, request: gr.Request | None = None) -> dict:
        class_id, _ = self.teaching_class(values), Texts(language_of(request))
        locked = not self.store.state(class_id, wall=0).locked
        self.store.lock(class_id, locked)
        return {self.said: _("The class is closed: no new student can join (those in it can come back).") if locked
                else _("The class is open to new students again.")}

    @to_page
    def finish(self, values: dict, request: gr.Request | None = None) -> dict:
        """The class's summary written for download, then the class deleted (and the model it shared unshared)."""
        class_id, _ = self.teaching_class(values), Texts(language_of(request))
        state = self.store.end(class_id)
        labels = {pair: _(self.ctx.label(pair)) for pair in self.ctx.pairs}
        with self.lock:
            shared = self.models.pop(class_id, None)
        if shared is not None:
            labels[shared[0]] = self.ctx.label(shared[0]) if self.ctx.uploads.translator(shared[0]) else "its model"
        path = downloads.write(self.ctx.downloads, f"class-{state.code.lower()}", pages.summary(state, labels, _),
                               suffix=".html")
        return self.teacher_gone(request) | {
            self.summary: gr.update(value=str(path)),
            self.said: _("Class {code} ended: its summary is downloading, and its data is deleted.",
                         code=shown_code(state.code))}

    @to_page
    def act(self, values: dict, clicked: gr.EventData, request: gr.Request | None = None) -> dict:
        """A button of the wall or of the list of students: "open" puts the sentence in the panel (the page then
        translates it, and every view shows it), "hide" takes it off every screen; "hide-all" and "show-all" do so
        with every sentence of one student, "remove" takes the student out of the class, "remove-marked" every
        student who joined without the page's pass, "remove-nameless" every one without a nickname; "lock" closes
        the class to new students, or opens it again."""
        class_id, what, which = self.teaching_class(values), getattr(clicked, "act", ""), getattr(clicked, "id", "")
        _ = Texts(language_of(request))
        if what == "lock":
            return self.toggle_lock(values, request)
        if what in ("remove-marked", "remove-nameless"):
            n = self.store.remove_all(class_id, passless=what == "remove-marked")
            return {self.said: _.plural("{n} student taken out of the class: they cannot come back.",
                                        "{n} students taken out of the class: they cannot come back.", n)}
        if what in ("remove", "hide-all", "show-all"):
            if not re.fullmatch(r"[0-9a-f]{64}", str(which)):
                raise ClassError(N_("That is not a student of this class."))
            if what == "remove":
                self.store.remove(class_id, which)
                return {self.said: _("Taken out of the class: their sentences are hidden and they cannot come back.")}
            self.store.hide_all(class_id, which, hidden=what == "hide-all")
            return {self.said: _("Hidden on every screen.") if what == "hide-all" else _("Shown again.")}
        try:
            sentence_id = int(which)
        except (TypeError, ValueError):
            raise ClassError(N_("That is not a sentence of the wall.")) from None
        if what == "hide":
            self.store.hide(class_id, sentence_id)
            return {self.said: _("Hidden on every screen.")}
        found = self.store.sentence(class_id, sentence_id)
        if found["pair"] not in self.ctx.pairs:
            raise ClassError(N_("That sentence's language pair is not loaded here."))
        return {self.panel.pair: found["pair"], self.panel.text: found["text"]}

    # -------------------------------------------------------------------------
    # A student

    def enrol(self, code: str, member: dict, request: gr.Request) -> dict:
        """This page in the class with `code` (as the store writes it: normal_code), its token kept when this
        browser had joined it before (one student per browser)."""
        address, _ = client_address(request, self.trusted), Texts(language_of(request))
        same = member.get("code") == code and member.get("token")
        token = member["token"] if same else secrets.token_urlsafe(18)
        nickname = member.get("nickname", "") if same else ""
        try:
            self.store.join(code, token, nickname, allow_new=lambda: self.limited("join", address, NEW_STUDENTS),
                            passless=not passes.has_pass(request, self.secret))
        except ClassError as e:
            if "No class has this code" in str(e) and not self.limited("miss", address, WRONG_CODES):
                raise ClassError(N_("Too many wrong codes from here: wait a minute.")) from None
            raise
        kept = member if same else {}  # the switches of a page that had joined this class before
        member = {"code": code, "token": token, "nickname": nickname, "send": kept.get("send", True),
                  "follow": kept.get("follow", True)}
        self.memory(request, fresh=True)  # a page new to this class
        self.page.sessions.of(request).panel_only = True
        return {self.member: member, self.parts: next(TICKETS), self.student_tick: gr.Timer(active=True),
                self.entry_column: gr.Column(visible=False),
                self.present_start: gr.Button(visible=False), self.page.tabs.top: gr.Tabs(visible=False),
                self.question: "",
                self.said: _("You are in class {code}. What you translate goes to the class's wall unless you "
                             "switch it off below.", code=bold(shown_code(code)))}

    @to_page
    def join_typed(self, values: dict, request: gr.Request) -> dict:
        return self.enrol(normal_code(values[self.code] or ""), values.get(self.member) or {}, request)

    def membership(self, values: dict) -> tuple[int, dict]:
        member = values.get(self.member) or {}
        return self.store.member(str(member.get("code", "")), str(member.get("token", ""))), member

    @quiet
    def tick_student(self, values: dict, request: gr.Request) -> dict:
        """What a student's page shows of the class, when it changed."""
        memory, _ = self.memory(request), Texts(language_of(request))
        try:
            class_id, member = self.membership(values)  # each time: a student taken out is told at once
        except TakenOut as e:  # out for good: the browser keeps its token, which the class refuses from now on
            return self.left(request, member=values.get(self.member)) | {self.said: _(str(e)),
                                                                          self.question: pages.out_html(_(str(e)))}
        except ClassError as e:
            return self.left(request) | {self.said: _("The class has ended.") if "No class" in str(e) else _(str(e))}
        memory.class_id = class_id
        version = self.store.version(class_id)
        if version is None:
            return self.left(request) | {self.said: _("The class has ended.")}
        if version == memory.seen:
            return {}
        state = self.store.state(class_id, wall=4 * pages.PHONE_WALL)
        memory.seen, memory.poll, memory.quiz = state.version, state.poll, state.quiz
        mine = self.store.vote_of(state.poll.id, member["token"]) if state.poll else None
        followed = pages.followed_html(state, _) if member.get("follow", True) else ""
        drawn = {self.following: f'<div id="class-follow">{followed}</div><div id="class-student-wall">'
                                 f'{pages.wall_html(state, teacher=False, limit=pages.PHONE_WALL, _=_)}</div>',
                 self.question: self.phone_box(memory, member, mine, _),
                 self.page.panel.pair: self.menu(class_id, values.get(self.page.panel.pair))}
        return memory.changed(drawn)

    def menu(self, class_id: int, chosen: str | None) -> dict:
        """A phone's language menu: the server's pairs, and the model the teacher shared when this process holds it;
        what the phone had chosen stays chosen while the menu has it."""
        key = self.models.get(class_id, (None, None))[0]
        shared = key is not None and self.ctx.uploads.translator(key) is not None
        choices = self.ctx.menu([(f"{self.ctx.label(key)} (the teacher's)", key)] if shared else [])  # its name
        keys = [k for _, k in choices]
        return gr.update(choices=choices, value=chosen if chosen in keys else next(iter(keys), None))

    def share_after(self, brought, event) -> None:
        """`brought`: a visitor's event that opens a model they uploaded (the Model card's); a teacher's is shared
        with the class after it."""
        event(brought.success, self.share_brought, [], [self.teacher], [self.said], show_progress="hidden")

    @to_page
    def share_brought(self, values: dict, request: gr.Request) -> dict:
        """A model the teacher brought while teaching: in the class's language menus too (the phones this process
        serves), until the class ends or the teacher's page closes."""
        try:
            class_id = self.teaching_class(values)
        except ClassError:
            return {}  # not teaching: the model is this page's alone
        session, key = getattr(request, "session_hash", None) or "", values.get(self.page.panel.pair)
        if not any(u.key == key for u in self.ctx.uploads.of(session)):
            return {}
        with self.lock:
            self.models[class_id] = (key, session)
        self.store.touch(class_id)  # every phone draws its menu again
        return {self.said: "Your model is in the class's language menu too, until the class ends."}

    def forget(self, request: gr.Request) -> None:
        """A teacher's page closed: the model it shared leaves its class's menus."""
        session = getattr(request, "session_hash", None)
        with self.lock:
            gone = [c for c, (_, s) in self.models.items() if s == session]
            for class_id in gone:
                del self.models[class_id]
        for class_id in gone:
            try:
                self.store.touch(class_id)
            except ClassError:
                pass

    def left(self, request, member: dict | None = None) -> dict:
        """The page out of its class; `member`: what its browser keeps of it (a student taken out keeps the token the
        class refuses), else nothing."""
        self.memory(request, fresh=True)
        self.page.sessions.of(request).panel_only = False
        return {self.member: member or {}, self.parts: next(TICKETS), self.student_tick: gr.Timer(active=False),
                self.page.tabs.top: gr.Tabs(visible=True), self.entry_column: gr.Column(visible=True),
                self.present_start: gr.Button(visible=True), self.question: "", self.following: ""}

    @to_page
    def cast(self, values: dict, request: gr.Request, clicked: gr.EventData) -> dict:
        """A phone's vote on the question it shows (the poll's id comes with the tap: a phone moved to another
        replica votes on what it shows), drawn at once with the vote marked."""
        class_id, member = self.membership(values)
        memory = self.memory(request)
        try:
            choice, poll_id = int(getattr(clicked, "choice", "")), int(getattr(clicked, "poll", ""))
        except (TypeError, ValueError):
            raise ClassError(N_("That is not one of the choices.")) from None
        if not self.limited("vote", member["token"], SENDS):
            raise ClassError(N_("Too many changes: wait a moment before you vote again."))
        self.store.vote(class_id, member["token"], poll_id, choice)
        poll = memory.poll if memory.poll is not None and memory.poll.id == poll_id else None
        _ = Texts(language_of(request))
        return memory.changed({self.question: self.phone_box(memory, member, choice, _)}) if poll else {}

    def phone_box(self, memory: ClassMemory, member: dict, vote: int | None, _: Texts) -> str:
        """A phone's box at its top: the class's question (this phone's vote marked), then the open quiz (its
        answers marked)."""
        box = pages.question_html(memory.poll, vote, _)
        if memory.quiz is None:
            return box
        mine = self.store.quiz_answers_of(memory.quiz.id, member["token"])
        return box + quiz.questions_html(str(memory.quiz.id), memory.quiz.phase, memory.quiz.questions, mine, _)

    @to_page
    def answer(self, values: dict, request: gr.Request, clicked: gr.EventData) -> dict:
        """A phone's answer to one question of the class's quiz, drawn at once with the answer marked."""
        class_id, member = self.membership(values)
        memory, _ = self.memory(request), Texts(language_of(request))
        try:
            quiz_id, question = int(getattr(clicked, "quiz", "")), int(getattr(clicked, "question", ""))
            choice = int(getattr(clicked, "choice", ""))
        except (TypeError, ValueError):
            raise ClassError(N_("That is not one of the choices.")) from None
        if not self.limited("answer", member["token"], ANSWERS):
            raise ClassError(N_("Too many changes: wait a moment before you answer again."))
        self.store.answer_quiz(class_id, member["token"], quiz_id, question, choice)
        if memory.quiz is None or memory.quiz.id != quiz_id:
            return {}
        mine = self.store.vote_of(memory.poll.id, member["token"]) if memory.poll else None
        return memory.changed({self.question: self.phone_box(memory, member, mine, _)})

    # -------------------------------------------------------------------------
    # The quiz: a teacher's class on its phones, or a student alone on the Lesson's tab

    def start_quiz(self, values: dict, request: gr.Request | None, phase: str, lesson=None) -> dict:
        """On a teacher's page the class's quiz (asked on the sentence the class was shown, in the teacher's
        language; the projector shows its chart); on any other page, the student's own (in `lesson`, a visitor's
        Lesson; by default the page's copy)."""
        lesson = lesson or self.page.views["lesson"]
        if not (values.get(self.teacher) or {}).get("code"):
            return lesson.own_quiz(values.get(self.page.result), phase, values.get(lesson.rounds), request)
        class_id, _ = self.teaching_class(values), Texts(language_of(request))
        result = self.shown_result(class_id, values)
        if not quiz.usable(result):
            raise ClassError(_("The quiz needs a sentence of two words or more and a translation: translate "
                               "another first."))
        asked = [q.to_dict() for q in quiz.questions(result, _.language)]
        self.store.start_quiz(class_id, phase, asked, pair=result.pair, text=result.text)
        return {self.said: _("{title} is on the class's phones: the chart below fills in as they answer.",
                             title=quiz.title(phase, _)),
                lesson.quiz: quiz.chart_html(self.store.state(class_id, wall=0).quizzes, _)}

    @to_page
    def quiz_before(self, values: dict, request: gr.Request, lesson=None) -> dict:
        return self.start_quiz(values, request, "before", lesson)

    @to_page
    def quiz_after(self, values: dict, request: gr.Request, lesson=None) -> dict:
        return self.start_quiz(values, request, "after", lesson)

    @to_page
    def settings(self, values: dict, request: gr.Request, parts: StudentParts | None = None) -> dict:
        """The nickname and the two switches (of `parts`, the student's; by default a copy off the page), kept in the
        student's browser; the nickname in the class too (unique there). The class is drawn again at once as the
        switches now ask (the teacher's sentence shown or not)."""
        member = dict(values.get(self.member) or {})
        if not member.get("token"):
            return {}
        memory, parts = self.memory(request), parts or self.off_page[1]
        memory.seen = None
        nickname = " ".join((values[parts.nickname] or "").split())[:24]
        said = {}
        if nickname != member.get("nickname", ""):
            try:
                self.store.join(member["code"], member["token"], nickname)
                said = {self.said: f"Your nickname in the class: **{html.escape(nickname)}**." if nickname else ""}
            except ClassError as e:  # taken, or posing as the teacher: the old one stays
                nickname, said = member.get("nickname", ""), {self.said: gettext(language_of(request), str(e))}
        member |= {"nickname": nickname, "send": bool(values[parts.send]), "follow": bool(values[parts.follow])}
        return self.tick_student(values | {self.member: member}, request) | {self.member: member,
                                                                           parts.nickname: nickname} | said

    @to_page
    def quit(self, values: dict, request: gr.Request) -> dict:
        return self.left(request) | {self.said: "You left the class."}

    @to_page
    def send_translated(self, values: dict, request: gr.Request) -> dict:
        """After a student's own Translate or Enter, once the page shows the translation (its `.success`, whose step in
        the browser fires the question's "send" event on a student's page only): the sentence, its translation,
        unsure words and warnings sent to the class's wall (unless switched off). Only what the box
        holds and the page shows is sent, once; a refusal is said in place, the translation shown all the same."""
        member, result = values.get(self.member) or {}, values.get(self.page.result)
        if not member.get("token") or not member.get("send", True) or result is None:
            return {}
        text = values[self.panel.text] or ""
        parts = sentences(text) if text.strip() else []
        if not parts or parts[0] != result.text or result.pair != values[self.panel.pair]:
            return {}  # the page shows another translation than this text's (a newer click is on its way)
        memory = self.memory(request)
        if memory.sent == (result.pair, text):
            return {}  # Translate pressed again on the same sentence: already on the wall
        try:
            class_id, _ = self.membership(values)
        except ClassError:
            return {}
        if not self.limited("send", member["token"], SENDS):
            return {self.said: "Sent many sentences just now: this one stayed on your phone. Wait a moment."}
        if len(parts) == 1:  # what the checks found, kept as what it is: every screen says it in its own language
            translator = self.ctx.translator(result.pair)
            found = doubts.noticed(translator, result.text, result.translation)
            notice = doubts.kept(found, result.translation.truncated) if doubts.said(found) or \
                result.translation.truncated else ""
        else:  # several sentences: the notice as the student read it
            notice = plain(str(values.get(self.panel.notice) or ""))
        self.store.send(class_id, member["token"], member.get("nickname", ""), result.pair, text,
                        values.get(self.panel.translation) or result.translation.text,
                        [w for w, unsure in words_with_doubts([result.translation]) if unsure], notice)
        memory.sent = (result.pair, text)
        return {self.said: ""}  # a notice that no longer holds goes

    # -------------------------------------------------------------------------
    # Opening the page: ?class=CODE joins; a teacher's or a student's reload finds its class again

    def opened(self, query: dict, values: dict, request: gr.Request) -> dict:
        member, teacher = values.get(self.member) or {}, values.get(self.teacher) or {}
        if "class" in query:
            try:
                return self.enrol(normal_code(query["class"]), member, request)
            except ClassError as e:  # said on top too, in the phone's first screen
                said = gettext(language_of(request), str(e))
                return {self.said: said, self.question: pages.out_html(said), self.entry: gr.Accordion(open=True)}
        if teacher.get("code"):
            try:
                self.teaching_class(values)
                return self.teacher_shows(request)
            except ClassError:
                return {self.teacher: {}}
        if member.get("code"):
            try:
                return self.enrol(member["code"], member, request)
            except TakenOut as e:  # kept: the same browser stays out
                said = gettext(language_of(request), str(e))
                return {self.said: said, self.question: pages.out_html(said)}
            except ClassError:
                return {self.member: {}, self.said: ""}
        return {}

    # -------------------------------------------------------------------------

    def wire(self, page, event, translated_by_user: list) -> None:
        """The class's events on the page (a teacher's and a student's own parts wire theirs as they are built:
        `wire_teacher`, `wire_student`). `translated_by_user`: the page's translations a user asked for with Translate
        or Enter; a student's sentence is sent after each (`.success`). The page translates after a wall's "Show in
        every view" (playground/page.py)."""
        self.page, self.event = page, event
        common = dict(show_progress="hidden")
        for start in (self.start, self.present_start):
            started = start.click(None, None, self.address, js=links.ADDRESS_JS)  # in the browser
            event(started.then, self.begin, [], [self.address, self.teacher], [self.teacher, self.entry, self.said]
                  + self.teacher_view, **common)
        event([self.join.click, self.code.submit], self.join_typed, [], [self.code, self.member],
              [self.member, self.said, page.tabs.top] + self.student_view, **common)
        for translated in translated_by_user:  # in the browser: only a student's page sends a request (tp.sent)
            translated.success(None, js="() => tp.sent()")
        # off the queue: one write to the store, which must not wait behind a class's translations for a slot
        event(self.question.send, self.send_translated, [], [self.member, page.panel.text, page.panel.translation,
                                                             page.panel.notice], [self.said], queue=False, **common)
        self.ends(self.present_end)
        event([self.student_tick.tick], self.tick_student, [], [self.member], [self.member, self.said, page.tabs.top,
                                                                              page.panel.pair] + self.student_view,
              queue=False, **common)
        self.opened_sentence = event(self.wall.act, self.act, [], [self.teacher],
                                     [self.said, page.panel.pair, page.panel.text], **common)
        page.demo.unload(self.forget)
        event(self.question.vote, self.cast, [], [self.member], [self.question], **common)
        event(self.question.answer, self.answer, [], [self.member], [self.question], **common)

    def ends(self, button: gr.Button) -> None:
        """`button` ends the class: its summary written, then downloaded by the browser."""
        self.event([button.click], self.finish, [], [self.teacher], [self.summary, self.said, self.teacher]
                   + self.teacher_view, show_progress="hidden").success(
            None, js="() => document.getElementById('class-summary')?.click()")

    def wire_teacher(self, parts: TeacherParts) -> None:
        """A teacher's parts, built for the teacher's page: polled every TEACHER_TICK_S, End, and the list of
        students' buttons."""
        event, common = self.event, dict(show_progress="hidden")

        def tick(values: dict, request: gr.Request) -> dict:
            return self.tick_teacher(values, request, parts)
        panel = self.page.panel  # what the teacher's place reads (`keep_place`)
        event([gr.Timer(TEACHER_TICK_S).tick], tick, [], [self.teacher, panel.translation, panel.text, panel.present,
                                                          panel.which, *panel.decoding],
              [parts.join_fold, parts.card, parts.roster, self.teacher, self.said] + self.teacher_view, queue=False,
              **common)
        self.ends(parts.end)
        event(parts.roster.act, self.act, [], [self.teacher], [self.said], **common)  # a custom event: one at a time

    def wire_student(self, parts: StudentParts) -> None:
        """A student's controls, built for the student's page: the nickname and switches kept, Leave."""
        event, common, page = self.event, dict(show_progress="hidden"), self.page

        def settings(values: dict, request: gr.Request) -> dict:
            return self.settings(values, request, parts)
        event([parts.nickname.blur, parts.nickname.submit, parts.send.input, parts.follow.input], settings, [],
              [self.member, parts.nickname, parts.send, parts.follow],
              [self.member, parts.nickname, self.said, page.tabs.top, page.panel.pair] + self.student_view, **common)
        event([parts.leave.click], self.quit, [], [self.member],
              [self.said, page.tabs.top, self.member] + self.student_view, **common)

    def wire_views(self, views: dict, event, session) -> None:
        """The class's parts of the views built for one visitor (in their tab's gr.render: playground/page.py). The
        Lesson's quiz, and on a teacher's page the Lesson's and Step by step's questions to ask, with the class's
        votes beside them (and the quiz's chart), drawn by a timer of their own while the class runs."""
        common, teaching = dict(show_progress="hidden"), session.teaching
        if "lesson" in views:
            lesson = views["lesson"]

            def quiz_before(values: dict, request: gr.Request):
                return self.quiz_before(values, request, lesson)

            def quiz_after(values: dict, request: gr.Request):
                return self.quiz_after(values, request, lesson)
            for button, start in ((lesson.quiz_before, quiz_before), (lesson.quiz_after, quiz_after)):
                event([button.click], start, [], [self.teacher, lesson.rounds], [self.said, lesson.quiz, lesson.rounds],
                      **common)
            event([lesson.reveal.click], self.reveal_with_lesson, [], [self.teacher], [self.said], **common)
            event([lesson.ask.click], self.ask_lesson, [], [self.teacher], [self.said], **common)
        if "steps" in views:
            steps = views["steps"]

            def ask_steps(values: dict, request: gr.Request):
                return self.ask_steps(values, request, steps)
            event([steps.ask.click], ask_steps, [], [self.teacher, steps.index], [self.said], **common)
            event([steps.reveal.click], self.reveal_class, [], [self.teacher], [self.said], **common)
        shown = [views[unit] for unit in CLASS_VIEWS if unit in views]
        if not (teaching and shown):
            return
        for view in shown:  # made before the render is sent: drawn shown
            view.ask.visible = True
        if "steps" in views:
            views["steps"].reveal.visible = True
        event([gr.Timer(TEACHER_TICK_S).tick], self.votes_beside(shown), [], [self.teacher],
              [view.poll for view in shown] + [view.quiz for view in shown if view.name == "lesson"], queue=False,
              **common)

    def votes_beside(self, views: list):
        """A teacher's Lesson and Step by step (`views`, built for one visitor): the class's question, with its
        votes, beside the view that asked it (beside the Lesson's own question its words are not said again), and
        the quiz's chart in the Lesson; sent when they changed."""
        memory = ClassMemory()  # what these views were last sent

        @quiet
        def drawn(values: dict, request: gr.Request) -> dict:
            try:
                class_id = self.teaching_class(values)
            except ClassError:  # ended: the page's own tick says so, and builds these views again without it
                return {}
            version = self.store.version(class_id)
            if version is None or version == memory.seen:
                return {}
            state, _ = self.store.state(class_id, wall=0), Texts(language_of(request))
            poll, out = state.poll, {}
            for view in views:
                lesson = view.name == "lesson"
                out[view.poll] = (pages.poll_html(poll, show_counts=True, said=not lesson, _=_)
                                  if poll and bool(poll.step) == lesson else "")
                out |= {view.quiz: quiz.chart_html(state.quizzes, _)} if lesson else {}
            memory.seen = version
            return memory.changed(out)
        return drawn
