"""A class, together: the store against SQLite and a real PostgreSQL (Debian's, started here on loopback), the wall,
polls and summary as HTML, the rate limits, and the class's handlers called as the page calls them: every teacher
action refused without the teacher's secret."""
from __future__ import annotations

import concurrent.futures
import json
import os
import re
import sys
import time

import gradio as gr
import pytest
import segno

from conftest import ROOT
from playground import classroom
from playground.store import LIFETIME_S, SCHEMA, ClassError, Store, meta, normal_code
from sqlalchemy import update

sys.path.insert(0, str(ROOT / "tools"))
import throwaway_postgres  # noqa: E402

HOSTILE = ["<script>window.pwned = 1</script>", '<img src=x onerror="window.pwned = 1">', "W" * 2000]


@pytest.fixture(scope="session")
def postgres_url():
    """A real PostgreSQL: TEST_DATABASE_URL when set, else a throwaway server of Debian's package. Skipped only where
    PostgreSQL is not installed and this is not CI (CI installs it: .ci/run)."""
    if os.environ.get("TEST_DATABASE_URL"):
        yield os.environ["TEST_DATABASE_URL"]
        return
    if throwaway_postgres.binaries() is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL is not installed: .ci/run installs Debian's postgresql")
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    with throwaway_postgres.running() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'classes.sqlite3'}"
    return request.getfixturevalue("postgres_url")


def test_a_class_from_start_to_end(url):
    store = Store(url)
    code, secret = store.start()
    assert re.fullmatch(r"[A-Z2-9]{8}", code) and len(secret) >= 24
    class_id = store.teacher(code, secret)
    store.join(code.lower(), "phone-1", "Ann")  # typed in any case
    store.join(f"{code[:4]}-{code[4:]}", "phone-2")
    store.send(class_id, "phone-1", "Ann", "en-de", "I have a cat.", "Ich habe eine Katze.", ["Katze."], "")
    hidden = store.send(class_id, "phone-2", "", "en-de", "Rude words.", "Grobe Worte.", [], "")
    store.hide(class_id, hidden)
    poll = store.ask(class_id, "Which?", ["a", "b", "c"], 2, "<b>c</b>")
    store.vote(class_id, "phone-1", poll, 0)
    store.vote(class_id, "phone-1", poll, 2)  # changed: still one vote
    store.vote(class_id, "phone-2", poll, 2)
    state = store.state(class_id)
    assert state.students == 2 and [s["text"] for s in state.wall] == ["I have a cat."]
    assert state.poll.counts == [0, 0, 2]
    store.reveal(class_id)
    with pytest.raises(ClassError, match="closed"):
        store.vote(class_id, "phone-2", poll, 1)
    ended = store.end(class_id)
    assert [p.counts for p in ended.polls] == [[0, 0, 2]] and len(ended.wall) == 1
    with pytest.raises(ClassError, match="No class has this code"):
        store.join(code, "phone-3")  # an ended class's code stops working
    with pytest.raises(ClassError):
        store.teacher(code, secret)
    assert store.version(class_id) is None


def test_teacher_actions_need_the_secret_and_reach_only_their_own_class(url):
    store = Store(url)
    code, secret = store.start()
    other_code, other_secret = store.start()
    for wrong in ("", "guess", other_secret, secret[:-1]):
        with pytest.raises(ClassError, match="Only the class's teacher"):
            store.teacher(code, wrong)
    mine, theirs = store.teacher(code, secret), store.teacher(other_code, other_secret)
    store.join(other_code, "phone")
    sentence = store.send(theirs, "phone", "", "en-de", "Hello!", "Hallo!", [], "")
    with pytest.raises(ClassError, match="not in this class"):
        store.hide(mine, sentence)  # a teacher's own secret does not reach another class's wall
    with pytest.raises(ClassError, match="not in this class"):
        store.sentence(mine, sentence)
    with pytest.raises(ClassError, match="Join the class first"):
        store.member(code, "phone")  # joined the other class only


def test_a_class_not_ended_expires_and_is_deleted(url):
    store = Store(url)
    code, secret = store.start(now=time.time() - LIFETIME_S - 1)
    with pytest.raises(ClassError, match="No class has this code"):
        store.join(code, "late-phone")
    assert store.purge() >= 1
    with pytest.raises(ClassError):
        store.teacher(code, secret)


def test_votes_from_two_replicas_at_once_are_each_counted_exactly_once(url):
    replicas = [Store(url), Store(url)]  # two processes' engines on one database
    code, secret = replicas[0].start()
    class_id = replicas[0].teacher(code, secret)
    students = [f"phone-{i}" for i in range(40)]
    for s in students:
        replicas[hash(s) % 2].join(code, s)
    poll = replicas[1].ask(class_id, "Which?", ["a", "b"], 0, "")

    def vote(i: int) -> None:
        store = replicas[i % 2]
        store.vote(class_id, students[i], poll, 1)  # each changes their mind once, on the other replica
        replicas[(i + 1) % 2].vote(class_id, students[i], poll, i % 2)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(vote, range(len(students))))
    assert replicas[0].state(class_id).poll.counts == [20, 20]


def test_the_schema_is_stamped_and_a_newer_one_refused(url):
    store = Store(url)
    with store.engine.begin() as db:
        assert db.execute(meta.select().where(meta.c.key == "schema")).first().value == str(SCHEMA)
    assert Store(url).browser_secret() == store.browser_secret()  # every replica encrypts with one key
    with store.engine.begin() as db:
        db.execute(update(meta).where(meta.c.key == "schema").values(value=str(SCHEMA + 1)))
    with pytest.raises(RuntimeError, match="newer playground"):
        Store(url)
    with store.engine.begin() as db:
        db.execute(update(meta).where(meta.c.key == "schema").values(value=str(SCHEMA)))


# -----------------------------------------------------------------------------
# What a page shows of a class


def test_codes_are_read_as_typed_on_a_phone():
    assert normal_code(" abcd-efgh ") == "ABCDEFGH" and normal_code("AB0D 1FGH") == "ABODIFGH"


def test_the_qr_code_holds_the_join_link_and_the_card_never_the_secret(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'c.sqlite3'}")
    code, secret = store.start()
    link = classroom.join_link("http://192.168.1.20:7860/?pair=en-de#x", code)
    assert link == f"http://192.168.1.20:7860/?class={code}"
    card = classroom.join_card(link, code, 3)
    drawn = re.search(r"<svg.*</svg>", card, re.S).group()
    assert drawn == segno.make(link, error="m").svg_inline(scale=1, border=2, omitsize=True, dark="#111")
    assert secret not in card and "3 students joined" in card


def wall_of(sentences: list[dict]):
    return classroom.ClassState(1, "ABCDEFGH", 1, 2, {}, sentences, None)


def sentence(i: int, text: str, **kw) -> dict:
    return dict(id=i, text=text, translation=kw.get("translation", "Hallo"), pair="en-de", unsure=json.dumps(
        kw.get("unsure", [])), notice=kw.get("notice", ""), nickname=kw.get("nickname", ""), hidden=False)


def test_the_wall_escapes_what_students_type_and_groups_the_same_sentence():
    wall = [sentence(5, t, nickname=t[:24], notice=t) for t in HOSTILE] + [
        sentence(2, "Hello  everyone!", nickname="Bo"), sentence(1, "hello everyone!", nickname="Al")]
    for teacher in (True, False):
        shown = classroom.wall_html(wall_of(wall), teacher=teacher)
        assert "<script>" not in shown and "<img" not in shown and "&lt;script&gt;" in shown
        assert ("data-act=\"hide\"" in shown) is teacher  # the buttons are the teacher's
    groups = classroom.grouped(wall)
    assert len(groups) == 4 and groups[-1]["count"] == 2 and groups[-1]["nicknames"] == ["Bo", "Al"]


def test_a_poll_shows_counts_only_when_asked_and_the_answer_once_revealed():
    poll = classroom.Poll(1, "Which <b>piece</b>?", ["“Ich”", "<i>x</i>"], 0, "“Ich”, with probability 0.9.", False,
                          [3, 1])
    hidden = classroom.poll_html(poll, show_counts=False)
    assert "poll-n" not in hidden and "Answer" not in hidden and "&lt;b&gt;" in hidden and "<i>" not in hidden
    poll.revealed = True
    shown = classroom.poll_html(poll, show_counts=True)
    assert "4 votes" in shown and "poll-right" in shown and "Answer" in shown


def test_the_summary_keeps_the_class_but_not_what_the_teacher_hid(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'c.sqlite3'}")
    code, secret = store.start()
    class_id = store.teacher(code, secret)
    store.join(code, "p", "Zoë")
    store.send(class_id, "p", "Zoë", "en-de", HOSTILE[0], "Hallo", ["Hallo"], "Check the names")
    store.hide(class_id, store.send(class_id, "p", "Zoë", "en-de", "Hidden words", "Versteckt", [], ""))
    store.ask(class_id, "Yes or no?", ["Yes", "No"], 1, "No.")
    page = classroom.summary(store.end(class_id), {"en-de": "English → German"})
    assert "&lt;script&gt;" in page and "<script>" not in page and "Hidden words" not in page
    assert "Zoë" in page and "No: 0 votes (the answer)" in page and 'mark class="unsure">Hallo' in page


def test_the_limiter_allows_n_per_window_per_key():
    limit = classroom.Limiter(3, 60)
    assert [limit.allow("a", now=t) for t in (0, 1, 2, 3)] == [True, True, True, False]
    assert limit.allow("b", now=3) and limit.allow("a", now=61)


# -----------------------------------------------------------------------------
# The class's handlers, as the page calls them (tests/test_app.py's page of the shipped checkpoints)


class Visitor:
    """What the handlers read of gr.Request: the session and the client's address."""

    def __init__(self, name: str, host: str = "127.0.0.1"):
        self.session_hash, self.client = name, type("Client", (), {"host": host})()


@pytest.fixture(scope="module")
def page(translators, tmp_path_factory):
    import app

    return app.build_page(translators, store=Store(f"sqlite:///{tmp_path_factory.mktemp('class') / 'c.sqlite3'}"))


def started(page) -> tuple[dict, dict]:
    classes = page.classroom
    out = classes.begin({classes.address: "http://127.0.0.1:7860/", page.result: None}, Visitor("teacher"))
    return out[classes.teacher], out


def test_a_student_copying_the_teachers_requests_without_the_secret_is_refused(page):
    classes = page.classroom
    teacher, out = started(page)
    assert secret_free(out, teacher["secret"])
    joined = classes.enrol(teacher["code"], {}, Visitor("student"))
    member = joined[classes.member]
    student_id = page.classroom.store.member(member["code"], member["token"])
    sent = classes.store.send(student_id, member["token"], "", "en-de", "Hi", "Hallo", [], "")
    copied = {"code": teacher["code"], "secret": "", "link": teacher["link"]}  # what a student can know
    for values in ({classes.teacher: copied}, {classes.teacher: {"code": teacher["code"], "secret": member["token"]}},
                   {classes.teacher: {}}):
        values |= {page.result: None, page.views["lesson"].number: 1, page.views["steps"].index: 1}
        for handler in (classes.ask_class, classes.reveal_class, classes.finish):
            with pytest.raises(gr.Error, match=REFUSED):
                handler(values, Visitor("student")) if handler == classes.ask_class else handler(values)
        for act in ("hide", "open"):
            with pytest.raises(gr.Error, match=REFUSED):
                classes.act(values, Visitor("student"), gr.EventData(None, {"act": act, "id": str(sent)}))
    state = classes.store.state(student_id)
    assert [s["text"] for s in state.wall] == ["Hi"] and state.poll is None  # nothing changed
    ended = classes.finish({classes.teacher: teacher})  # the teacher's own secret works
    assert "summary is downloading" in ended[classes.said]


REFUSED = "Only the class's teacher|No class has this code"  # a wrong secret; no class named at all


def secret_free(out: dict, secret: str) -> bool:
    """True when no update the page shows (everything but the browser's own state) holds the secret."""
    return all(secret not in str(v) for c, v in out.items() if not isinstance(c, gr.BrowserState))


def test_joining_by_trying_codes_is_refused_after_a_few_and_a_good_code_still_joins(page):
    classes = page.classroom
    teacher, _ = started(page)
    refused = []
    for i in range(40):
        try:
            classes.join_typed({classes.code: f"ZZZZ{i:04d}", classes.member: {}, page.result: None},
                               Visitor(f"guesser-{i}", host="10.9.9.9"))  # a new session each try: the address counts
        except gr.Error as e:
            refused.append(str(e.message))
    assert sum("Too many wrong codes" in m for m in refused) >= 10
    user = Visitor("one-session")
    for _ in range(10):
        with pytest.raises(gr.Error):
            classes.join_typed({classes.code: "WRONGCOD", classes.member: {}, page.result: None}, user)
    with pytest.raises(gr.Error, match="Too many tries"):  # even a good code: the session tried too often
        classes.join_typed({classes.code: teacher["code"], classes.member: {}, page.result: None}, user)
    ok = classes.join_typed({classes.code: teacher["code"].lower(), classes.member: {}, page.result: None},
                            Visitor("fresh"))
    assert ok[classes.member]["code"] == teacher["code"]
