"""What a class is asked, in the store (store.py): the polls and their votes, the quizzes and their answers."""
from __future__ import annotations

import json
import time

from sqlalchemy import delete, func, insert, select, update

from ..i18n import N_
from .schema import ClassError, Poll, Quiz, classes, lasting, polls, quiz_answers, quizzes, students, votes, hashed


class PollStore:
    """The questions of a class, part of the Store (its `engine`, `_bump` and `_insert`)."""

    @lasting
    def ask(self, class_id: int, question: str, choices: list[str], answer: int, explained: str,
            now: float | None = None, pair: str = "", text: str = "", step: int | None = None) -> int:
        """A new poll, the class's current one (the one before it closes), about `text` (in `pair`) at Lesson step
        `step` (None: Step by step)."""
        assert 0 <= answer < len(choices), "the right choice is among the choices"
        with self.engine.begin() as db:
            poll_id = db.execute(insert(polls).values(
                class_id=class_id, question=question, choices=json.dumps(choices), answer=answer, explained=explained,
                revealed=False, asked=time.time() if now is None else now, pair=pair, text=text,
                step=step)).inserted_primary_key[0]
            db.execute(update(classes).where(classes.c.id == class_id).values(poll_id=poll_id,
                                                                              version=classes.c.version + 1))
        return poll_id

    @lasting
    def reveal(self, class_id: int) -> bool:
        """The current poll's answer shown to the class; False when it was already out."""
        with self.engine.begin() as db:
            poll_id = db.execute(select(classes.c.poll_id).where(classes.c.id == class_id)).scalar()
            if poll_id is None:
                raise ClassError(N_("There is no question to reveal: ask the class one first."))
            changed = db.execute(update(polls).where(polls.c.id == poll_id, polls.c.revealed.is_(False))
                                 .values(revealed=True)).rowcount
            if changed:
                self._bump(db, class_id)
        return bool(changed)

    @lasting
    def start_quiz(self, class_id: int, phase: str, questions: list[dict], pair: str = "", text: str = "") -> int:
        """A quiz for the class's phones (phase "before" or "after" the Lesson), replacing an earlier one of the same
        phase and closing any other; its id."""
        if phase not in ("before", "after"):
            raise ClassError(f"a quiz is taken before or after the Lesson, not {phase!r}")
        with self.engine.begin() as db:
            earlier = [r.id for r in db.execute(select(quizzes.c.id).where(quizzes.c.class_id == class_id,
                                                                            quizzes.c.phase == phase))]
            if earlier:
                db.execute(delete(quiz_answers).where(quiz_answers.c.quiz_id.in_(earlier)))
                db.execute(delete(quizzes).where(quizzes.c.id.in_(earlier)))
            db.execute(update(quizzes).where(quizzes.c.class_id == class_id).values(open=False))
            quiz_id = db.execute(insert(quizzes).values(class_id=class_id, phase=phase, questions=json.dumps(questions),
                                                        open=True, started=time.time(), pair=pair, text=text)
                                 ).inserted_primary_key[0]
            self._bump(db, class_id)
        return quiz_id

    @lasting
    def close_quiz(self, class_id: int) -> None:
        with self.engine.begin() as db:
            db.execute(update(quizzes).where(quizzes.c.class_id == class_id).values(open=False))
            self._bump(db, class_id)

    @lasting
    def answer_quiz(self, class_id: int, token: str, quiz_id: int, question: int, choice: int) -> None:
        """A student's answer to one question of the open quiz, replacing an earlier one; refused once it closed."""
        with self.engine.begin() as db:
            quiz = db.execute(select(quizzes).where(quizzes.c.id == quiz_id, quizzes.c.class_id == class_id)).first()
            if quiz is None or not quiz.open:
                raise ClassError(N_("That quiz is closed."))
            asked = json.loads(quiz.questions)
            if not 0 <= question < len(asked) or not 0 <= choice < len(asked[question]["choices"]):
                raise ClassError(N_("That is not one of the choices."))
            db.execute(self._insert(quiz_answers).values(quiz_id=quiz_id, student=hashed(token), question=question,
                                                         choice=choice)
                       .on_conflict_do_update(index_elements=["quiz_id", "student", "question"],
                                              set_=dict(choice=choice)))
            self._bump(db, class_id)

    @lasting
    def quiz_answers_of(self, quiz_id: int, token: str) -> dict[int, int]:
        """This student's answers to a quiz: question -> choice."""
        with self.engine.begin() as db:
            return dict(db.execute(select(quiz_answers.c.question, quiz_answers.c.choice).where(
                quiz_answers.c.quiz_id == quiz_id, quiz_answers.c.student == hashed(token))).all())

    @staticmethod
    def _quizzes(db, class_id: int) -> list[Quiz]:
        """The class's quizzes with their shares right, its removed students' answers left out."""
        from ..quiz import shares

        kept = select(students.c.student).where(students.c.class_id == class_id, students.c.removed.is_(False))
        out = []
        for row in db.execute(select(quizzes).where(quizzes.c.class_id == class_id).order_by(quizzes.c.id)):
            asked = json.loads(row.questions)
            answers = [dict(r._mapping) for r in db.execute(
                select(quiz_answers.c.student, quiz_answers.c.question, quiz_answers.c.choice).where(
                    quiz_answers.c.quiz_id == row.id, quiz_answers.c.student.in_(kept)))]
            out.append(Quiz(row.id, row.phase, asked, bool(row.open), shares(asked, answers),
                            len({a["student"] for a in answers}), row.text or "", row.pair or ""))
        return out

    @lasting
    def vote(self, class_id: int, token: str, poll_id: int, choice: int) -> None:
        """A student's vote on the current poll, replacing their earlier one; refused once it is revealed."""
        with self.engine.begin() as db:
            poll = db.execute(select(polls).where(polls.c.id == poll_id, polls.c.class_id == class_id)).first()
            current = db.execute(select(classes.c.poll_id).where(classes.c.id == class_id)).scalar()
            if poll is None or poll_id != current:
                raise ClassError(N_("That question is closed: the teacher has asked another."))
            if poll.revealed:
                raise ClassError(N_("The answer is out: votes on this question are closed."))
            if not 0 <= choice < len(json.loads(poll.choices)):
                raise ClassError(N_("That is not one of the choices."))
            db.execute(self._insert(votes).values(poll_id=poll_id, student=hashed(token), choice=choice)
                       .on_conflict_do_update(index_elements=["poll_id", "student"], set_=dict(choice=choice)))
            self._bump(db, class_id)

    @lasting
    def vote_of(self, poll_id: int, token: str) -> int | None:
        """The choice this student voted for on this poll, or None."""
        with self.engine.begin() as db:
            return db.execute(select(votes.c.choice).where(votes.c.poll_id == poll_id,
                                                           votes.c.student == hashed(token))).scalar()

    def _poll(self, db, poll_id: int) -> Poll:
        row = db.execute(select(polls).where(polls.c.id == poll_id)).first()
        choices = json.loads(row.choices)
        counts = [0] * len(choices)
        for choice, n in db.execute(select(votes.c.choice, func.count()).where(votes.c.poll_id == poll_id)
                                    .group_by(votes.c.choice)):
            counts[choice] = n
        return Poll(row.id, row.question, choices, row.answer, row.explained, row.revealed, counts,
                    row.text or "", row.pair or "", row.step)
