"""A class, together, on the page: the teacher starts a class (its QR code, link and code on the projector, the
list of students, the wall), asks the Lesson's questions beside them and reveals them with the Lesson's own Reveal;
students join on their phones (`/?class=CODE`, or the code typed), send what they translate, vote and follow the
teacher. The class lives in the store (store.py); what each page shows of it comes from one poll of the class's
version (a gr.Timer) and is sent only when it changed.

This module is the class's frame on the page: its parts (built into the page, or for the page that needs them), what
each page remembers of its class, and the page's opening. The handlers live by role beside it: the teacher's
(teacher.py), the questions the teacher asks (questions.py) and the student's (student.py); all of them read and set
the page through one interface (common.PageParts).

The class listens to the page's events; the page's runtime does not know it exists. A sentence goes to the wall only
after the student's own Translate or Enter (`.success` of those events): a pair switched, an example picked, a
reload or a link never sends. The teacher's controls are bound to a secret kept in the teacher's browser
(gr.BrowserState, encrypted with a key every replica shares), a student to a random token kept in theirs (one
student per browser): a reload, or a move to another replica, keeps both. Every teacher action is checked against
the secret here, on the server; the rate limits are counted in the store, where every replica sees them."""
from __future__ import annotations

import threading
from collections import OrderedDict
from urllib.parse import parse_qsl

import gradio as gr

from ..context import Context
from ..gradio_internals import as_on_the_page
from . import pages
from .common import ACT_JS, CLASS_VIEWS, STUDENT_TICK_S, ClassMemory, PageParts
from .questions import Questions
from .store import ClassError, Store, TakenOut, normal_code
from .student import StudentParts, StudentSide
from .teacher import PLACE_FIELDS, TeacherParts, TeacherSide
from playground.i18n import Texts, _l, language_of

# a phone's choice buttons fire the question's "vote" event, and a quiz's buttons its "answer" event
VOTE_JS = "tp.question(element, trigger, 'vote', 'answer')"


class ClassPanel:
    """Built in five places: its entry (`entry_controls`, beside the panel's settings), Start and End buttons in
    presentation mode's bar (`present_controls`), the phone's question above the panel (`question_controls`), a
    student's view of the class and the teacher's or the student's own parts, built for the page that needs them,
    under the panel (`build`, `build_parts`), and the wall under the views (`wall_controls`). Once the page is
    built (`wire`), its handlers by role: `teaching` (TeacherSide), `questions` (Questions), `studying`
    (StudentSide)."""

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

    def teaching_class(self, values: dict) -> int:
        """The class id of this page's teacher; ClassError without the class's secret."""
        teacher = values.get(self.teacher) or {}
        return self.store.teacher(str(teacher.get("code", "")), str(teacher.get("secret", "")))

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

    def build(self) -> None:
        """The class's notices, and the teacher's or the student's own parts, built for the page that runs or joins a
        class (`build_parts`) each time it starts, joins, leaves or ends one: `parts` set to a new number."""
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
            self.teaching.wire_teacher(TeacherParts.build(pages.join_card(teacher["link"], teacher["code"], 0, _=_)))
        elif session.panel_only and member.get("code"):
            self.studying.wire_student(StudentParts.build(member))
        as_on_the_page()

    @property
    def teacher_view(self) -> list:
        """What starting and ending a class set: the wall, the entry, the teacher's parts built again (`parts`), and
        the Lesson and Step by step built again for a page that has them (a teacher's are built with their class's
        parts: Questions.wire_views)."""
        return [self.wall_fold, self.wall, self.entry_column, self.present_start, self.present_end, self.parts,
                *(self.page.rebuilt[unit] for unit in CLASS_VIEWS)]

    @property
    def student_view(self) -> list:
        return [self.question, self.following, self.student_tick, self.entry_column, self.present_start, self.parts]

    @property
    def opening(self) -> set:
        """What opening the page may set: a class's link joins it, a reload finds the class again."""
        return {self.member, self.teacher, self.entry, self.said, self.page.top} | set(self.teacher_view) | set(
            self.student_view)

    # -------------------------------------------------------------------------
    # Opening the page: ?class=CODE joins; a teacher's or a student's reload finds its class again, and a teacher's
    # page its place

    def on_load(self, query: dict, values: dict, request: gr.Request) -> dict:
        member, teacher = values.get(self.member) or {}, values.get(self.teacher) or {}
        if "class" in query:
            try:
                return self.studying.enrol(normal_code(query["class"]), member, request)
            except ClassError as e:  # said on top too, in the phone's first screen
                said = e.said(Texts(language_of(request)))
                return {self.said: said, self.question: pages.out_html(said), self.entry: gr.Accordion(open=True)}
        if teacher.get("code"):
            try:
                self.teaching_class(values)
                return self.teaching.teacher_shows(request)
            except ClassError:
                return {self.teacher: {}}
        if member.get("code"):
            try:
                return self.studying.enrol(member["code"], member, request)
            except TakenOut as e:  # kept: the same browser stays out
                said = e.said(Texts(language_of(request)))
                return {self.said: said, self.question: pages.out_html(said)}
            except ClassError:
                return {self.member: {}, self.said: ""}
        return {}

    def place(self, query: dict, values: dict) -> dict:
        """Where a teacher's page opens: the place its browser kept while it ran the class (TeacherSide.keep_place),
        as a link's query, while that class runs; the page's own link (`query`) when it says where to go, or when
        this page runs no class."""
        teacher = values.get(self.teacher) or {}
        if teacher.get("place") and not query.keys() & PLACE_FIELDS:
            try:
                self.teaching_class(values)
                return dict(parse_qsl(str(teacher["place"]))) | query
            except ClassError:
                pass
        return query

    # -------------------------------------------------------------------------

    def wire(self, page, event, translated_by_user: list) -> None:
        """The class's events on the page, by role (a teacher's and a student's own parts wire theirs as they are
        built: `build_parts`). `page`: the page (runtime.Page), read here once into the class's one interface to it
        (PageParts). `translated_by_user`: the page's translations a user asked for with Translate or Enter; a
        student's sentence is sent after each (`.success`). The page translates after a wall's "Show in every view"
        (`opened_sentence`, playground/page.py)."""
        self.page = PageParts(page.panel, page.result, page.sessions, page.tabs.top,
                              {unit: page.tabs.built[unit] for unit in CLASS_VIEWS}, lambda key: page.views[key],
                              page.demo)
        self.event = event
        self.teaching, self.questions, self.studying = TeacherSide(self), Questions(self), StudentSide(self)
        self.opened_sentence = self.teaching.wire(event)
        self.studying.wire(event, translated_by_user)
