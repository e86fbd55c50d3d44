"""A student's part of a class on the page: join by the link or the code typed (one student per browser, its token
kept in the browser), the class as a phone shows it (what the teacher shows, the wall, the question first on the
page), votes and quiz answers, a nickname and two switches, Leave, and each sentence the student translated sent to
the wall. Joins, sends, votes and answers are rate-limited in the store, where every replica counts them."""
from __future__ import annotations

import html
import secrets
from dataclasses import dataclass

import gradio as gr
from transformer.translator import sentences

from .. import doubts, quiz
from ..context import TICKETS
from ..doubts import words_with_doubts
from ..view import to_page
from . import pages, passes
from .common import ClassMemory, bold, client_address, plain, quiet
from .store import ClassError, TakenOut, normal_code, shown_code
from playground.i18n import N_, Texts, _l, language_of

# The rate limits, counted in the store for every replica: (events, per seconds)
NEW_STUDENTS = (150, 600)  # per client address: a lecture hall may share one router; a script flooding a class
# is stopped here, and seen and shut out by the teacher (the list of students, "Close to new students")
WRONG_CODES = (30, 60)  # per client address: codes that were wrong (a code is not found by trying)
SENDS = (12, 60)  # per student: sentences sent to the wall, and votes changed
ANSWERS = (60, 60)  # per student: a quiz's answers (six questions, changed as a student thinks again)


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


class StudentSide:
    """The student's handlers, on the class's parts of the page (`frame`, a ClassPanel) and what the class reads of
    the page (`frame.page`)."""

    def __init__(self, frame):
        self.frame, self.store, self.ctx, self.page = frame, frame.store, frame.ctx, frame.page

    def wire(self, event, translated_by_user: list) -> None:
        """Join by the code typed; after each of a user's own Translate or Enter, the sentence sent when the server
        finds the page a student's (`send_translated`: by the token the student's browser keeps); the page's poll of
        its class; votes and quiz answers."""
        frame, page, common = self.frame, self.page, dict(show_progress="hidden")
        event([frame.join.click, frame.code.submit], self.join_typed, [], [frame.code, frame.member],
              [frame.member, frame.said, page.top] + frame.student_view, **common)
        # off the queue: one write to the store, which must not wait behind a class's translations for a slot
        for translated in translated_by_user:
            event(translated.success, self.send_translated, [], [frame.member, page.panel.text,
                                                                 page.panel.translation, page.panel.notice],
                  [frame.said], queue=False, **common)
        event([frame.student_tick.tick], self.tick_student, [], [frame.member],
              [frame.member, frame.said, page.top, page.panel.pair] + frame.student_view, queue=False, **common)
        event(frame.question.vote, self.cast, [], [frame.member], [frame.question], **common)
        event(frame.question.answer, self.answer, [], [frame.member], [frame.question], **common)

    def enrol(self, code: str, member: dict, request: gr.Request) -> dict:
        """This page in the class with `code` (as the store writes it: normal_code), its token kept when this
        browser had joined it before (one student per browser)."""
        address, _ = client_address(request, self.frame.trusted), Texts(language_of(request))
        same = member.get("code") == code and member.get("token")
        token = member["token"] if same else secrets.token_urlsafe(18)
        nickname = member.get("nickname", "") if same else ""
        try:
            self.store.join(code, token, nickname, allow_new=lambda: self.frame.limited("join", address, NEW_STUDENTS),
                            passless=not passes.has_pass(request, self.frame.secret))
        except ClassError as e:
            if "No class has this code" in str(e) and not self.frame.limited("miss", address, WRONG_CODES):
                raise ClassError(N_("Too many wrong codes from here: wait a minute.")) from None
            raise
        kept = member if same else {}  # the switches of a page that had joined this class before
        member = {"code": code, "token": token, "nickname": nickname, "send": kept.get("send", True),
                  "follow": kept.get("follow", True)}
        self.frame.memory(request, fresh=True)  # a page new to this class
        self.page.sessions.of(request).panel_only = True
        frame = self.frame
        return {frame.member: member, frame.parts: next(TICKETS), frame.student_tick: gr.Timer(active=True),
                frame.entry_column: gr.Column(visible=False),
                frame.present_start: gr.Button(visible=False), self.page.top: gr.Tabs(visible=False),
                frame.question: "",
                frame.said: _("You are in class {code}. What you translate goes to the class's wall unless you "
                              "switch it off below.", code=bold(shown_code(code)))}

    @to_page
    def join_typed(self, values: dict, request: gr.Request) -> dict:
        return self.enrol(normal_code(values[self.frame.code] or ""), values.get(self.frame.member) or {}, request)

    def membership(self, values: dict) -> tuple[int, dict]:
        member = values.get(self.frame.member) or {}
        return self.store.member(str(member.get("code", "")), str(member.get("token", ""))), member

    @quiet
    def tick_student(self, values: dict, request: gr.Request) -> dict:
        """What a student's page shows of the class, when it changed."""
        memory, _ = self.frame.memory(request), Texts(language_of(request))
        try:
            class_id, member = self.membership(values)  # each time: a student taken out is told at once
        except TakenOut as e:  # out for good: the browser keeps its token, which the class refuses from now on
            return self.left(request, member=values.get(self.frame.member)) | {
                self.frame.said: e.said(_), self.frame.question: pages.out_html(e.said(_))}
        except ClassError as e:
            said = _("The class has ended.") if "No class" in str(e) else e.said(_)
            return self.left(request) | {self.frame.said: said}
        memory.class_id = class_id
        version = self.store.version(class_id)
        if version is None:
            return self.left(request) | {self.frame.said: _("The class has ended.")}
        if version == memory.seen:
            return {}
        state = self.store.state(class_id, wall=4 * pages.PHONE_WALL)
        memory.seen, memory.poll, memory.quiz = state.version, state.poll, state.quiz
        mine = self.store.vote_of(state.poll.id, member["token"]) if state.poll else None
        followed = pages.followed_html(state, _) if member.get("follow", True) else ""
        drawn = {self.frame.following: f'<div id="class-follow">{followed}</div><div id="class-student-wall">'
                                       f'{pages.wall_html(state, teacher=False, limit=pages.PHONE_WALL, _=_)}</div>',
                 self.frame.question: self.phone_box(memory, member, mine, _),
                 self.page.panel.pair: self.menu(class_id, values.get(self.page.panel.pair), _)}
        return memory.changed(drawn)

    def menu(self, class_id: int, chosen: str | None, _: Texts) -> dict:
        """A phone's language menu: the server's pairs, and the model the teacher shared when this process holds it
        (named in the phone's language by `_`); what the phone had chosen stays chosen while the menu has it."""
        key = self.frame.models.get(class_id, (None, None))[0]
        shared = key is not None and self.ctx.uploads.translator(key) is not None
        choices = self.ctx.menu([(_("{model} (the teacher's)", model=self.ctx.label(key)), key)] if shared else [])
        keys = [k for _, k in choices]
        return gr.update(choices=choices, value=chosen if chosen in keys else next(iter(keys), None))

    def left(self, request, member: dict | None = None) -> dict:
        """The page out of its class; `member`: what its browser keeps of it (a student taken out keeps the token the
        class refuses), else nothing."""
        self.frame.memory(request, fresh=True)
        self.page.sessions.of(request).panel_only = False
        frame = self.frame
        return {frame.member: member or {}, frame.parts: next(TICKETS), frame.student_tick: gr.Timer(active=False),
                self.page.top: gr.Tabs(visible=True), frame.entry_column: gr.Column(visible=True),
                frame.present_start: gr.Button(visible=True), frame.question: "", frame.following: ""}

    @to_page
    def cast(self, values: dict, request: gr.Request, clicked: gr.EventData) -> dict:
        """A phone's vote on the question it shows (the poll's id comes with the tap: a phone moved to another
        replica votes on what it shows), drawn at once with the vote marked."""
        class_id, member = self.membership(values)
        memory = self.frame.memory(request)
        try:
            choice, poll_id = int(getattr(clicked, "choice", "")), int(getattr(clicked, "poll", ""))
        except (TypeError, ValueError):
            raise ClassError(N_("That is not one of the choices.")) from None
        if not self.frame.limited("vote", member["token"], SENDS):
            raise ClassError(N_("Too many changes: wait a moment before you vote again."))
        self.store.vote(class_id, member["token"], poll_id, choice)
        poll = memory.poll if memory.poll is not None and memory.poll.id == poll_id else None
        _ = Texts(language_of(request))
        return memory.changed({self.frame.question: self.phone_box(memory, member, choice, _)}) if poll else {}

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
        memory, _ = self.frame.memory(request), Texts(language_of(request))
        try:
            quiz_id, question = int(getattr(clicked, "quiz", "")), int(getattr(clicked, "question", ""))
            choice = int(getattr(clicked, "choice", ""))
        except (TypeError, ValueError):
            raise ClassError(N_("That is not one of the choices.")) from None
        if not self.frame.limited("answer", member["token"], ANSWERS):
            raise ClassError(N_("Too many changes: wait a moment before you answer again."))
        self.store.answer_quiz(class_id, member["token"], quiz_id, question, choice)
        if memory.quiz is None or memory.quiz.id != quiz_id:
            return {}
        mine = self.store.vote_of(memory.poll.id, member["token"]) if memory.poll else None
        return memory.changed({self.frame.question: self.phone_box(memory, member, mine, _)})

    @to_page
    def settings(self, values: dict, request: gr.Request, parts: StudentParts | None = None) -> dict:
        """The nickname and the two switches (of `parts`, the student's; by default a copy off the page), kept in the
        student's browser; the nickname in the class too (unique there). The class is drawn again at once as the
        switches now ask (the teacher's sentence shown or not)."""
        member = dict(values.get(self.frame.member) or {})
        if not member.get("token"):
            return {}
        memory, parts = self.frame.memory(request), parts or self.frame.off_page[1]
        memory.seen = None
        nickname = " ".join((values[parts.nickname] or "").split())[:24]
        said = {}
        if nickname != member.get("nickname", ""):
            try:
                self.store.join(member["code"], member["token"], nickname)
                _ = Texts(language_of(request))
                said = {self.frame.said: _("Your nickname in the class: {nickname}.",
                                           nickname=bold(html.escape(nickname))) if nickname else ""}
            except ClassError as e:  # taken, or posing as the teacher: the old one stays
                nickname, said = member.get("nickname", ""), {self.frame.said: e.said(Texts(language_of(request)))}
        member |= {"nickname": nickname, "send": bool(values[parts.send]), "follow": bool(values[parts.follow])}
        return self.tick_student(values | {self.frame.member: member}, request) | {self.frame.member: member,
                                                                                 parts.nickname: nickname} | said

    @to_page
    def quit(self, values: dict, request: gr.Request) -> dict:
        _ = Texts(language_of(request))
        return self.left(request) | {self.frame.said: _("You left the class.")}

    @to_page
    def send_translated(self, values: dict, request: gr.Request) -> dict:
        """After a user's own Translate or Enter, once the page shows the translation (its `.success`): on a student's
        page (its browser keeps a student's token: nothing is sent from any other page), the sentence, its
        translation, unsure words and warnings sent to the class's wall (unless switched off). Only what the box holds
        and the page shows is sent, once; a refusal is said in place, the translation shown all the same."""
        member, result = values.get(self.frame.member) or {}, values.get(self.page.result)
        if not member.get("token") or not member.get("send", True) or result is None:
            return {}
        text = values[self.page.panel.text] or ""
        parts = sentences(text) if text.strip() else []
        if not parts or parts[0] != result.text or result.pair != values[self.page.panel.pair]:
            return {}  # the page shows another translation than this text's (a newer click is on its way)
        memory = self.frame.memory(request)
        if memory.sent == (result.pair, text):
            return {}  # Translate pressed again on the same sentence: already on the wall
        try:
            class_id, _ = self.membership(values)
        except ClassError:
            return {}
        if not self.frame.limited("send", member["token"], SENDS):
            _ = Texts(language_of(request))
            return {self.frame.said: _("Sent many sentences just now: this one stayed on your phone. Wait a moment.")}
        if len(parts) == 1:  # what the checks found, kept as what it is: every screen says it in its own language
            translator = self.ctx.translator(result.pair)
            found = doubts.noticed(translator, result.text, result.translation)
            notice = doubts.kept(found, result.translation.truncated) if doubts.said(found) or \
                result.translation.truncated else ""
        else:  # several sentences: the notice as the student read it
            notice = plain(str(values.get(self.page.panel.notice) or ""))
        self.store.send(class_id, member["token"], member.get("nickname", ""), result.pair, text,
                        values.get(self.page.panel.translation) or result.translation.text,
                        [w for w, unsure in words_with_doubts([result.translation]) if unsure], notice)
        memory.sent = (result.pair, text)
        return {self.frame.said: ""}  # a notice that no longer holds goes

    def wire_student(self, parts: StudentParts) -> None:
        """A student's controls, built for the student's page: the nickname and switches kept, Leave."""
        frame, page, common = self.frame, self.page, dict(show_progress="hidden")

        def settings(values: dict, request: gr.Request) -> dict:
            return self.settings(values, request, parts)
        frame.event([parts.nickname.blur, parts.nickname.submit, parts.send.input, parts.follow.input], settings, [],
                    [frame.member, parts.nickname, parts.send, parts.follow],
                    [frame.member, parts.nickname, frame.said, page.top, page.panel.pair] + frame.student_view,
                    **common)
        frame.event([parts.leave.click], self.quit, [], [frame.member],
                    [frame.said, page.top, frame.member] + frame.student_view, **common)
