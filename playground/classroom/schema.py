"""The class store's schema and rows (store.py): its tables and their migrations, the rows a page reads (typed), the
codes and nicknames as the store keeps them, and the retry that outlives a database restart (`lasting`)."""
from __future__ import annotations

import functools
import hashlib
import logging
import re
import secrets
import time
import unicodedata
from dataclasses import dataclass, field

from sqlalchemy import Boolean, Column, Float, ForeignKey, Integer, MetaData, String, Table, Text
from sqlalchemy.exc import OperationalError

from transformer.errors import InputError

from ..i18n import N_

SCHEMA = 4  # the schema this code writes; an older database is brought up to it (MIGRATIONS), a newer one refused
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
                Column("locked", Boolean, nullable=False, default=False))  # no new student may join
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
