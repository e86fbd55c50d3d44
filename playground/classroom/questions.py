"""The questions a teacher asks the class: the Lesson step's and Step by step's (their choices the model's own, for
the sentence the class was shown), revealed with the Lesson's own Reveal, the quiz before and after the Lesson, and
the class's votes drawn beside the view that asked (a teacher's Lesson and Step by step, built for the teacher's
page: `wire_views`)."""
from __future__ import annotations

import re

import gradio as gr
from transformer.decoding import DecodeOptions
from transformer.translator import sentences

from .. import context, quiz
from ..view import to_page
from . import pages
from .common import CLASS_VIEWS, TEACHER_TICK_S, ClassMemory, plain, quiet
from .store import ClassError
from playground.i18n import N_, Texts, language_of


def phone_words(answer: str) -> str:
    """A Lesson answer as a phone shows it: what points at the projector's figure ("the orange square", "the orange
    path in the tree is ...") left out, since a phone does not show the figure."""
    answer = re.sub(r"\s*\([^()]*\borange\b[^()]*\)", "", answer)
    return " ".join(s.strip() for s in sentences(answer) if not re.search(r"\borange\b", s))


class Questions:
    """The teacher's questions, on the class's parts of the page (`frame`, a ClassPanel) and what the class reads of
    the page (`frame.page`)."""

    def __init__(self, frame):
        self.frame, self.store, self.ctx, self.page = frame, frame.store, frame.ctx, frame.page

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
        class_id = self.frame.teaching_class(values)
        result = self.shown_result(class_id, values)
        step = self.page.lesson.made_step(result, self.page.sessions.of(request).lesson_step,
                                                   language_of(request))
        if not step.question or len(step.choices) < 2:
            raise ClassError(N_("Step {number} has no question to vote on for this sentence."), number=step.number)
        explained = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", phone_words(step.answer))  # Markdown's bold; the rest is
        # escaped
        self.store.ask(class_id, plain(step.question), step.choices, step.right, explained, pair=result.pair,
                       text=result.text, step=step.number)
        _ = Texts(language_of(request))
        return {self.frame.said: _("The question is on the class's phones: their votes come in beside it.")}

    @to_page
    def ask_steps(self, values: dict, request: gr.Request | None = None, steps=None) -> dict:
        """Step by step's question (of `steps`, a visitor's view; by default the page's copy): which piece comes next
        at the step shown, its choices the model's top pieces."""
        class_id, _ = self.frame.teaching_class(values), Texts(language_of(request))
        result, steps = self.shown_result(class_id, values), steps or self.page.steps
        question, choices, right, explained = pages.next_piece_poll(result, int(values[steps.index]) - 1, _)
        self.store.ask(class_id, question, choices, right, explained, pair=result.pair, text=result.text)
        return {self.frame.said: _("The question is on the class's phones: their votes come in beside it.")}

    @to_page
    def reveal_class(self, values: dict, request: gr.Request | None = None) -> dict:
        self.store.reveal(self.frame.teaching_class(values))
        _ = Texts(language_of(request))
        return {self.frame.said: _("Revealed on every phone.")}

    @quiet
    def reveal_with_lesson(self, values: dict, request: gr.Request | None = None) -> dict:
        """The Lesson's own Reveal, on a teacher's page whose class has this step's question open: the class sees
        the answer too (one Reveal for the projector and the phones). Nothing on any other page."""
        teacher = values.get(self.frame.teacher) or {}
        if not teacher.get("code"):
            return {}
        try:
            class_id = self.frame.teaching_class(values)
        except ClassError:
            return {}
        poll = self.store.state(class_id, wall=0).poll
        if poll is None or poll.revealed or poll.step != self.page.sessions.of(request).lesson_step:
            return {}
        self.store.reveal(class_id)
        _ = Texts(language_of(request))
        return {self.frame.said: _("Revealed here and on every phone.")}

    def start_quiz(self, values: dict, request: gr.Request | None, phase: str, lesson=None) -> dict:
        """On a teacher's page the class's quiz (asked on the sentence the class was shown, in the teacher's
        language; the projector shows its chart); on any other page, the student's own (in `lesson`, a visitor's
        Lesson; by default the page's copy)."""
        lesson = lesson or self.page.lesson
        if not (values.get(self.frame.teacher) or {}).get("code"):
            return lesson.own_quiz(values.get(self.page.result), phase, values.get(lesson.rounds), request)
        class_id, _ = self.frame.teaching_class(values), Texts(language_of(request))
        result = self.shown_result(class_id, values)
        if not quiz.usable(result):
            raise ClassError(_("The quiz needs a sentence of two words or more and a translation: translate "
                               "another first."))
        asked = [q.to_dict() for q in quiz.questions(result, _.language)]
        self.store.start_quiz(class_id, phase, asked, pair=result.pair, text=result.text)
        return {self.frame.said: _("{title} is on the class's phones: the chart below fills in as they answer.",
                             title=quiz.title(phase, _)),
                lesson.quiz: quiz.chart_html(self.store.state(class_id, wall=0).quizzes, _)}

    @to_page
    def quiz_before(self, values: dict, request: gr.Request, lesson=None) -> dict:
        return self.start_quiz(values, request, "before", lesson)

    @to_page
    def quiz_after(self, values: dict, request: gr.Request, lesson=None) -> dict:
        return self.start_quiz(values, request, "after", lesson)

    def wire_views(self, views: dict, event, session) -> None:
        """The class's parts of the views built for one visitor (in their tab's gr.render: playground/page.py). The
        Lesson's quiz, and on a teacher's page the Lesson's and Step by step's questions to ask, with the class's
        votes beside them (and the quiz's chart), drawn by a timer of their own while the class runs."""
        common, teaching = dict(show_progress="hidden"), session.teaching
        teacher, said = self.frame.teacher, self.frame.said
        if "lesson" in views:
            lesson = views["lesson"]

            def quiz_before(values: dict, request: gr.Request):
                return self.quiz_before(values, request, lesson)

            def quiz_after(values: dict, request: gr.Request):
                return self.quiz_after(values, request, lesson)
            for button, start in ((lesson.quiz_before, quiz_before), (lesson.quiz_after, quiz_after)):
                event([button.click], start, [], [teacher, lesson.rounds], [said, lesson.quiz, lesson.rounds], **common)
            event([lesson.reveal.click], self.reveal_with_lesson, [], [teacher], [said], **common)
            event([lesson.ask.click], self.ask_lesson, [], [teacher], [said], **common)
        if "steps" in views:
            steps = views["steps"]

            def ask_steps(values: dict, request: gr.Request):
                return self.ask_steps(values, request, steps)
            event([steps.ask.click], ask_steps, [], [teacher, steps.index], [said], **common)
            event([steps.reveal.click], self.reveal_class, [], [teacher], [said], **common)
        shown = [views[unit] for unit in CLASS_VIEWS if unit in views]
        if not (teaching and shown):
            return
        for view in shown:  # made before the render is sent: drawn shown
            view.ask.visible = True
        if "steps" in views:
            views["steps"].reveal.visible = True
        event([gr.Timer(TEACHER_TICK_S).tick], self.votes_beside(shown), [], [teacher],
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
                class_id = self.frame.teaching_class(values)
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
