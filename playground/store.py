"""The class store: a class's join code, its students, the sentences they sent, the polls and their votes, kept in a
real database through SQLAlchemy Core. SQLite by default (a file in WAL mode: replicas on one machine share it, no
server to start), PostgreSQL when replicas span machines (`--database-url`, DATABASE_URL). No gradio here.

What is stored, and for how long (docs/classroom.md): per class, its code, a hash of the teacher's secret, the
sentence and Lesson step the teacher shows; per student, a hash of a random token their browser keeps and an optional
nickname; the sentences sent (with their translations, unsure words and warnings) and the votes. Nothing else about a
student. A class ended by its teacher is deleted at once (its summary is downloaded first); one not ended is deleted
`LIFETIME_S` after it started.

Every change to a class adds one to its `version`: a page polls that one number and reads the rest only when it moved.
"""
from __future__ import annotations

import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field

from sqlalchemy import (Boolean, Column, Float, ForeignKey, Integer, MetaData, String, Table, Text, create_engine,
                        delete, event, func, insert, select, update)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from transformer.errors import InputError

SCHEMA = 1  # the schema this code writes; an older database is brought up to it (MIGRATIONS), a newer one refused
LIFETIME_S = 12 * 3600  # a class not ended is deleted this long after it started
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read off a projector and typed on a phone
CODE_LENGTH = 8  # 32^8 = 2^40 codes: with joins rate-limited, not found by trying
NICKNAME_MAX = 24
TEXT_MAX = 300  # the most of a sentence the wall keeps (the page may translate more)

metadata = MetaData()
meta = Table("playground_meta", metadata,
             Column("key", String(40), primary_key=True),
             Column("value", Text, nullable=False))
classes = Table("classes", metadata,
                Column("id", Integer, primary_key=True, autoincrement=True),
                Column("code", String(16), nullable=False, unique=True),
                Column("secret_hash", String(64), nullable=False),
                Column("started", Float, nullable=False),
                Column("expires", Float, nullable=False),
                Column("version", Integer, nullable=False, default=0),
                Column("pair", String(40)), Column("text", Text), Column("translation", Text),  # the teacher's
                Column("step", Integer), Column("step_title", Text), Column("question", Text),  # the teacher's Lesson
                Column("poll_id", Integer))  # the class's current poll
students = Table("students", metadata,
                 Column("class_id", Integer, ForeignKey("classes.id"), primary_key=True),
                 Column("student", String(64), primary_key=True),  # hash of the token the student's browser keeps
                 Column("nickname", String(NICKNAME_MAX), nullable=False, default=""),
                 Column("joined", Float, nullable=False))
sentences = Table("sentences", metadata,
                  Column("id", Integer, primary_key=True, autoincrement=True),
                  Column("class_id", Integer, ForeignKey("classes.id"), nullable=False, index=True),
                  Column("student", String(64), nullable=False),
                  Column("nickname", String(NICKNAME_MAX), nullable=False, default=""),
                  Column("pair", String(40), nullable=False),
                  Column("text", Text, nullable=False),
                  Column("translation", Text, nullable=False),
                  Column("unsure", Text, nullable=False, default="[]"),  # JSON: the words the model was unsure of
                  Column("notice", Text, nullable=False, default=""),  # the warnings shown under it
                  Column("hidden", Boolean, nullable=False, default=False),
                  Column("sent", Float, nullable=False))
polls = Table("polls", metadata,
              Column("id", Integer, primary_key=True, autoincrement=True),
              Column("class_id", Integer, ForeignKey("classes.id"), nullable=False, index=True),
              Column("question", Text, nullable=False),
              Column("choices", Text, nullable=False),  # JSON list of strings
              Column("answer", Integer, nullable=False),  # index of the right choice
              Column("explained", Text, nullable=False, default=""),  # the answer in words, shown on Reveal
              Column("revealed", Boolean, nullable=False, default=False),
              Column("asked", Float, nullable=False))
votes = Table("votes", metadata,
              Column("poll_id", Integer, ForeignKey("polls.id"), primary_key=True),
              Column("student", String(64), primary_key=True),  # one vote per student per poll, changeable
              Column("choice", Integer, nullable=False))

MIGRATIONS: dict[int, list[str]] = {}  # version -> the SQL that brings a database from version - 1 up to it


class ClassError(InputError):
    """What a user did that the class cannot take, in a sentence for the page (said in place, as bad input is)."""


def hashed(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normal_code(typed: str) -> str:
    """A code as typed (any case, spaces or dashes, O for 0 and I for 1) in the store's alphabet."""
    return "".join(c for c in typed.upper().replace("0", "O").replace("1", "I") if c.isalnum())


def shown_code(code: str) -> str:
    return f"{code[:4]}-{code[4:]}"


@dataclass
class Poll:
    id: int
    question: str
    choices: list[str]
    answer: int
    explained: str
    revealed: bool
    counts: list[int] = field(default_factory=list)  # votes per choice


@dataclass
class ClassState:
    """All a page shows of one class at one version."""

    id: int
    code: str
    version: int
    students: int
    teacher: dict  # pair, text, translation, step, step_title, question (None where not set)
    wall: list[dict]  # the sentences, newest first (hidden ones left out unless asked for)
    poll: Poll | None
    polls: list[Poll] = field(default_factory=list)  # every poll of the class (filled as it ends, for its summary)


class Store:
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

    def teacher(self, code: str, secret: str) -> int:
        """The class id when `secret` is its teacher's; else ClassError."""
        row = self._living(code)
        if not secret or not secrets.compare_digest(row.secret_hash, hashed(secret)):
            raise ClassError("Only the class's teacher can do that.")
        return row.id

    def show(self, class_id: int, pair: str, text: str, translation: str, step: int | None, step_title: str,
             question: str) -> None:
        """What the teacher shows now (a following student's page shows it too)."""
        with self.engine.begin() as db:
            db.execute(update(classes).where(classes.c.id == class_id).values(
                pair=pair, text=text, translation=translation, step=step, step_title=step_title, question=question,
                version=classes.c.version + 1))

    def hide(self, class_id: int, sentence_id: int) -> None:
        with self.engine.begin() as db:
            found = db.execute(update(sentences).where(sentences.c.id == sentence_id,
                                                       sentences.c.class_id == class_id).values(hidden=True)).rowcount
            if not found:
                raise ClassError("That sentence is not in this class.")
            self._bump(db, class_id)

    def sentence(self, class_id: int, sentence_id: int) -> dict:
        with self.engine.begin() as db:
            row = db.execute(select(sentences).where(sentences.c.id == sentence_id,
                                                     sentences.c.class_id == class_id)).first()
        if row is None:
            raise ClassError("That sentence is not in this class.")
        return dict(row._mapping)

    def ask(self, class_id: int, question: str, choices: list[str], answer: int, explained: str,
            now: float | None = None) -> int:
        """A new poll, the class's current one (the one before it closes)."""
        assert 0 <= answer < len(choices), "the right choice is among the choices"
        with self.engine.begin() as db:
            poll_id = db.execute(insert(polls).values(
                class_id=class_id, question=question, choices=json.dumps(choices), answer=answer, explained=explained,
                revealed=False, asked=time.time() if now is None else now)).inserted_primary_key[0]
            db.execute(update(classes).where(classes.c.id == class_id).values(poll_id=poll_id,
                                                                              version=classes.c.version + 1))
        return poll_id

    def reveal(self, class_id: int) -> None:
        with self.engine.begin() as db:
            poll_id = db.execute(select(classes.c.poll_id).where(classes.c.id == class_id)).scalar()
            if poll_id is None:
                raise ClassError("There is no question to reveal: ask the class one first.")
            db.execute(update(polls).where(polls.c.id == poll_id).values(revealed=True))
            self._bump(db, class_id)

    def end(self, class_id: int) -> ClassState:
        """The class as it ends (for its summary: hidden sentences left out, every poll), then deleted."""
        state = self.state(class_id)
        with self.engine.begin() as db:
            state.polls = [self._poll(db, p.id) for p in db.execute(
                select(polls.c.id).where(polls.c.class_id == class_id).order_by(polls.c.id))]
            self._delete(db, [class_id])
        return state

    def purge(self, now: float | None = None) -> int:
        """Deletes every class past its lifetime; how many."""
        now = time.time() if now is None else now
        with self.engine.begin() as db:
            gone = [r.id for r in db.execute(select(classes.c.id).where(classes.c.expires < now))]
            self._delete(db, gone)
        return len(gone)

    def _delete(self, db, ids: list[int]) -> None:
        if not ids:
            return
        poll_ids = select(polls.c.id).where(polls.c.class_id.in_(ids))
        db.execute(delete(votes).where(votes.c.poll_id.in_(poll_ids)))
        for table in (polls, sentences, students):
            db.execute(delete(table).where(table.c.class_id.in_(ids)))
        db.execute(delete(classes).where(classes.c.id.in_(ids)))

    # -------------------------------------------------------------------------
    # The students' side

    def join(self, code: str, token: str, nickname: str = "", now: float | None = None) -> int:
        """A student (their browser's token) in the class with this code: its id. Joining again keeps the votes."""
        row = self._living(code, now)
        with self.engine.begin() as db:
            db.execute(self._insert(students).values(
                class_id=row.id, student=hashed(token), nickname=nickname.strip()[:NICKNAME_MAX],
                joined=time.time() if now is None else now).on_conflict_do_update(
                index_elements=["class_id", "student"], set_=dict(nickname=nickname.strip()[:NICKNAME_MAX])))
            self._bump(db, row.id)
        return row.id

    def member(self, code: str, token: str) -> int:
        """The class id when this token joined the class with this code; else ClassError."""
        row = self._living(code)
        with self.engine.begin() as db:
            found = db.execute(select(students.c.student).where(students.c.class_id == row.id,
                                                                students.c.student == hashed(token))).first()
        if found is None:
            raise ClassError("Join the class first.")
        return row.id

    def send(self, class_id: int, token: str, nickname: str, pair: str, text: str, translation: str,
             unsure: list[str], notice: str, now: float | None = None) -> int:
        with self.engine.begin() as db:
            sentence_id = db.execute(insert(sentences).values(
                class_id=class_id, student=hashed(token), nickname=nickname.strip()[:NICKNAME_MAX], pair=pair,
                text=text[:TEXT_MAX], translation=translation[:2 * TEXT_MAX], unsure=json.dumps(unsure),
                notice=notice[:1000], hidden=False, sent=time.time() if now is None else now)).inserted_primary_key[0]
            self._bump(db, class_id)
        return sentence_id

    def vote(self, class_id: int, token: str, poll_id: int, choice: int) -> None:
        """A student's vote on the current poll, replacing their earlier one; refused once it is revealed."""
        with self.engine.begin() as db:
            poll = db.execute(select(polls).where(polls.c.id == poll_id, polls.c.class_id == class_id)).first()
            current = db.execute(select(classes.c.poll_id).where(classes.c.id == class_id)).scalar()
            if poll is None or poll_id != current:
                raise ClassError("That question is closed: the teacher has asked another.")
            if poll.revealed:
                raise ClassError("The answer is out: votes on this question are closed.")
            if not 0 <= choice < len(json.loads(poll.choices)):
                raise ClassError("That is not one of the choices.")
            db.execute(self._insert(votes).values(poll_id=poll_id, student=hashed(token), choice=choice)
                       .on_conflict_do_update(index_elements=["poll_id", "student"], set_=dict(choice=choice)))
            self._bump(db, class_id)

    # -------------------------------------------------------------------------
    # Reading

    def version(self, class_id: int) -> int | None:
        """The class's version, or None once it has ended or expired."""
        with self.engine.begin() as db:
            row = db.execute(select(classes.c.version, classes.c.expires).where(classes.c.id == class_id)).first()
        return None if row is None or row.expires < time.time() else row.version

    def state(self, class_id: int, wall: int = 200, hidden: bool = False) -> ClassState:
        """The class now: its newest `wall` sentences (hidden ones too when asked), its current poll with counts."""
        with self.engine.begin() as db:
            row = db.execute(select(classes).where(classes.c.id == class_id)).first()
            if row is None:
                raise ClassError("This class has ended.")
            count = db.execute(select(func.count()).select_from(students)
                               .where(students.c.class_id == class_id)).scalar_one()
            query = select(sentences).where(sentences.c.class_id == class_id)
            if not hidden:
                query = query.where(sentences.c.hidden.is_(False))
            sent = [dict(r._mapping) for r in db.execute(query.order_by(sentences.c.id.desc()).limit(wall))]
            poll = self._poll(db, row.poll_id) if row.poll_id is not None else None
        teacher = {k: getattr(row, k) for k in ("pair", "text", "translation", "step", "step_title", "question")}
        return ClassState(row.id, row.code, row.version, count, teacher, sent, poll)

    def _poll(self, db, poll_id: int) -> Poll:
        row = db.execute(select(polls).where(polls.c.id == poll_id)).first()
        choices = json.loads(row.choices)
        counts = [0] * len(choices)
        for choice, n in db.execute(select(votes.c.choice, func.count()).where(votes.c.poll_id == poll_id)
                                    .group_by(votes.c.choice)):
            counts[choice] = n
        return Poll(row.id, row.question, choices, row.answer, row.explained, row.revealed, counts)

    def _living(self, code: str, now: float | None = None):
        """The class row of a code that is live now; a code of an ended or expired class is refused."""
        now = time.time() if now is None else now
        with self.engine.begin() as db:
            row = db.execute(select(classes).where(classes.c.code == normal_code(code))).first()
        if row is None or row.expires < now:
            raise ClassError("No class has this code now: check it with your teacher (a class that ended is closed).")
        return row

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
