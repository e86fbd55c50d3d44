"""The quiz before and after the Lesson: six questions computed from the model on the class's sentence, in three
languages; kept per class in the store (on SQLite and PostgreSQL), answered on phones, charted on the projector,
kept in the summary; and taken by a student alone."""
from __future__ import annotations

import re

import gradio as gr
import pytest

from playground import context, lesson, quiz
from playground.classroom.store import Store
from playground.i18n import Texts
from test_classroom import Visitor, page, postgres_url, started, url  # noqa: F401  (fixtures and helpers)

RIGHT = ["how much of", "attention alone cannot tell", "the pieces it writes later", "it had the highest probability",
         "one attention with its own", "where the model looks, not what it uses"]  # each right choice, in English


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_six_questions_one_per_objective_named_and_numbered_from_the_model(translator, language):
    result = context.run(translator, "tiny", "a b c d e f g")
    made = quiz.questions(result, language)
    assert [q.objective for q in made] == list(range(len(quiz.OBJECTIVES))) == list(range(6))
    for q in made:
        assert len(q.choices) == 4 and len(set(q.choices)) == 4 and 0 <= q.right < 4
    assert len({q.right for q in made}) > 1, "the right choice is not always in the same place"
    assert [q.to_dict() for q in quiz.questions(result, language)] == [q.to_dict() for q in made]  # the same for all
    _ = Texts(language)
    q = lesson.looked_at(result)
    row = result.maps.encoder[0, 0, q]  # (S,): the hooked weights the first question reads
    assert _.number(float(row.max())) in made[0].text  # the weight, as the language writes it
    assert _.number(result.translation.steps[0].prob) in made[3].choices[made[3].right]
    assert str(result.maps.encoder.size(1)) in made[4].text
    english = quiz.questions(result, "en")
    for e, q in zip(english, made):
        assert q.right == e.right  # the same answer, whatever the language
        if language == "en":
            assert e.choices[e.right].startswith(RIGHT[e.objective])
        else:
            assert q.text != e.text and q.choices[q.right] != e.choices[e.right]


def test_the_class_quiz_in_the_store_replaces_a_phase_closes_the_other_and_ends_with_the_class(url):  # noqa: F811
    store = Store(url)
    code, secret = store.start()
    class_id = store.teacher(code, secret)
    for phone in ("p1", "p2", "p3"):
        store.join(code, phone)
    asked = [{"objective": i, "text": f"Q{i}", "choices": ["a", "b", "c"], "right": i % 3} for i in range(6)]
    first = store.start_quiz(class_id, "before", asked, pair="en-de", text="A dog.")
    store.answer_quiz(class_id, "p1", first, 0, 0)  # right
    store.answer_quiz(class_id, "p2", first, 0, 1)  # wrong
    store.answer_quiz(class_id, "p2", first, 0, 0)  # changed: right
    store.answer_quiz(class_id, "p3", first, 1, 0)  # wrong (question 1's right is 1)
    for bad in ((first, 6, 0), (first, 0, 3), (first + 99, 0, 0)):
        with pytest.raises(Exception, match="not one of the choices|closed"):
            store.answer_quiz(class_id, "p1", *bad)
    state = store.state(class_id)
    assert state.quiz.id == first and state.quiz.phase == "before" and state.quiz.students == 3
    assert state.quiz.shares[:2] == [(2, 2), (0, 1)] and store.quiz_answers_of(first, "p2") == {0: 0}
    after = store.start_quiz(class_id, "after", asked)
    with pytest.raises(Exception, match="closed"):
        store.answer_quiz(class_id, "p1", first, 1, 1)  # "before" closed when "after" opened
    store.answer_quiz(class_id, "p1", after, 1, 1)
    store.remove(class_id, store_key("p2"))  # a student taken out: their answers leave the counts
    state = store.state(class_id)
    assert [(q.phase, q.open) for q in state.quizzes] == [("before", False), ("after", True)]
    assert state.quizzes[0].shares[0] == (1, 1) and state.quizzes[1].shares[1] == (1, 1)
    again = store.start_quiz(class_id, "before", asked)  # a phase taken again replaces the earlier one
    assert [q.id for q in store.state(class_id).quizzes] == [after, again]
    ended = store.end(class_id)
    assert len(ended.quizzes) == 2
    with store.engine.begin() as db:
        assert db.exec_driver_sql("SELECT count(*) FROM quizzes").scalar() == 0
        assert db.exec_driver_sql("SELECT count(*) FROM quiz_answers").scalar() == 0


def store_key(token: str) -> str:
    from playground.classroom.store import hashed
    return hashed(token)


GERMAN = {"accept-language": "de-DE,de;q=0.9"}


def shares_in(chart: str) -> list[str]:
    return re.findall(r"\((\d+/\d+)\)", chart)


def test_a_teacher_and_three_phones_take_the_quiz_before_and_after_in_german(page):  # noqa: F811
    """Through the page's handlers: the teacher starts each quiz on the sentence shown, the phones see it in their
    question box and answer, the projector's chart counts exactly what they chose, the summary keeps both."""
    classes, lesson = page.classroom, page.views["lesson"]
    teacher, _ = started(page, "teacher-quiz")
    result = context.run(page.ctx.translator("en-de"), "en-de", "A man in a blue shirt is riding a bike.")
    values = {classes.teacher: teacher, page.result: result, lesson.rounds: {}}
    said = classes.questions.quiz_before(values, Visitor("teacher-quiz", headers=GERMAN))
    assert "Quiz vor der Lektion" in said[classes.said]
    class_id = classes.teaching_class({classes.teacher: teacher})
    phones = [(Visitor(f"quiz-phone-{i}", headers=GERMAN), classes.studying.enrol(teacher["code"], {},
               Visitor(f"quiz-phone-{i}", headers=GERMAN))[classes.member]) for i in range(3)]
    asked = classes.store.state(class_id).quiz
    picks = [[q["right"] for q in asked.questions],  # all right
             [(q["right"] + 1) % 4 for q in asked.questions],  # all wrong
             [q["right"] if i < 3 else (q["right"] + 1) % 4 for i, q in enumerate(asked.questions)]]  # three right
    for (visitor, member), chosen in zip(phones, picks):
        shown = classes.studying.tick_student({classes.member: member, page.panel.pair: "en-de"}, visitor)
        box = shown[classes.question]
        assert "Quiz vor der Lektion" in box and box.count("data-answer=") == 24 and "„" in box
        for i, choice in enumerate(chosen):
            out = classes.studying.answer({classes.member: member}, visitor,
                                 gr.EventData(None, {"quiz": str(asked.id), "question": str(i), "choice": str(choice)}))
        assert "alle sechs beantwortet" in out[classes.question]
    with pytest.raises(gr.Error, match="not one of the choices"):
        classes.studying.answer({classes.member: phones[0][1]}, phones[0][0],
                       gr.EventData(None, {"quiz": str(asked.id), "question": "0", "choice": "x"}))
    chart = classes.questions.votes_beside([lesson])({classes.teacher: teacher},
                                           Visitor("teacher-quiz", headers=GERMAN))[lesson.quiz]
    assert "vor der Lektion" in chart and "3 haben vorher geantwortet" in chart
    # per question: 2 right of 3 for the first three, 1 of 3 for the last three
    assert shares_in(chart) == ["2/3"] * 3 + ["1/3"] * 3
    classes.questions.quiz_after(values, Visitor("teacher-quiz", headers=GERMAN))
    after = classes.store.state(class_id).quiz
    for (visitor, member), chosen in zip(phones, picks):
        classes.studying.tick_student({classes.member: member, page.panel.pair: "en-de"}, visitor)
        for i, q in enumerate(after.questions):
            classes.studying.answer({classes.member: member}, visitor,
                           gr.EventData(None, {"quiz": str(after.id), "question": str(i), "choice": str(q["right"])}))
    chart = classes.questions.votes_beside([lesson])({classes.teacher: teacher},
                                           Visitor("teacher-quiz", headers=GERMAN))[lesson.quiz]
    assert shares_in(chart) == [s for pair in zip(["2/3"] * 3 + ["1/3"] * 3, ["3/3"] * 6) for s in pair]
    out = classes.teaching.finish({classes.teacher: teacher}, Visitor("teacher-quiz", headers=GERMAN))
    summary = open(out[classes.summary]["value"], encoding="utf-8").read()
    assert "<h2>Quiz</h2>" in summary and "lang=de" in summary and shares_in(summary)[:12] == shares_in(chart)


def test_a_student_alone_takes_the_quiz_before_and_after_and_sees_their_own_results(page):  # noqa: F811
    classes, lesson = page.classroom, page.views["lesson"]
    result = context.run(page.ctx.translator("en-fr"), "en-fr", "My sister plays the piano every evening.")
    visitor = Visitor("alone", headers={"accept-language": "fr-FR"})
    values = {classes.teacher: {}, page.result: result, lesson.rounds: {}}
    out = classes.questions.quiz_before(values, visitor)
    rounds = out[lesson.rounds]
    assert "Quiz avant la leçon" in out[lesson.quiz] and out[lesson.quiz].count("data-answer=") == 24
    for i, q in enumerate(rounds["before"]["questions"]):  # wrong on the first two
        choice = q["right"] if i >= 2 else (q["right"] + 1) % 4
        out = lesson.answer_own(rounds, visitor, gr.EventData(None, {"quiz": "before", "question": str(i),
                                                                      "choice": str(choice)}))
        rounds = out[lesson.rounds]
    assert "Tes réponses" in out[lesson.quiz] and "4 sur 6 justes" in out[lesson.quiz]
    out = classes.questions.quiz_after(values | {lesson.rounds: rounds}, visitor)
    rounds = out[lesson.rounds]
    for i, q in enumerate(rounds["after"]["questions"]):
        out = lesson.answer_own(rounds, visitor, gr.EventData(None, {"quiz": "after", "question": str(i),
                                                                      "choice": str(q["right"])}))
        rounds = out[lesson.rounds]
    own = out[lesson.quiz]
    assert "avant la leçon" in own and "après la leçon" in own and "6 sur 6 justes" in own
    assert own.count("✗") == 2 and own.count("✓") == 10
    assert lesson.answer_own(rounds, visitor, gr.EventData(None, {"quiz": "during", "question": "0",
                                                                   "choice": "0"})) == {}
