"""Lesson: ten guided steps on the sentence in the box (playground.lesson), each with a question to answer before
Reveal shows it; Back and Next (or the arrow keys), a link to the view that goes deeper, and the teacher's notes."""
from __future__ import annotations

import html

import gradio as gr
import plotly.graph_objects as go

from playground import lesson, notes, quiz, registry
from transformer.errors import InputError

from playground.view import LINKED, View, to_page
from .common import need
from playground.i18n import DEFAULT, LANGUAGE, N_, Texts, language_of, _l


def view_title(key: str, _: Texts) -> str:
    """A view's name in the language of `_`: "Attention: Three families", or "Step by step" at the top level."""
    entry = registry.entry(key)
    group = registry.GROUP_LABELS.get(entry.group)
    return _("{group}: {view}", group=_(group), view=_(entry.label)) if group else _(entry.label)


ANSWER_JS = "tp.answers(element, trigger, 'answer')"  # a quiz's choice buttons fire the box's "answer" event


class LessonView(View):
    def build(self) -> None:  # its keys and links: assets/page.js
        self.number = gr.State(1)  # the step shown, as the visitor's session holds it (`starting_from`)
        with gr.Row(equal_height=True):
            self.back = gr.Button(_l("◀ Back"), scale=0, min_width=120, elem_id="lesson-back")
            self.where = gr.Markdown(elem_id="lesson-where")
            self.next = gr.Button(_l("Next ▶"), scale=0, min_width=120, elem_id="lesson-next")
        # A slide: the words, the question and its answer beside the figure, so that a step fits one screen (a
        # projector's too); on a narrow screen the figure goes under them. The glance takes the whole width.
        with gr.Row(elem_id="lesson-step"):
            with gr.Column(scale=2, min_width=300):
                self.text = gr.Markdown(elem_classes="plain", elem_id="lesson-text")
                self.question = gr.Markdown(elem_id="lesson-question")
                with gr.Row(equal_height=True):  # a teacher with a class asks it here; one Reveal shows both
                    self.reveal = gr.Button(_l("Reveal the answer"), variant="primary", size="md",
                                            elem_id="lesson-reveal")
                    self.ask = gr.Button(_l("Ask the class"), size="md", visible=False, elem_id="lesson-ask")
                self.poll = gr.HTML(elem_id="lesson-poll", padding=False)  # the class's votes (classroom/panel.py:
                # shown on a teacher's page)
                self.answer = gr.Markdown(elem_id="lesson-answer")
            with gr.Column(scale=3, min_width=360) as self.side:
                self.plot = gr.Plot(show_label=False, elem_id="lesson-plot")
        self.html = gr.HTML(elem_id="lesson-html")
        with gr.Row(equal_height=True):
            self.deeper = gr.HTML(elem_id="lesson-deeper", js_on_load=LINKED)
            self.notes = gr.Button(_l("Teacher's notes: download the whole lesson (HTML, printable)"), size="sm",
                                   scale=0, min_width=200, elem_id="lesson-notes")  # draws every step
            # hidden: the browser clicks it once the notes are written, so one click downloads them
            self.file = gr.DownloadButton(_l("Download the notes"), size="sm", scale=0, min_width=200,
                                          visible="hidden", elem_id="lesson-file")
            # six questions, one per learning objective, before and after the Lesson (playground/quiz.py): a student
            # alone takes them here; a teacher's class on its phones, and this box shows the class's chart
            self.quiz_before = gr.Button(_l("Quiz before the Lesson"), size="sm", scale=0, min_width=160,
                                         elem_id="quiz-before")
            self.quiz_after = gr.Button(_l("Quiz after the Lesson"), size="sm", scale=0, min_width=160,
                                        elem_id="quiz-after")
        self.quiz = gr.HTML(elem_id="quiz", js_on_load=ANSWER_JS, padding=False)
        self.rounds = gr.State({})  # per user alone: phase -> {"questions": [...], "answers": {question: choice}}
        self.controls = [self.number]
        self.outputs = [self.where, self.text, self.question, self.answer, self.plot, self.side, self.html,
                        self.deeper, self.reveal]
        self.links = [self.deeper]

    @staticmethod
    def number_from(raw: str) -> tuple[int, str]:
        """A link's lesson=N: the step to open (1 to STEPS), and a problem to name when N was not one."""
        try:
            number = int(raw)
        except ValueError:
            return 1, f"lesson={raw!r} is not a step number"
        if not 1 <= number <= lesson.STEPS:
            return min(max(number, 1), lesson.STEPS), f"lesson={raw!r} is not a step: there are {lesson.STEPS}"
        return number, ""

    def starting_from(self, session) -> None:
        self.number.value = session.lesson_step  # a State's value is read at the session's first use of it

    def made_step(self, result, number: int, language: str = DEFAULT) -> lesson.LessonStep:
        translator = self.ctx.translator(result.pair)
        return result.derived(f"lesson step {int(number)} {language}",
                              lambda: lesson.step(translator, result, number, language))

    def display(self, step: lesson.LessonStep, revealed: bool = False, language: str = DEFAULT) -> dict:
        _ = Texts(language)
        figure = step.marked if revealed else step.figure
        is_plot = isinstance(figure, go.Figure)
        deeper = " ".join(f'<a href="#" class="deeper" data-open="{html.escape(key)}">'
                          + html.escape(_("Go deeper: {view}", view=view_title(key, _))) + " →</a>"
                          for key in (step.deeper, step.also) if key)
        return {self.where: "**" + _("Step {number} of {steps}: {title}", number=step.number, steps=lesson.STEPS,
                                     title=step.title) + "**",
                self.text: step.text,
                self.question: "**" + _("Question:") + "** " + step.question if step.question else "",
                self.answer: "**" + _("Answer:") + "** " + step.answer if revealed and step.answer else "",
                self.reveal: gr.update(visible=bool(step.question), interactive=not revealed),
                self.plot: gr.update(value=figure if is_plot else None, visible=is_plot),
                self.side: gr.update(visible=is_plot),
                self.html: gr.update(value=figure if isinstance(figure, str) else "", visible=isinstance(figure, str)),
                self.deeper: deeper}

    def fill(self, result, values: dict) -> dict:
        language = values.get(LANGUAGE, DEFAULT)
        return self.display(self.made_step(result, values[self.number], language), language=language)

    @to_page
    def go(self, result, number, delta: int, request: gr.Request | None = None) -> dict:
        number, language = min(max(int(number or 1) + delta, 1), lesson.STEPS), language_of(request)
        self.ctx.sessions.of(request).lesson_step = number  # what the class is shown, and a link opens
        return self.display(self.made_step(need(result), number, language), language=language) | {self.number: number}

    def back_one(self, result, number, request: gr.Request):
        return self.go(result, number, -1, request)

    def next_one(self, result, number, request: gr.Request):
        return self.go(result, number, +1, request)

    @to_page
    def show_answer(self, result, number, request: gr.Request | None = None) -> dict:
        language = language_of(request)
        return self.display(self.made_step(need(result), number, language), revealed=True, language=language)

    @to_page
    def write_notes(self, result, request: gr.Request | None = None) -> dict:
        result, language = need(result), language_of(request)
        steps = [self.made_step(result, n, language) for n in range(1, lesson.STEPS + 1)]
        path = notes.write(self.ctx.downloads, result, steps, language)
        return {self.file: gr.update(value=str(path))}

    def own_quiz(self, result, phase: str, rounds: dict, request: gr.Request | None = None) -> dict:
        """A student alone starts a quiz round on the sentence shown, in their language (an earlier round of the
        same phase taken again)."""
        result, language = need(result), language_of(request)
        asked = [q.to_dict() for q in quiz.questions(result, language)]
        rounds = {k: v for k, v in (rounds or {}).items() if k != phase} | {phase: {"questions": asked, "answers": {}}}
        return {self.rounds: rounds, self.quiz: quiz.own_html(rounds, Texts(language))}

    @to_page
    def answer_own(self, rounds: dict, request: gr.Request, clicked: gr.EventData) -> dict:
        """A student alone answers one question of their open round; once all six are answered, their results."""
        phase = str(getattr(clicked, "quiz", ""))
        if phase not in (rounds or {}):
            return {}
        try:
            question, choice = int(getattr(clicked, "question", "")), int(getattr(clicked, "choice", ""))
        except (TypeError, ValueError):
            raise InputError(N_("That is not one of the choices.")) from None
        asked = rounds[phase]["questions"]
        if not 0 <= question < len(asked) or not 0 <= choice < len(asked[question]["choices"]):
            raise InputError(N_("That is not one of the choices."))
        rounds = rounds | {phase: {"questions": asked, "answers": rounds[phase]["answers"] | {question: choice}}}
        return {self.rounds: rounds, self.quiz: quiz.own_html(rounds, Texts(language_of(request)))}

    def wire(self, result: gr.State) -> None:
        outputs = self.outputs + [self.number]
        common = dict(api_visibility="private", show_progress="minimal")
        for button, move in ((self.back, self.back_one), (self.next, self.next_one)):  # the new step's top at the
            button.click(move, [result, self.number], outputs, **common).then(  # window's: a whole slide
                None, js="() => tp.toStep()")
        self.reveal.click(self.show_answer, [result, self.number], self.outputs, **common)
        self.notes.click(self.write_notes, result, self.file, **common).success(
            None, js="() => tp.download()")
        self.quiz.answer(self.answer_own, self.rounds, [self.rounds, self.quiz], **common)
