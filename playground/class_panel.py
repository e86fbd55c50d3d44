"""A class, together, on the page: the teacher starts a class (its QR code, link and code on the projector, the
class's wall, the polls), students join on their phones (`/?class=CODE`, or the code typed), send what they
translate, vote and follow the teacher. The class lives in the store (playground.store); what each page shows of it
comes from one poll of the class's version (a gr.Timer) and is sent only when it changed.

The teacher's controls are bound to a secret kept in the teacher's browser (gr.BrowserState, encrypted with a key
every replica shares), a student's membership to a random token kept in theirs: a reload, or a move to another
replica, keeps both. Every teacher action is checked against the secret here, on the server."""
from __future__ import annotations

import functools
import html
import re
import secrets

import gradio as gr

from playground import classroom, downloads, links
from playground.classroom import Limiter
from playground.store import ClassError, Store, normal_code, shown_code

from .context import Context
from .panel import TranslatePanel, words
from .view import friendly, log

WALL_JS = "tp.wall(element, trigger, 'act')"  # the wall's buttons fire its own "act" event (assets/page.js)
TEACHER_TICK_S, STUDENT_TICK_S = 1.0, 2.0  # how often a page asks whether its class changed


def plain(text: str) -> str:
    """A Lesson text (Markdown with escaped HTML) as plain text, for a page that escapes what it shows."""
    return html.unescape(re.sub(r"<[^>]+>", "", text.replace("**", "")))


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


class ClassPanel:
    """Built in three places: its entry (`entry_controls`, beside the panel's settings), a Start button in
    presentation mode's bar (`present_controls`), and the teacher's and the student's parts under the panel
    (`build`)."""

    def __init__(self, ctx: Context, store: Store):
        self.ctx, self.store = ctx, store
        key = store.browser_secret()
        self.teacher = gr.BrowserState({}, storage_key="tp-teacher", secret=key)  # {code, secret, link}
        self.member = gr.BrowserState({}, storage_key="tp-student", secret=key)  # {code, token, nickname, send, follow}
        self.joins = Limiter(10, 60)  # per session: joining (a code is not found by trying)
        self.misses = Limiter(30, 60)  # per client address: codes that were wrong
        self.sends = Limiter(12, 60)  # per student: sentences sent to the wall, votes changed
        self.starts = Limiter(5, 600)  # per session: classes started

    def entry_controls(self) -> None:
        with gr.Column(scale=1, min_width=240) as self.entry_column, gr.Accordion(
                "Class: start one, or join with its code", open=False, elem_id="class-entry") as self.entry:
            with gr.Row(equal_height=True):
                self.code = gr.Textbox(label="Class code", placeholder="ABCD-EFGH", max_length=24, scale=2,
                                       min_width=140, elem_id="class-code")
                self.join = gr.Button("Join", scale=0, min_width=80, elem_id="class-join")
            self.start = gr.Button("Start a class (I teach it)", elem_id="class-start")

    def present_controls(self) -> None:
        self.present_start = gr.Button("Start a class", size="sm", scale=0, min_width=90, elem_id="class-start-present")

    def build(self, panel: TranslatePanel) -> None:
        self.panel = panel
        self.address = gr.Textbox(visible=False)  # the page's address, put there by the browser (links.ADDRESS_JS)
        self.said = gr.Markdown(elem_classes="notice", elem_id="class-said")
        with gr.Accordion("Your class", visible=False, elem_id="class-teacher") as self.teaching:  # folds away
            with gr.Row():
                self.card = gr.HTML(elem_id="class-card")
                with gr.Column(scale=2, min_width=300):
                    self.poll = gr.HTML(elem_id="class-poll")
                    with gr.Row():
                        self.ask = gr.Button("Ask the class this question", size="sm", elem_id="class-ask")
                        self.reveal = gr.Button("Reveal to the class", size="sm", elem_id="class-reveal")
                        self.end = gr.Button("End the class: download its summary", size="sm", variant="stop",
                                             elem_id="class-end")
            self.wall = gr.HTML(elem_id="class-wall", js_on_load=WALL_JS)
        # hidden, outside the teacher's part (which ends with the class): the browser clicks it once the summary is
        # written (gradio #9230, as the Lesson's notes)
        self.summary = gr.DownloadButton("Summary", visible="hidden", elem_id="class-summary")
        with gr.Column(visible=False, elem_id="class-student") as self.studying:
            self.followed = gr.HTML(elem_id="class-follow")
            self.question = gr.HTML(elem_id="class-question")
            self.vote = gr.Radio([], label="Your answer", visible=False, elem_id="class-vote")
            self.voted = gr.Markdown(elem_id="class-voted")
            with gr.Row():
                self.nickname = gr.Textbox(label="Nickname (optional)", max_length=24, min_width=160,
                                           elem_id="class-nickname")
                with gr.Column(min_width=160):
                    self.send = gr.Checkbox(True, label="Send my sentences to the class", elem_id="class-send")
                    self.follow = gr.Checkbox(True, label="Follow the teacher", elem_id="class-follow-toggle")
            self.class_wall = gr.HTML(elem_id="class-student-wall")
            self.leave = gr.Button("Leave the class", size="sm", elem_id="class-leave")
        self.teacher_tick = gr.Timer(TEACHER_TICK_S, active=False)
        self.student_tick = gr.Timer(STUDENT_TICK_S, active=False)

    @property
    def teacher_view(self) -> list:
        return [self.teaching, self.card, self.poll, self.wall, self.teacher_tick]

    @property
    def opening(self) -> set:
        """What opening the page may set: a class's link joins it, a reload finds the class again."""
        return {self.member, self.teacher, self.entry, self.entry_column, self.said, self.page.tabs.top,
                self.nickname, self.send, self.follow} | set(self.teacher_view) | set(self.student_view)

    @property
    def student_view(self) -> list:
        return [self.studying, self.followed, self.question, self.vote, self.voted, self.class_wall, self.student_tick]

    # -------------------------------------------------------------------------
    # The teacher

    def teaching_class(self, values: dict) -> int:
        """The class id of this page's teacher; ClassError without the class's secret."""
        teacher = values.get(self.teacher) or {}
        return self.store.teacher(str(teacher.get("code", "")), str(teacher.get("secret", "")))

    @friendly
    def begin(self, values: dict, request: gr.Request) -> dict:
        if not self.starts.allow(request.session_hash or ""):
            return {self.said: "You started several classes just now: wait a few minutes before starting another."}
        code, secret = self.store.start()
        address = links.shared_address(values[self.address] or "", self.ctx.public_url)
        link = classroom.join_link(address, code)
        session, teacher = self.ctx_session(request), {"code": code, "secret": secret, "link": link}
        session.classroom.clear()
        return ({self.teacher: teacher, self.entry: gr.Accordion(open=False),
                 self.said: f"Class **{shown_code(code)}** started: the class joins with the QR code or the link."}
                | self.teacher_shows(session, teacher))

    def teacher_shows(self, session, teacher: dict) -> dict:
        """The teacher's part of the page, shown; the class drawn at its next tick."""
        session.classroom.pop("seen", None)
        return {self.teaching: gr.Accordion(f"Class {shown_code(teacher['code'])}: its QR code, questions and wall",
                                            visible=True, open=True), self.teacher_tick: gr.Timer(active=True),
                self.card: classroom.join_card(teacher["link"], teacher["code"], 0)}

    @quiet
    def tick_teacher(self, values: dict, request: gr.Request) -> dict:
        """The class as the projector shows it, when it changed; and what the teacher shows now, written for the
        students who follow (the sentence, and the Lesson step when the Lesson is open)."""
        session = self.ctx_session(request)
        try:
            class_id = self.teaching_class(values)
        except ClassError:  # ended elsewhere, or expired
            return {self.teaching: gr.Accordion(visible=False), self.teacher_tick: gr.Timer(active=False),
                    self.teacher: {}, self.said: "The class has ended."}
        self.write_shown(session, class_id, values)
        version = self.store.version(class_id)
        if version is None or version == session.classroom.get("seen"):
            return {}
        state = self.store.state(class_id)
        session.classroom["seen"] = state.version
        teacher = values[self.teacher]
        drawn = {self.card: classroom.join_card(teacher["link"], state.code, state.students),
                 self.poll: classroom.poll_html(state.poll, show_counts=True),
                 self.wall: classroom.wall_html(state, teacher=True)}
        return changed(session, drawn)

    def write_shown(self, session, class_id: int, values: dict) -> None:
        result, page = values.get(self.page.result), self.page
        if result is None:
            return
        number = int(values.get(page.views["lesson"].number) or 1)
        on_lesson = session.open == "lesson"
        shown = (result.pair, result.text, number if on_lesson else None)
        if session.classroom.get("shown") == shown:
            return
        step = page.views["lesson"].made_step(result, number) if on_lesson else None
        self.store.show(class_id, result.pair, result.text, values.get(self.panel.translation) or
                        result.translation.text, shown[2], step.title if step else "", plain(step.question) if step
                        else "")
        session.classroom["shown"] = shown

    @friendly
    def ask_class(self, values: dict, request: gr.Request) -> dict:
        """The Lesson step's question (or, in Step by step, which piece comes next at the step shown) as a poll."""
        class_id, result = self.teaching_class(values), values.get(self.page.result)
        if result is None:
            return {self.said: "Translate a sentence first: the question is about it."}
        session = self.ctx_session(request)
        if session.open == "steps":
            steps = self.page.views["steps"]
            question, choices, right, explained = classroom.next_piece_poll(result, int(values[steps.index]) - 1)
        else:
            step = self.page.views["lesson"].made_step(result, int(values[self.page.views["lesson"].number] or 1))
            if not step.question or len(step.choices) < 2:
                return {self.said: f"Step {step.number} has no question to vote on for this sentence."}
            question, choices, right = step.question, step.choices, step.right
            explained = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", step.answer)  # Markdown's bold; the rest is escaped
            question = plain(question)  # the poll escapes it
        self.store.ask(class_id, question, choices, right, explained)
        return {self.said: "The question is on the class's phones: their votes come in below."}

    @friendly
    def reveal_class(self, values: dict) -> dict:
        self.store.reveal(self.teaching_class(values))
        return {self.said: "Revealed on every phone."}

    @friendly
    def finish(self, values: dict) -> dict:
        """The class's summary written for download, then the class deleted."""
        state = self.store.end(self.teaching_class(values))
        labels = {pair: self.ctx.label(pair) for pair in self.ctx.pairs}
        path = downloads.write(self.ctx.downloads, f"class-{state.code.lower()}", classroom.summary(state, labels),
                               suffix=".html")
        return {self.summary: gr.update(value=str(path)), self.teacher: {}, self.teaching: gr.Accordion(visible=False),
                self.teacher_tick: gr.Timer(active=False),
                self.said: f"Class {shown_code(state.code)} ended: its summary is downloading, and its data is deleted."}

    @friendly
    def act(self, values: dict, request: gr.Request, clicked: gr.EventData) -> dict:
        """A wall button: "open" puts the sentence in the panel (the page then translates it, and every view shows
        it), "hide" takes it off every screen."""
        class_id = self.teaching_class(values)
        try:
            sentence_id = int(clicked.id)
        except (TypeError, ValueError, AttributeError):
            raise ClassError("That is not a sentence of the wall.") from None
        if getattr(clicked, "act", "") == "hide":
            self.store.hide(class_id, sentence_id)
            return {self.said: "Hidden on every screen."}
        found = self.store.sentence(class_id, sentence_id)
        if found["pair"] not in self.ctx.pairs:
            raise ClassError("That sentence's language pair is not loaded here.")
        return {self.panel.pair: found["pair"], self.panel.text: found["text"]}

    # -------------------------------------------------------------------------
    # A student

    def enrol(self, code: str, member: dict, request: gr.Request) -> dict:
        """This page in the class with `code` (as the store writes it: normal_code), its token kept when it had
        joined it before."""
        session, address = self.ctx_session(request), getattr(getattr(request, "client", None), "host", "") or ""
        if not self.joins.allow(request.session_hash or ""):
            raise ClassError("Too many tries: wait a minute, then type the code again.")
        same = member.get("code") == code and member.get("token")
        token = member["token"] if same else secrets.token_urlsafe(18)
        nickname = member.get("nickname", "") if same else ""
        try:
            self.store.join(code, token, nickname)
        except ClassError:
            if not self.misses.allow(address):
                raise ClassError("Too many wrong codes from here: wait a minute.") from None
            raise
        kept = member if same else {}  # the switches of a page that had joined this class before
        member = {"code": code, "token": token, "nickname": nickname, "send": kept.get("send", True),
                  "follow": kept.get("follow", True)}
        session.classroom.clear()
        session.student = True
        return {self.member: member, self.studying: gr.Column(visible=True), self.student_tick: gr.Timer(active=True),
                self.entry_column: gr.Column(visible=False), self.page.tabs.top: gr.Tabs(visible=False),
                self.nickname: nickname, self.send: member["send"], self.follow: member["follow"],
                self.said: f"You are in class **{shown_code(code)}**. What you translate goes to the "
                           "class's wall unless you switch it off below."}

    @friendly
    def join_typed(self, values: dict, request: gr.Request) -> dict:
        return self.enrol(normal_code(values[self.code] or ""), values.get(self.member) or {}, request)

    def membership(self, values: dict) -> tuple[int, dict]:
        member = values.get(self.member) or {}
        return self.store.member(str(member.get("code", "")), str(member.get("token", ""))), member

    @quiet
    def tick_student(self, values: dict, request: gr.Request) -> dict:
        session = self.ctx_session(request)
        try:
            class_id = session.classroom.get("class") or self.membership(values)[0]
        except ClassError:
            return self.left(session) | {self.said: "The class has ended."}
        session.classroom["class"] = class_id
        version = self.store.version(class_id)
        if version is None:
            return self.left(session) | {self.said: "The class has ended."}
        if version == session.classroom.get("seen"):
            return {}
        state, member = self.store.state(class_id, wall=4 * classroom.PHONE_WALL), values[self.member]
        session.classroom["seen"] = state.version
        poll = state.poll
        drawn = {self.followed: classroom.followed_html(state) if member.get("follow", True) else "",
                 self.question: classroom.poll_html(poll, show_counts=bool(poll and poll.revealed)),
                 self.class_wall: classroom.wall_html(state, teacher=False, limit=classroom.PHONE_WALL)}
        out = changed(session, drawn)
        poll_id = poll.id if poll else None
        if poll_id != session.classroom.get("poll"):  # a new question: its choices, no vote yet
            session.classroom["poll"] = poll_id
            out[self.vote] = gr.Radio([(c, i) for i, c in enumerate(poll.choices)] if poll else [], value=None,
                                      visible=poll is not None, interactive=True)
            out[self.voted] = ""
        if poll is not None and poll.revealed and not session.classroom.get("closed") == poll_id:
            session.classroom["closed"] = poll_id
            out[self.vote] = gr.Radio(interactive=False)
        return out

    def left(self, session) -> dict:
        session.classroom.clear()
        session.student = False
        return {self.member: {}, self.studying: gr.Column(visible=False), self.student_tick: gr.Timer(active=False),
                self.page.tabs.top: gr.Tabs(visible=True), self.entry_column: gr.Column(visible=True)}

    @friendly
    def cast(self, values: dict, request: gr.Request) -> dict:
        class_id, member = self.membership(values)
        session, choice = self.ctx_session(request), values[self.vote]
        if choice is None or session.classroom.get("poll") is None:
            return {}
        if not self.sends.allow("vote " + member["token"]):
            raise ClassError("Too many changes: wait a moment before you vote again.")
        self.store.vote(class_id, member["token"], session.classroom["poll"], int(choice))
        return {self.voted: "Your vote is in: you can change it until the teacher reveals the answer."}

    @friendly
    def settings(self, values: dict, request: gr.Request) -> dict:
        """The nickname and the two switches, kept in the student's browser; the nickname in the class too. The
        follow box is emptied at once when following stops, and drawn again at the next poll when it starts."""
        member = dict(values.get(self.member) or {})
        if not member.get("token"):
            return {}
        session = self.ctx_session(request)
        session.classroom.pop("seen", None)  # the next poll draws what the switches now ask for
        session.classroom.get("sent", {}).pop(id(self.followed), None)
        nickname = (values[self.nickname] or "").strip()[:24]
        if nickname != member.get("nickname", ""):
            self.store.join(member["code"], member["token"], nickname)
        member |= {"nickname": nickname, "send": bool(values[self.send]), "follow": bool(values[self.follow])}
        return {self.member: member} | ({} if member["follow"] else {self.followed: ""})

    @friendly
    def quit(self, values: dict, request: gr.Request) -> dict:
        return self.left(self.ctx_session(request)) | {self.said: "You left the class."}

    def sent(self, values: dict, result, shown: dict, request) -> dict:
        """After a student's translation: the sentence, its translation, unsure words and warnings sent to the
        class's wall (unless switched off); a refusal said in place, the translation shown all the same."""
        member = values.get(self.member) or {}
        if not member.get("token") or not member.get("send", True):
            return {}
        try:
            class_id, _ = self.membership(values)
        except ClassError:
            return {}
        if not self.sends.allow("send " + member["token"]):
            return {self.said: "Sent many sentences just now: this one stayed on your phone. Wait a moment."}
        translation = shown.get(self.panel.translation) or result.translation.text
        notice = plain(str(shown.get(self.panel.notice) or ""))
        self.store.send(class_id, member["token"], member.get("nickname", ""), result.pair, values[self.panel.text],
                        translation, [w for w, unsure in words([result.translation]) if unsure], notice)
        return {}

    # -------------------------------------------------------------------------
    # Opening the page: ?class=CODE joins; a teacher's or a student's reload finds its class again

    def opened(self, query: dict, values: dict, request: gr.Request) -> dict:
        member, teacher = values.get(self.member) or {}, values.get(self.teacher) or {}
        session = self.ctx_session(request)
        if "class" in query:
            try:
                return self.enrol(normal_code(query["class"]), member, request)
            except ClassError as e:
                return {self.said: str(e), self.entry: gr.Accordion(open=True)}
        if teacher.get("code"):
            try:
                self.teaching_class(values)
                return self.teacher_shows(session, teacher)
            except ClassError:
                return {self.teacher: {}}
        if member.get("code"):
            try:
                return self.enrol(member["code"], member, request)
            except ClassError:
                return {self.member: {}}
        return {}

    def ctx_session(self, request):
        return self.page.sessions.of(request)

    # -------------------------------------------------------------------------

    def wire(self, page, event) -> None:
        """The class's events; the page translates after a wall's "Show in every view" (playground/page.py)."""
        self.page = page
        common = dict(show_progress="hidden")
        for start in (self.start, self.present_start):
            started = start.click(None, None, self.address, js=links.ADDRESS_JS)  # in the browser
            event(started.then, self.begin, [], [self.address], [self.teacher, self.entry, self.said]
                  + self.teacher_view, **common)
        event([self.join.click, self.code.submit], self.join_typed, [], [self.code, self.member],
              [self.member, self.entry_column, self.said, page.tabs.top, self.nickname, self.send, self.follow]
              + self.student_view, **common)
        lesson, steps = page.views["lesson"], page.views["steps"]
        event([self.teacher_tick.tick], self.tick_teacher, [], [self.teacher, lesson.number, page.panel.translation],
              self.teacher_view + [self.teacher, self.said], queue=False, **common)
        event([self.ask.click], self.ask_class, [], [self.teacher, lesson.number, steps.index], [self.said], **common)
        event([self.reveal.click], self.reveal_class, [], [self.teacher], [self.said], **common)
        event([self.end.click], self.finish, [], [self.teacher],
              [self.summary, self.teacher, self.said] + self.teacher_view, **common).success(
            None, js="() => document.getElementById('class-summary')?.click()")
        self.opened_sentence = event(self.wall.act, self.act, [], [self.teacher],
                                     [self.said, page.panel.pair, page.panel.text], **common)
        event([self.student_tick.tick], self.tick_student, [], [self.member],
              self.student_view + [self.member, self.said, page.tabs.top, self.entry_column], queue=False, **common)
        event([self.vote.input], self.cast, [], [self.member, self.vote], [self.voted], **common)
        event([self.nickname.blur, self.nickname.submit, self.send.input, self.follow.input], self.settings, [],
              [self.member, self.nickname, self.send, self.follow], [self.member, self.followed], **common)
        event([self.leave.click], self.quit, [], [self.member],
              [self.said, page.tabs.top, self.member, self.entry_column] + self.student_view, **common)


def changed(session, drawn: dict) -> dict:
    """Of `drawn` (component -> HTML), what differs from what this page was last sent."""
    sent = session.classroom.setdefault("sent", {})
    out = {c: v for c, v in drawn.items() if sent.get(id(c)) != v}
    sent.update({id(c): v for c, v in out.items()})
    return out

