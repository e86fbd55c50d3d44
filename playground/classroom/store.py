"""The class store: a class's join code, its students, the sentences they sent, the polls and their votes, kept in a
real database through SQLAlchemy Core. SQLite by default (a file in WAL mode: replicas on one machine share it, no
server to start), PostgreSQL when replicas span machines (`--database-url`, DATABASE_URL). No gradio here.

What is stored, and for how long (docs/classroom.md): per class, its code, a hash of the teacher's secret, the
sentence and Lesson step the teacher shows; per student, a hash of a random token their browser keeps and an optional
nickname; the sentences sent (with their translations, unsure words and warnings) and the votes. Nothing else about a
student. A class ended by its teacher is deleted at once (its summary is downloaded first); one not ended is deleted
`LIFETIME_S` after it started. The rate limits live here too (`limit`), so that every replica counts the same events.

Every change to a class adds one to its `version`: a page polls that one number and reads the rest only when it moved.
The store by concern: its tables, migrations and rows in schema.py; what a class is asked (polls and quizzes, their
votes and answers) in polls.py; the class, its students, its wall and the rate limits here.
"""
from __future__ import annotations

import json
import secrets
import time

from sqlalchemy import Table, case, create_engine, delete, event, func, insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from ..i18n import N_
from .polls import PollStore
from .schema import (LIFETIME_S, MIGRATIONS, NICKNAME_MAX, SCHEMA, TEXT_MAX, ClassError, ClassState, Poll, Quiz,
                     Student, TakenOut, checked_nickname, classes, hashed, hits, lasting, meta, metadata, new_code,
                     normal_code, polls, quiz_answers, quizzes, sentences, shown_code, students, votes)

__all__ = ["LIFETIME_S", "SCHEMA", "ClassError", "ClassState", "Poll", "Quiz", "Store", "Student", "TakenOut",
           "default_url", "hashed", "meta", "normal_code", "shown_code"]


class Store(PollStore):
    """One database of classes, shared by every replica that is given the same URL."""

    def __init__(self, url: str):
        self.url = url
        self.engine: Engine = create_engine(url, pool_pre_ping=True)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self.create()
        self.migrate()

    def create(self, tries: int = 5) -> None:
        """The tables, when missing. Replicas starting together may race to create them: the loser's CREATE fails
        on a table the winner just made, and it looks again."""
        for attempt in range(tries):
            try:
                metadata.create_all(self.engine)
                return
            except DBAPIError:
                if attempt == tries - 1:
                    raise
                time.sleep(0.2 * (attempt + 1))

    def migrate(self) -> None:
        """The schema's version kept in the database itself: a new one is stamped, an older one migrated."""
        with self.engine.begin() as db:
            found = db.execute(select(meta.c.value).where(meta.c.key == "schema")).scalar()
            if found is None:
                self._add_meta(db, "schema", str(SCHEMA))
                return
            version = int(found)
            if version > SCHEMA:
                raise RuntimeError(f"the class database {self.url!r} was made by a newer playground (schema "
                                   f"{version}, this one knows {SCHEMA}): update the app or give it another database")
            for v in range(version + 1, SCHEMA + 1):
                for statement in MIGRATIONS.get(v, []):
                    db.exec_driver_sql(statement)
            db.execute(update(meta).where(meta.c.key == "schema").values(value=str(SCHEMA)))

    def _add_meta(self, db, key: str, value: str) -> None:
        db.execute(self._insert(meta).values(key=key, value=value).on_conflict_do_nothing(index_elements=["key"]))

    def _insert(self, table: Table):
        """An INSERT that can say what to do on a conflict, in this database's dialect."""
        if self.engine.dialect.name == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as dialect_insert
        else:
            from sqlalchemy.dialects.sqlite import insert as dialect_insert
        return dialect_insert(table)

    def browser_secret(self) -> str:
        """The key every replica encrypts the browsers' class state with (gr.BrowserState): made once, kept here."""
        with self.engine.begin() as db:
            self._add_meta(db, "browser_secret", secrets.token_urlsafe(32))
            return db.execute(select(meta.c.value).where(meta.c.key == "browser_secret")).scalar_one()

    # -------------------------------------------------------------------------
    # The teacher's side: every action is checked against the class's secret here, on the server

    @lasting
    def start(self, now: float | None = None) -> tuple[str, str]:
        """A new class: (its code, the teacher's secret). Classes past their lifetime are deleted first."""
        now = time.time() if now is None else now
        self.purge(now)
        secret = secrets.token_urlsafe(24)
        for _ in range(5):  # a clash among 2^40 codes is rare; never reuse a living one
            code = new_code()
            with self.engine.begin() as db:
                if db.execute(select(classes.c.id).where(classes.c.code == code)).first() is None:
                    db.execute(insert(classes).values(code=code, secret_hash=hashed(secret), started=now,
                                                      expires=now + LIFETIME_S, version=0))
                    return code, secret
        raise RuntimeError("no free class code found")

    @lasting
    def teacher(self, code: str, secret: str) -> int:
        """The class id when `secret` is its teacher's; else ClassError."""
        row = self._living(code)
        if not secret or not secrets.compare_digest(row.secret_hash, hashed(secret)):
            raise ClassError(N_("Only the class's teacher can do that."))
        return row.id

    @lasting
    def show(self, class_id: int, pair: str, text: str, translation: str, step: int | None, step_title: str,
             question: str) -> None:
        """What the teacher shows now (a following student's page shows it too)."""
        with self.engine.begin() as db:
            db.execute(update(classes).where(classes.c.id == class_id).values(
                pair=pair, text=text, translation=translation, step=step, step_title=step_title, question=question,
                version=classes.c.version + 1))

    @lasting
    def hide(self, class_id: int, sentence_id: int) -> None:
        with self.engine.begin() as db:
            found = db.execute(update(sentences).where(sentences.c.id == sentence_id,
                                                       sentences.c.class_id == class_id).values(hidden=True)).rowcount
            if not found:
                raise ClassError(N_("That sentence is not in this class."))
            self._bump(db, class_id)

    @lasting
    def sentence(self, class_id: int, sentence_id: int) -> dict:
        with self.engine.begin() as db:
            row = db.execute(select(sentences).where(sentences.c.id == sentence_id,
                                                     sentences.c.class_id == class_id)).first()
        if row is None:
            raise ClassError(N_("That sentence is not in this class."))
        return dict(row._mapping)

    @lasting
    def lock(self, class_id: int, locked: bool) -> None:
        """Locked, no new student joins (those in it may reload and come back)."""
        with self.engine.begin() as db:
            db.execute(update(classes).where(classes.c.id == class_id).values(locked=locked,
                                                                              version=classes.c.version + 1))

    @lasting
    def remove(self, class_id: int, key: str) -> None:
        """A student out of the class for good (their token is refused from now on): their sentences hidden, their
        votes gone."""
        with self.engine.begin() as db:
            if not self._remove(db, class_id, [key]):
                raise ClassError(N_("That student is not in this class."))

    @lasting
    def remove_all(self, class_id: int, passless: bool) -> int:
        """At once, out of the class: every student who joined without the page's pass (`passless`), else every
        student without a nickname (a flood of joins). How many."""
        with self.engine.begin() as db:
            keys = list(db.execute(select(students.c.student).where(
                students.c.class_id == class_id, students.c.removed.is_(False),
                students.c.passless if passless else students.c.nickname == "")).scalars())
            return self._remove(db, class_id, keys)

    def _remove(self, db, class_id: int, keys: list[str]) -> int:
        if not keys:
            return 0
        found = db.execute(update(students).where(students.c.class_id == class_id, students.c.student.in_(keys),
                                                  students.c.removed.is_(False)).values(removed=True)).rowcount
        db.execute(update(sentences).where(sentences.c.class_id == class_id, sentences.c.student.in_(keys))
                   .values(hidden=True))
        db.execute(delete(votes).where(votes.c.student.in_(keys), votes.c.poll_id.in_(
            select(polls.c.id).where(polls.c.class_id == class_id))))
        self._bump(db, class_id)
        return found

    @lasting
    def hide_all(self, class_id: int, key: str, hidden: bool = True) -> int:
        """Every sentence of one student hidden (or shown again): how many."""
        with self.engine.begin() as db:
            n = db.execute(update(sentences).where(sentences.c.class_id == class_id, sentences.c.student == key)
                           .values(hidden=hidden)).rowcount
            self._bump(db, class_id)
        return n

    @lasting
    def limit(self, key: str, n: int, per_s: float, now: float | None = None) -> bool:
        """True, and the event counted, when `key` (what it counts and for whom: "join 10.0.0.7") had fewer than `n`
        events in the last `per_s` seconds; False, and nothing counted, otherwise. Every replica counts here."""
        now = time.time() if now is None else now
        with self.engine.begin() as db:
            db.execute(delete(hits).where(hits.c.key == key, hits.c.at <= now - per_s))
            seen = db.execute(select(func.count()).select_from(hits).where(hits.c.key == key)).scalar_one()
            if seen >= n:
                return False
            db.execute(insert(hits).values(key=key[:120], at=now))
        return True

    @lasting
    def end(self, class_id: int) -> ClassState:
        """The class as it ends (for its summary: hidden sentences left out, every poll), then deleted."""
        state = self.state(class_id, roster=True)
        with self.engine.begin() as db:
            state.polls = [self._poll(db, p.id) for p in db.execute(
                select(polls.c.id).where(polls.c.class_id == class_id).order_by(polls.c.id))]
            self._delete(db, [class_id])
        return state

    @lasting
    def purge(self, now: float | None = None) -> int:
        """Deletes every class past its lifetime; how many."""
        now = time.time() if now is None else now
        with self.engine.begin() as db:
            gone = [r.id for r in db.execute(select(classes.c.id).where(classes.c.expires < now))]
            self._delete(db, gone)
            db.execute(delete(hits).where(hits.c.at < now - 3600))  # no limit counts further back than an hour
        return len(gone)

    def _delete(self, db, ids: list[int]) -> None:
        if not ids:
            return
        poll_ids = select(polls.c.id).where(polls.c.class_id.in_(ids))
        db.execute(delete(votes).where(votes.c.poll_id.in_(poll_ids)))
        quiz_ids = select(quizzes.c.id).where(quizzes.c.class_id.in_(ids))
        db.execute(delete(quiz_answers).where(quiz_answers.c.quiz_id.in_(quiz_ids)))
        db.execute(delete(quizzes).where(quizzes.c.class_id.in_(ids)))
        for table in (polls, sentences, students):
            db.execute(delete(table).where(table.c.class_id.in_(ids)))
        db.execute(delete(classes).where(classes.c.id.in_(ids)))

    # -------------------------------------------------------------------------
    # The students' side

    @lasting
    def join(self, code: str, token: str, nickname: str = "", now: float | None = None,
             allow_new=lambda: True, passless: bool = False) -> tuple[int, bool]:
        """A student (their browser's token) in the class with this code: (its id, whether they are new to it).
        Joining again keeps the votes and may change the nickname, which is unique in the class (a removed student
        keeps theirs: no one else takes it). A new student is refused when the class is locked, or when `allow_new()`
        (a rate limit) says no; a removed one always. `passless`: a new student's join came without the page's
        pass (marked in the teacher's list)."""
        row, key = self._living(code, now), hashed(token)
        nickname = checked_nickname(nickname)
        with self.engine.begin() as db:
            known = db.execute(select(students.c.removed, students.c.nickname).where(
                students.c.class_id == row.id, students.c.student == key)).first()
            if known is not None and known.removed:
                raise TakenOut(N_("The teacher took you out of this class."))
            if known is None and row.locked:
                raise ClassError(N_("This class is closed to new students: ask your teacher to open it."))
            if nickname and (known is None or nickname.lower() != known.nickname.lower()):
                taken = db.execute(select(students.c.student).where(
                    students.c.class_id == row.id, students.c.student != key,  # a removed student's too
                    func.lower(students.c.nickname) == nickname.lower())).first()
                if taken is not None:
                    raise ClassError(N_("Someone in this class is already called “{nickname}”: choose another "
                                        "nickname."), nickname=nickname)
            if known is None and not allow_new():
                raise ClassError(N_("Too many new students from this network just now: wait a minute, then try again."))
            if known is None or known.nickname != nickname:
                db.execute(self._insert(students).values(
                    class_id=row.id, student=key, nickname=nickname, removed=False, passless=passless,
                    joined=time.time() if now is None else now).on_conflict_do_update(
                    index_elements=["class_id", "student"], set_=dict(nickname=nickname)))
                self._bump(db, row.id)
        return row.id, known is None

    @lasting
    def member(self, code: str, token: str) -> int:
        """The class id when this token joined the class with this code; else ClassError."""
        row = self._living(code)
        with self.engine.begin() as db:
            found = db.execute(select(students.c.removed).where(students.c.class_id == row.id,
                                                                students.c.student == hashed(token))).first()
        if found is None:
            raise ClassError(N_("Join the class first."))
        if found.removed:
            raise TakenOut(N_("The teacher took you out of this class."))
        return row.id

    @lasting
    def send(self, class_id: int, token: str, nickname: str, pair: str, text: str, translation: str,
             unsure: list[str], notice: str, now: float | None = None) -> int:
        with self.engine.begin() as db:
            sentence_id = db.execute(insert(sentences).values(
                class_id=class_id, student=hashed(token), nickname=nickname.strip()[:NICKNAME_MAX], pair=pair,
                text=text[:TEXT_MAX], translation=translation[:2 * TEXT_MAX], unsure=json.dumps(unsure),
                notice=notice[:1000], hidden=False, sent=time.time() if now is None else now)).inserted_primary_key[0]
            self._bump(db, class_id)
        return sentence_id

    # -------------------------------------------------------------------------
    # Reading

    @lasting
    def version(self, class_id: int) -> int | None:
        """The class's version, or None once it has ended or expired."""
        with self.engine.begin() as db:
            row = db.execute(select(classes.c.version, classes.c.expires).where(classes.c.id == class_id)).first()
        return None if row is None or row.expires < time.time() else row.version

    @lasting
    def state(self, class_id: int, wall: int = 200, hidden: bool = False, roster: bool = False) -> ClassState:
        """The class now: its newest `wall` sentences (hidden ones too when asked), its current poll with counts, and
        (when asked: the teacher's list) every student with their counts."""
        with self.engine.begin() as db:
            row = db.execute(select(classes).where(classes.c.id == class_id)).first()
            if row is None:
                raise ClassError(N_("This class has ended."))
            count = db.execute(select(func.count()).select_from(students).where(
                students.c.class_id == class_id, students.c.removed.is_(False))).scalar_one()
            query = select(sentences).where(sentences.c.class_id == class_id)
            if not hidden:
                query = query.where(sentences.c.hidden.is_(False))
            sent = [dict(r._mapping) for r in db.execute(query.order_by(sentences.c.id.desc()).limit(wall))]
            poll = self._poll(db, row.poll_id) if row.poll_id is not None else None
            listed = self._roster(db, class_id) if roster else []
            asked = self._quizzes(db, class_id)
        teacher = {k: getattr(row, k) for k in ("pair", "text", "translation", "step", "step_title", "question")}
        return ClassState(row.id, row.code, row.version, count, teacher, sent, poll, bool(row.locked),
                          roster=listed, quizzes=asked)

    @staticmethod
    def _roster(db, class_id: int) -> list[Student]:
        """Every student of the class, in the order they joined, with their sentences (and hidden ones) and votes."""
        sent = {r.student: (r.n, r.hidden or 0) for r in db.execute(
            select(sentences.c.student, func.count().label("n"),
                   func.sum(case((sentences.c.hidden, 1), else_=0)).label("hidden"))
            .where(sentences.c.class_id == class_id).group_by(sentences.c.student))}
        voted = dict(db.execute(select(votes.c.student, func.count()).where(votes.c.poll_id.in_(
            select(polls.c.id).where(polls.c.class_id == class_id))).group_by(votes.c.student)).all())
        rows = db.execute(select(students).where(students.c.class_id == class_id).order_by(students.c.joined))
        return [Student(r.student, r.nickname, sent.get(r.student, (0, 0))[0], voted.get(r.student, 0),
                        sent.get(r.student, (0, 0))[1], bool(r.removed), bool(r.passless)) for r in rows]

    def _living(self, code: str, now: float | None = None):
        """The class row of a code that is live now; a code of an ended or expired class is refused."""
        now = time.time() if now is None else now
        with self.engine.begin() as db:
            row = db.execute(select(classes).where(classes.c.code == normal_code(code))).first()
        if row is None or row.expires < now:
            raise ClassError(N_("No class has this code now: check it with your teacher (a class that ended is closed)."))
        return row

    @lasting
    def touch(self, class_id: int) -> None:
        """The class changed in a way only the pages know (a model the teacher shared): every page draws it again."""
        with self.engine.begin() as db:
            self._bump(db, class_id)

    @staticmethod
    def _bump(db, class_id: int) -> None:
        db.execute(update(classes).where(classes.c.id == class_id).values(version=classes.c.version + 1))


def _sqlite_pragmas(connection, _record) -> None:
    """WAL: readers never wait for the writer, and replicas on one machine share the file; a writer waits up to 10 s
    for another instead of failing at once."""
    cursor = connection.cursor()
    cursor.execute("PRAGMA busy_timeout=10000")  # first: switching to WAL waits for another replica doing the same
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def default_url(root) -> str:
    """The SQLite file a playground keeps its classes in when given no database URL."""
    return f"sqlite:///{root / 'classes.sqlite3'}"
