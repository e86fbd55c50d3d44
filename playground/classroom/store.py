"""The class store: a class's join code, its students, the sentences they sent, the polls and their votes, kept in a
real database through SQLAlchemy Core. SQLite by default (a file in WAL mode: replicas on one machine share it, no
server to start), PostgreSQL when replicas span machines (`--database-url`, DATABASE_URL). No gradio here.

What is stored, and for how long (docs/classroom.md): per class, its code, a hash of the teacher's secret, the
sentence and Lesson step the teacher shows; per student, a hash of a random token their browser keeps and an optional
nickname; the sentences sent (with their translations, unsure words and warnings) and the votes. Nothing else about a
student. A class ended by its teacher is deleted at once (its summary is downloaded first); one not ended is deleted
`LIFETIME_S` after it started. The rate limits live here too (`limit`), so that every replica counts the same events.

Every change to a class adds one to its `version`: a page polls that one number and reads the rest only when it moved.
"""
from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
import secrets
import time
import unicodedata
from dataclasses import dataclass, field

from sqlalchemy import (Boolean, Column, Float, ForeignKey, Integer, MetaData, String, Table, Text, case,
                        create_engine, delete, event, func, insert, select, update)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, OperationalError

from transformer.errors import InputError

from ..i18n import N_

SCHEMA = 5  # the schema this code writes; an older database is brought up to it (MIGRATIONS), a newer one refused
LIFETIME_S = 12 * 3600  # a class not ended is deleted this long after it started
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read off a projector and typed on a phone
CODE_LENGTH = 8  # 32^8 = 2^40 codes: with joins rate-limited, not found by trying
NICKNAME_MAX = 24
TEXT_MAX = 300  # the most of a sentence the wall keeps (the page may translate more)
OUTAGE_S = 30  # how long a call waits for the database to come back (a restart) before it fails
# a nickname may not pose as the teacher, in the page's languages: a teacher's word or a school's role, a title
# (written out or abbreviated before a name: "Hr. Weber", "Mme Roy", "M. Roy"), read with look-alike letters made
# Latin ("tеacher" with a Cyrillic е) and, where letters stand apart ("t e a c h e r"), with the gaps closed
ROLES = (r"teacher|lehrer|enseignant|professeur|schulleiter|direktor|rektor|directeur|directrice|proviseur|"
         r"headmaster|headmistress|principal|admin|moderator")
TEACHERLY = re.compile(rf"{ROLES}|\bprof\b|\bsir\b|\bmiss\b|\bmrs?\b|\bms\b|\bherr\b|\bfrau\b|\bmadame\b|"
                       r"\bmonsieur\b|\bmademoiselle\b|\b(?:hr|fr|frl|mme|mlle|dr)\b\.?\s*\w|\bm\.\s*\w",
                       re.IGNORECASE)
LOOK_ALIKES = str.maketrans("аеорсухіјѕԁһкмтвнАЕОРСУХІЈЅКМТВНαεορτυνκιΑΕΟΡΤΥΝΚΙΜ01345",
                            "aeopcyxijsdhkmtbhAEOPCYXIJSKMTBHaeoptuvkiAEOPTYNKIMoieas")
log = logging.getLogger("transformer-playground")

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
                Column("poll_id", Integer),  # the class's current poll
                Column("locked", Boolean, nullable=False, default=False),  # no new student may join
                Column("place", Text, nullable=False, default=""))  # the teacher's place on the page, as the query
                # of its link (playground/links.py): where the teacher's page comes back to after a restart
students = Table("students", metadata,
                 Column("class_id", Integer, ForeignKey("classes.id"), primary_key=True),
                 Column("student", String(64), primary_key=True),  # hash of the token the student's browser keeps
                 Column("nickname", String(NICKNAME_MAX), nullable=False, default=""),
                 Column("joined", Float, nullable=False),
                 Column("removed", Boolean, nullable=False, default=False),  # by the teacher: may not come back
                 Column("passless", Boolean, nullable=False, default=False))  # joined without the page's pass
                 # (passes.py): a script that never loaded the page, most likely
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
              Column("asked", Float, nullable=False),
              Column("pair", String(40)), Column("text", Text),  # the sentence it was asked about
              Column("step", Integer))  # the Lesson step it was asked at (None: Step by step)
votes = Table("votes", metadata,
              Column("poll_id", Integer, ForeignKey("polls.id"), primary_key=True),
              Column("student", String(64), primary_key=True),  # one vote per student per poll, changeable
              Column("choice", Integer, nullable=False))
quizzes = Table("quizzes", metadata,  # a quiz before or after the Lesson (playground/quiz.py)
                Column("id", Integer, primary_key=True, autoincrement=True),
                Column("class_id", Integer, ForeignKey("classes.id"), nullable=False, index=True),
                Column("phase", String(8), nullable=False),  # "before" or "after"
                Column("questions", Text, nullable=False),  # JSON: [{objective, text, choices, right}]
                Column("open", Boolean, nullable=False, default=True),
                Column("started", Float, nullable=False),
                Column("pair", String(40)), Column("text", Text))  # the sentence it was asked on
quiz_answers = Table("quiz_answers", metadata,  # one answer per student per question, changeable while open
                     Column("quiz_id", Integer, ForeignKey("quizzes.id"), primary_key=True),
                     Column("student", String(64), primary_key=True),  # hash of the student's token, as in votes
                     Column("question", Integer, primary_key=True),
                     Column("choice", Integer, nullable=False))
hits = Table("hits", metadata,  # the rate limits' events, for every replica to count (Store.limit)
             Column("id", Integer, primary_key=True, autoincrement=True),
             Column("key", String(120), nullable=False, index=True),
             Column("at", Float, nullable=False))

# version -> the SQL that brings a database from version - 1 up to it (a new table is made by create_all)
MIGRATIONS: dict[int, list[str]] = {
    2: ["ALTER TABLE classes ADD COLUMN locked BOOLEAN NOT NULL DEFAULT FALSE",
        "ALTER TABLE students ADD COLUMN removed BOOLEAN NOT NULL DEFAULT FALSE",
        "ALTER TABLE polls ADD COLUMN pair VARCHAR(40)", "ALTER TABLE polls ADD COLUMN text TEXT",
        "ALTER TABLE polls ADD COLUMN step INTEGER"],
    3: [],  # the quizzes' two tables: made by create_all
    4: ["ALTER TABLE students ADD COLUMN passless BOOLEAN NOT NULL DEFAULT FALSE"],
    5: ["ALTER TABLE classes ADD COLUMN place TEXT NOT NULL DEFAULT ''"],
}


class ClassError(InputError):
    """What a user did that the class cannot take, in a sentence for the page (said in place, as bad input is)."""


class TakenOut(ClassError):
    """A student the teacher took out: their browser keeps its token, so that it is refused for the class's life."""


def hashed(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normal_code(typed: str) -> str:
    """A code as typed (any case, spaces or dashes, O for 0 and I for 1) in the store's alphabet."""
    return "".join(c for c in typed.upper().replace("0", "O").replace("1", "I") if c.isalnum())


def shown_code(code: str) -> str:
    return f"{code[:4]}-{code[4:]}"


def checked_nickname(nickname: str) -> str:
    """A nickname as the class keeps it; ClassError for one that poses as the teacher."""
    nickname = " ".join(nickname.split())[:NICKNAME_MAX]
    read = "".join(c for c in unicodedata.normalize("NFKD", nickname.translate(LOOK_ALIKES))
                   if not unicodedata.combining(c))
    spaced = sum(len(part) == 1 for part in re.split(r"[\W_]+", read)) >= 3  # "t e a c h e r", "L.e.h.r.e.r"
    if TEACHERLY.search(read) or (spaced and re.search(ROLES, re.sub(r"[\W_]+", "", read), re.IGNORECASE)):
        raise ClassError(N_("Choose another nickname: only the teacher speaks as the teacher."))
    return nickname


def lasting(method):
    """A store call that outlives a restart of the database: when the connection is lost (OperationalError), it
    waits and tries again for up to OUTAGE_S. Each call is one transaction, so a lost one wrote nothing and
    trying it again writes it once."""
    @functools.wraps(method)
    def tried(self, *args, **kwargs):
        deadline, pause = time.monotonic() + OUTAGE_S, 0.25
        while True:
            try:
                return method(self, *args, **kwargs)
            except OperationalError as e:
                if time.monotonic() + pause > deadline or not _connection_lost(e):
                    raise
                log.warning("the class store is unreachable (%s); trying again in %.1f s", type(e.orig).__name__,
                            pause)
                self.engine.dispose()  # its pooled connections are dead: new ones once the database is back
                time.sleep(pause)
                pause = min(2 * pause, 2.0)
    return tried


def _connection_lost(e: OperationalError) -> bool:
    """True when the database went away (a restart, a dropped connection), not when a query was wrong."""
    text = str(e.orig).lower()
    return e.connection_invalidated or any(s in text for s in (
        "connection", "server closed", "terminating", "shutting down", "starting up", "the database system is",
        "could not connect", "database is locked"))


@dataclass
class Poll:
    id: int
    question: str
    choices: list[str]
    answer: int
    explained: str
    revealed: bool
    counts: list[int] = field(default_factory=list)  # votes per choice (removed students' left out)
    text: str = ""  # the sentence it was asked about
    pair: str = ""
    step: int | None = None  # the Lesson step (None: Step by step's "which piece comes next")


@dataclass
class Quiz:
    """One quiz of a class: its phase, questions and, per question, (right, answered) over its students."""

    id: int
    phase: str
    questions: list[dict]
    open: bool
    shares: list[tuple[int, int]] = field(default_factory=list)
    students: int = 0  # how many answered at least one question
    text: str = ""
    pair: str = ""


@dataclass
class Student:
    """One student of a class, as the teacher's list shows them."""

    key: str  # the hash of their token: what the teacher's buttons name (never the token)
    nickname: str
    sentences: int
    votes: int
    hidden: int  # of their sentences, how many are hidden
    removed: bool
    passless: bool = False  # joined without the page's pass (a script, most likely)


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
    locked: bool = False  # no new student may join
    polls: list[Poll] = field(default_factory=list)  # every poll of the class (filled as it ends, for its summary)
    roster: list[Student] = field(default_factory=list)  # every student (filled for the teacher and the summary)
    quizzes: list[Quiz] = field(default_factory=list)  # the newest quiz of each phase, in the order started

    @property
    def quiz(self) -> Quiz | None:
        """The quiz open now, if any."""
        return next((q for q in self.quizzes if q.open), None)


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
    def keep_place(self, class_id: int, place: str) -> None:
        """Where the teacher's page is (its link's query: the sentence, the settings, presentation mode, the tab and
        the Lesson's step), for the page to come back to after the app restarts or on another replica. No student
        reads it: the class's version stays."""
        with self.engine.begin() as db:
            db.execute(update(classes).where(classes.c.id == class_id).values(place=place))

    @lasting
    def place(self, class_id: int) -> str:
        """The teacher's place, as `keep_place` kept it ("" before the first)."""
        with self.engine.begin() as db:
            return db.execute(select(classes.c.place).where(classes.c.id == class_id)).scalar_one_or_none() or ""

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
                    raise ClassError(f"Someone in this class is already called “{nickname}”: choose another nickname.")
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

    @lasting
    def vote_of(self, poll_id: int, token: str) -> int | None:
        """The choice this student voted for on this poll, or None."""
        with self.engine.begin() as db:
            return db.execute(select(votes.c.choice).where(votes.c.poll_id == poll_id,
                                                           votes.c.student == hashed(token))).scalar()

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

    def _poll(self, db, poll_id: int) -> Poll:
        row = db.execute(select(polls).where(polls.c.id == poll_id)).first()
        choices = json.loads(row.choices)
        counts = [0] * len(choices)
        for choice, n in db.execute(select(votes.c.choice, func.count()).where(votes.c.poll_id == poll_id)
                                    .group_by(votes.c.choice)):
            counts[choice] = n
        return Poll(row.id, row.question, choices, row.answer, row.explained, row.revealed, counts,
                    row.text or "", row.pair or "", row.step)

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
