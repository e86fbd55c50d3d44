"""A class, together: the store against SQLite and a real PostgreSQL (Debian's, started here on loopback), the wall,
polls and summary as HTML, the rate limits, and the class's handlers called as the page calls them: every teacher
action refused without the teacher's secret."""
from __future__ import annotations

import concurrent.futures
import json
import os
import re
import sys
import threading
import time

import gradio as gr
import pytest
import segno

from conftest import ROOT
from playground import context, registry
from playground.classroom import pages as classroom
from transformer.decoding import DecodeOptions
from playground.classroom.store import LIFETIME_S, SCHEMA, ClassError, Store, meta, normal_code
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
    before = store.version(class_id)
    store.touch(class_id)  # a change only the pages know (a model the teacher shared): every page draws again
    assert store.version(class_id) == before + 1
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


@pytest.mark.slow
def test_postgresql_restarted_mid_class_loses_no_sentence_or_vote(postgres_url):
    """The database restarts while a class sends and votes (every connection dropped): the calls made meanwhile
    wait for it (the pool checks its connections) and each lands once."""
    if not hasattr(postgres_url, "restart"):
        pytest.skip("TEST_DATABASE_URL names a server this test cannot restart")
    store = Store(postgres_url)
    code, secret = store.start()
    class_id = store.teacher(code, secret)
    phones = [f"phone-{i}" for i in range(3)]
    for phone in phones:
        store.join(code, phone)
    poll = store.ask(class_id, "Which?", ["a", "b"], 0, "")
    store.send(class_id, phones[0], "", "en-de", "Before.", "Vorher.", [], "")
    restarting = threading.Thread(target=postgres_url.restart, args=(3.0,))
    restarting.start()
    time.sleep(0.5)  # the server is down now
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        sends = [pool.submit(store.send, class_id, p, "", "en-de", f"During ({p}).", "Während.", [], "")
                 for p in phones]
        votes = [pool.submit(store.vote, class_id, p, poll, 1) for p in phones]
        for f in sends + votes:
            f.result(timeout=60)
    restarting.join()
    state = store.state(class_id)
    assert sorted(s["text"] for s in state.wall) == ["Before."] + sorted(f"During ({p})." for p in phones)
    assert state.poll.counts == [0, 3] and state.students == 3
    store.end(class_id)


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
    card = classroom.join_card(link, code, 3, locked=True)
    drawn = re.search(r"<svg.*</svg>", card, re.S).group()
    assert drawn == segno.make(link, error="m").svg_inline(scale=1, border=2, omitsize=True, dark="#111")
    assert secret not in card and "3 students joined · closed to new students" in card


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


def test_a_phone_shows_each_choice_once_as_a_button_and_after_reveal_whether_it_was_right():
    poll = classroom.Poll(7, "Which <b>piece</b>?", ["Ich", "<i>x</i>", "Du"], 0, "", False, [0, 0, 0])
    new = classroom.question_html(poll, None)
    assert new.count("Which &lt;b&gt;piece&lt;/b&gt;?") == 1 and "New question" in new and "<i>" not in new
    assert re.findall(r'data-choice="(\d)"', new) == ["0", "1", "2"] and "disabled" not in new
    voted = classroom.question_html(poll, 2)
    assert "New question" not in voted and 'aria-pressed="true"' in voted and "you can change it" in voted
    poll.revealed, poll.counts = True, [2, 0, 1]
    for mine, verdict in ((0, "Right!"), (2, "Not quite."), (None, "")):
        done = classroom.question_html(poll, mine)
        assert (verdict or "Answer") in done and "change it" not in done and done.count("disabled") == 3


def test_the_summary_keeps_the_class_but_not_what_the_teacher_hid(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'c.sqlite3'}")
    code, secret = store.start()
    class_id = store.teacher(code, secret)
    store.join(code, "p", "Zoë")
    store.join(code, "fake", "Spammer")
    store.send(class_id, "p", "Zoë", "en-de", HOSTILE[0], "Hallo", ["Hallo"], "Check the names")
    store.hide(class_id, store.send(class_id, "p", "Zoë", "en-de", "Hidden words", "Versteckt", [], ""))
    store.send(class_id, "fake", "Spammer", "en-de", "Buy now", "Jetzt kaufen", [], "")
    store.remove(class_id, store_key("fake"))
    store.ask(class_id, "Yes or no?", ["Yes", "No"], 1, "No.", pair="en-de", text="I see a dog.", step=5)
    page = classroom.summary(store.end(class_id), {"en-de": "English → German"})
    assert "&lt;script&gt;" in page and "Hidden words" not in page
    assert page.count("<script>") == 1 and page.endswith(classroom.LOCAL_TIME + "</html>")  # its own, times only
    assert "Zoë" in page and "No: 0 votes (the answer)" in page and 'mark class="unsure">Hallo' in page
    assert "Lesson step 5, on “I see a dog.” (English → German)" in page
    assert "Zoë: 1 sentence on the wall, 0 votes" in page and "1 student joined" in page
    assert "Spammer" not in page and "Buy now" not in page  # taken out: nowhere


def test_a_limit_counts_the_events_of_every_replica_in_a_sliding_window(url):
    replicas = [Store(url), Store(url)]
    assert [replicas[t % 2].limit("join 10.0.0.1", 3, 60, now=1000 + t) for t in range(4)] == [True, True, True,
                                                                                                 False]
    assert replicas[0].limit("join 10.0.0.2", 3, 60, now=1003)  # another key counts apart
    assert replicas[1].limit("join 10.0.0.1", 3, 60, now=1061)  # the first event has left the window


def test_a_locked_class_takes_no_new_student_and_a_known_one_comes_back(url):
    store = Store(url)
    code, secret = store.start()
    class_id = store.teacher(code, secret)
    assert store.join(code, "phone-1", "Ann") == (class_id, True)
    store.lock(class_id, True)
    assert store.state(class_id).locked
    with pytest.raises(ClassError, match="closed to new students"):
        store.join(code, "script-1")
    assert store.join(code, "phone-1", "Ann") == (class_id, False)  # a reload of a student in the class
    store.lock(class_id, False)
    assert store.join(code, "phone-2")[1]


def test_nicknames_are_unique_in_a_class_and_never_the_teachers(url):
    store = Store(url)
    code, _ = store.start()
    store.join(code, "phone-1", "Ann")
    with pytest.raises(ClassError, match="already called"):
        store.join(code, "phone-2", " ann ")
    for posing in ("Mr Weber (your teacher)", "TEACHER", "Frau Schmidt", "Le prof", "Lehrerin",
                   "Hr. Weber", "Fr. Schmidt", "Mme Roy", "M. Roy", "Dr. Who",  # titles abbreviated
                   "t e a c h e r", "L.e.h.r.e.r", "T34CHER", "tеacher",  # spaced, digits, a Cyrillic е
                   "Head teacher", "Headmaster", "Schulleiterin", "Rektor", "Directrice", "Proviseur"):  # roles
        with pytest.raises(ClassError, match="only the teacher"):
            store.join(code, "phone-3", posing)
    for name in ("Derek Torres", "Frida", "Hrvoje", "Max M.", "J B", "Marie-Claire"):  # names, not titles
        store.join(code, "phone-3", name)
    store.join(code, "phone-1", "Ann B")  # a student may rename themselves; "Ann" is free again
    store.join(code, "phone-2", "Ann")


def test_a_student_taken_out_is_refused_and_leaves_no_trace_on_the_wall_or_the_votes(url):
    store = Store(url)
    code, secret = store.start()
    class_id = store.teacher(code, secret)
    for phone in ("phone-1", "fake"):
        store.join(code, phone)
    store.send(class_id, "phone-1", "", "en-de", "Hello!", "Hallo!", [], "")
    store.send(class_id, "fake", "", "en-de", "Spam", "Spam", [], "")
    poll = store.ask(class_id, "Which?", ["a", "b"], 0, "")
    store.vote(class_id, "phone-1", poll, 0)
    store.vote(class_id, "fake", poll, 1)
    assert store.state(class_id).poll.counts == [1, 1]
    store.remove(class_id, store_key("fake"))
    state = store.state(class_id, roster=True)
    assert state.students == 1 and state.poll.counts == [1, 0] and [s["text"] for s in state.wall] == ["Hello!"]
    with pytest.raises(ClassError, match="took you out"):
        store.join(code, "fake")
    with pytest.raises(ClassError, match="took you out"):
        store.member(code, "fake")
    mine = store_key("phone-1")
    assert store.hide_all(class_id, mine) == 1 and store.state(class_id).wall == []
    assert store.hide_all(class_id, mine, hidden=False) == 1 and len(store.state(class_id).wall) == 1
    ended = store.end(class_id)
    assert [(s.sentences, s.votes, s.removed) for s in ended.roster] == [(1, 1, False), (1, 0, True)]


def test_a_student_taken_out_keeps_their_nickname_from_others_and_the_list_keeps_every_name(url):
    """A removed student's nickname is not given to another browser; the students without a nickname are numbered
    as they joined, and keep their numbers when one of them is taken out; they, or every join marked as made without
    the page's pass, go out in one action."""
    store = Store(url)
    code, secret = store.start()
    class_id = store.teacher(code, secret)
    store.join(code, "ann", "Ann")
    for phone in ("s1", "s2", "s3", "s4"):
        store.join(code, phone)
    store.remove(class_id, store_key("ann"))
    with pytest.raises(ClassError, match="already called"):
        store.join(code, "another-browser", "ann")
    store.remove(class_id, store_key("s2"))
    roster = classroom.roster_html(store.state(class_id, roster=True))
    assert re.findall(r"no nickname \((\d+)\)", roster) == ["1", "3", "4"]  # (2) left; nobody else renamed
    assert "Take out everyone without a nickname (3)" in roster and roster.count('data-sure="') == 4
    store.join(code, "named", "Ben")
    for name in ("Eve", "Mal"):
        store.join(code, name, name, passless=True)  # joins without the page's pass: marked
    roster = classroom.roster_html(store.state(class_id, roster=True))
    assert roster.count('class="roster-passless"') == 2 and "Take out everyone marked ⚠ (2)" in roster
    assert store.remove_all(class_id, passless=True) == 2
    assert store.remove_all(class_id, passless=False) == 3
    state = store.state(class_id, roster=True)
    assert state.students == 1 and [s.nickname for s in state.roster if not s.removed] == ["Ben"]
    for phone in ("s1", "s3", "s4", "Eve"):
        with pytest.raises(ClassError, match="took you out"):
            store.join(code, phone)


def store_key(token: str) -> str:
    from playground.classroom.store import hashed
    return hashed(token)


def test_an_older_database_is_migrated_and_keeps_its_classes(url):
    store = Store(url)
    code, secret = store.start()
    class_id = store.teacher(code, secret)
    store.join(code, "phone")
    with store.engine.begin() as db:  # the database as schema 1 left it
        for table, column in (("classes", "locked"), ("students", "removed"), ("students", "passless"),
                              ("polls", "pair"), ("polls", "text"), ("polls", "step")):
            db.exec_driver_sql(f"ALTER TABLE {table} DROP COLUMN {column}")
        db.execute(update(meta).where(meta.c.key == "schema").values(value="1"))
    again = Store(url)
    assert again.member(code, "phone") == class_id and not again.state(class_id).locked
    again.ask(class_id, "Which?", ["a", "b"], 0, "", pair="en-de", text="Hi.", step=3)
    assert again.state(class_id).poll.step == 3
    assert [s.passless for s in again.state(class_id, roster=True).roster] == [False]


# -----------------------------------------------------------------------------
# The class's handlers, as the page calls them (tests/test_app.py's page of the shipped checkpoints)


class Visitor:
    """What the handlers read of gr.Request: the session, the client's address and the headers."""

    def __init__(self, name: str, host: str = "127.0.0.1", headers: dict | None = None):
        self.session_hash, self.client = name, type("Client", (), {"host": host})()
        self.headers = headers or {}


@pytest.fixture(scope="module")
def page(translators, tmp_path_factory):
    import app

    return app.build_page(translators, store=Store(f"sqlite:///{tmp_path_factory.mktemp('class') / 'c.sqlite3'}"),
                          trusted_proxies=frozenset({"127.0.0.9"}))


def started(page, who: str = "teacher") -> tuple[dict, dict]:
    classes = page.classroom
    out = classes.teaching.begin({classes.address: "http://127.0.0.1:7860/", page.result: None, classes.teacher: {}},
                        Visitor(who, host=f"10.1.{len(who)}.{hash(who) % 250}"))
    return out[classes.teacher], out


def test_starting_and_ending_a_class_builds_the_teachers_parts_and_the_lesson_they_opened_again(page):
    """The teacher's own parts are built for the teacher's page (the hidden number `parts` set anew), and the Lesson
    or Step by step a teacher already opened is built again, with the class's question to ask; a tab not opened yet
    is built as it opens, already with it. Ending the class builds them again without."""
    classes, tabs = page.classroom, page.tabs
    visitor = Visitor("teacher-rebuilt", host="10.1.20.20")
    session = page.sessions.of(visitor)
    session.built.add("lesson")  # the Lesson was opened before the class started; Step by step was not
    out = classes.teaching.begin({classes.address: "http://127.0.0.1:7860/", page.result: None, classes.teacher: {}}, visitor)
    assert session.teaching and classes.parts in out and tabs.built["lesson"] in out and tabs.built["steps"] not in out
    again = classes.teaching.begin({classes.address: "", page.result: None, classes.teacher: out[classes.teacher]}, visitor)
    assert "still running" in again[classes.said] and classes.parts not in again  # nothing built twice
    ended = classes.teaching.finish({classes.teacher: out[classes.teacher]}, visitor)
    assert not session.teaching and classes.parts in ended and tabs.built["lesson"] in ended
    assert ended[tabs.built["lesson"]] != out[tabs.built["lesson"]]  # a new number: its change builds it again


def test_a_teachers_lesson_and_step_by_step_are_built_with_the_question_and_the_votes_beside_it(page):
    """wire_views, as a teacher's render calls it: Ask the class shown (and Step by step's Reveal to the class), a
    timer of their own that draws the votes beside each view's question; a visitor outside a class gets neither."""
    import gradio as gr
    from playground import registry
    from playground.views import CLASSES

    classes = page.classroom
    for teaching in (True, False):
        with gr.Blocks() as blocks:
            views = {k: CLASSES[k](registry.entry(k), page.ctx, page.panel) for k in ("lesson", "steps")}
            events = len(blocks.fns)
            classes.questions.wire_views(views, classes.event, type("Session", (), {"teaching": teaching})())
            timers = [b for b in blocks.blocks.values() if isinstance(b, gr.Timer)]
            ticks = [fn for fn in blocks.fns.values() if fn.targets and fn.targets[0][1] == "tick"]
        shown = [views["lesson"].ask.visible, views["steps"].ask.visible, views["steps"].reveal.visible]
        assert shown == [teaching] * 3
        assert len(timers) == len(ticks) == int(teaching) and len(blocks.fns) > events
        if teaching:
            assert {views["lesson"].poll, views["lesson"].quiz, views["steps"].poll} == set(ticks[0].outputs)


def test_a_student_copying_the_teachers_requests_without_the_secret_is_refused(page):
    classes = page.classroom
    teacher, out = started(page)
    assert secret_free(out, teacher["secret"])
    joined = classes.studying.enrol(teacher["code"], {}, Visitor("student"))
    member = joined[classes.member]
    student_id = page.classroom.store.member(member["code"], member["token"])
    sent = classes.store.send(student_id, member["token"], "", "en-de", "Hi", "Hallo", [], "")
    copied = {"code": teacher["code"], "secret": "", "link": teacher["link"]}  # what a student can know
    for values in ({classes.teacher: copied}, {classes.teacher: {"code": teacher["code"], "secret": member["token"]}},
                   {classes.teacher: {}}):
        values |= {page.result: None, page.views["steps"].index: 1}
        for handler in (classes.questions.ask_lesson, classes.questions.ask_steps, classes.questions.reveal_class, classes.teaching.finish,
                        classes.teaching.toggle_lock):
            with pytest.raises(gr.Error, match=REFUSED):
                handler(values)
        for act, which in (("hide", str(sent)), ("open", str(sent)), ("remove", store_key(member["token"])),
                           ("hide-all", store_key(member["token"])), ("lock", "")):
            with pytest.raises(gr.Error, match=REFUSED):
                classes.teaching.act(values, gr.EventData(None, {"act": act, "id": which}))
        assert classes.questions.reveal_with_lesson(values) == {}  # the Lesson's own Reveal: nothing for the class
    state = classes.store.state(student_id, roster=True)
    assert [s["text"] for s in state.wall] == ["Hi"] and state.poll is None and not state.locked
    assert not any(s.removed for s in state.roster)  # nothing changed
    ended = classes.teaching.finish({classes.teacher: teacher})  # the teacher's own secret works
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
            classes.studying.join_typed({classes.code: f"ZZZZ{i:04d}", classes.member: {}, page.result: None},
                               Visitor(f"guesser-{i}", host="10.9.9.9"))  # a new session each try: the address counts
        except gr.Error as e:
            refused.append(str(e.message))
    assert sum("Too many wrong codes" in m for m in refused) >= 10
    ok = classes.studying.join_typed({classes.code: teacher["code"].lower(), classes.member: {}, page.result: None},
                            Visitor("fresh", host="10.9.9.10"))
    assert ok[classes.member]["code"] == teacher["code"]


def test_fifteen_joins_from_one_address_are_each_listed_and_a_locked_class_takes_no_more(page):
    """A script joining 15 times in fresh page sessions from one address: the teacher sees 15 students (a class
    behind one school router looks the same), takes one out, closes the class, and no join gets in after that."""
    classes = page.classroom
    teacher, _ = started(page, "teacher-15")
    members = [classes.studying.enrol(teacher["code"], {}, Visitor(f"script-{i}", host="10.7.7.7"))[classes.member]
               for i in range(15)]
    values = {classes.teacher: teacher, page.result: None}
    class_id = classes.teaching_class(values)
    state = classes.store.state(class_id, roster=True)
    assert state.students == 15 and len(state.roster) == 15
    listed = classes.teaching.tick_teacher(values | {page.panel.translation: ""}, Visitor("teacher-15"))
    parts = classes.off_page[0]  # the teacher's parts (a page's own are built for it)
    assert listed[parts.roster].count('data-act="remove"') == 15 and "15 students joined" in listed[parts.roster]
    assert listed[parts.join_fold].label.startswith("Class ") and "15 students joined" in listed[parts.join_fold].label
    classes.teaching.act(values, gr.EventData(None, {"act": "remove", "id": store_key(members[0]["token"])}))
    assert "closed" in classes.teaching.act(values, gr.EventData(None, {"act": "lock", "id": ""}))[classes.said]
    for i in range(5):  # fresh sessions, the same address or another one: refused
        with pytest.raises(ClassError, match="closed to new students"):
            classes.studying.enrol(teacher["code"], {}, Visitor(f"late-{i}", host=f"10.7.7.{7 + i}"))
    with pytest.raises(ClassError, match="took you out"):
        classes.studying.enrol(teacher["code"], members[0], Visitor("script-0-again", host="10.7.7.7"))
    # the removed student's page is told, and its browser keeps the token the class refuses: its link, opened again
    # in that browser (the class reopened), does not let it in as a new student
    told = classes.studying.tick_student({classes.member: members[0]}, Visitor("script-0"))
    assert "took you out" in told[classes.said] and told[classes.member] == members[0]
    assert "took you out" in told[classes.question]  # said on top too: in a phone's first screen
    assert "open to new students" in classes.teaching.act(values, gr.EventData(None, {"act": "lock", "id": ""}))[classes.said]
    opened = classes.on_load({"class": teacher["code"]}, {classes.member: told[classes.member]}, Visitor("script-0b"))
    assert "took you out" in opened[classes.said] and classes.member not in opened
    assert 'class="class-out"' in opened[classes.question]
    classes.teaching.act(values, gr.EventData(None, {"act": "lock", "id": ""}))
    back = classes.studying.enrol(teacher["code"], members[1], Visitor("script-1-reload", host="10.7.7.7"))
    assert back[classes.member]["token"] == members[1]["token"]  # a student's reload: the same student
    assert classes.store.state(class_id).students == 14
    classes.teaching.finish(values)


def test_new_students_from_one_address_are_limited_to_what_a_class_needs(page, monkeypatch):
    from playground.classroom import student
    monkeypatch.setattr(student, "NEW_STUDENTS", (5, 600))
    classes = page.classroom
    teacher, _ = started(page, "teacher-limit")
    for i in range(5):
        classes.studying.enrol(teacher["code"], {}, Visitor(f"limited-{i}", host="10.8.8.8"))
    with pytest.raises(ClassError, match="Too many new students"):
        classes.studying.enrol(teacher["code"], {}, Visitor("limited-5", host="10.8.8.8"))
    classes.studying.enrol(teacher["code"], {}, Visitor("limited-6", host="10.8.8.9"))  # another address
    # behind a trusted balancer, the address it forwards is the one that counts
    classes.studying.enrol(teacher["code"], {}, Visitor("behind", host="127.0.0.9", headers={"x-forwarded-for": "10.8.8.20"}))
    with pytest.raises(ClassError, match="Too many new students"):  # an untrusted one's header is not believed
        classes.studying.enrol(teacher["code"], {}, Visitor("spoof", host="10.8.8.8", headers={"x-forwarded-for": "1.2.3.4"}))


@pytest.mark.parametrize("language", ["de", "fr"])
def test_what_the_class_says_to_a_phone_and_the_teacher_is_in_their_language(page, monkeypatch, language):
    """Every notice of the class in the reader's language, those with values too (a nickname taken, a step without
    a question): the nickname kept or refused, Leave, the sends limited, the classes started limited, a lock from
    the list of students."""
    from playground import i18n
    from playground.classroom import student, teacher as teacher_side

    classes, panel, _ = page.classroom, page.panel, i18n.Texts(language)
    phone = lambda name: Visitor(name, headers={"accept-language": language})  # noqa: E731
    teacher, _started = started(page, f"teacher-words-{language}")
    values = {classes.teacher: teacher, page.result: None}
    said = classes.teaching.act(values, gr.EventData(None, {"act": "lock", "id": ""}), phone("t"))[classes.said]
    assert said == _("The class is closed: no new student can join (those in it can come back).") != said.lower()
    classes.teaching.act(values, gr.EventData(None, {"act": "lock", "id": ""}), phone("t"))
    parts = classes.off_page[1]
    first = classes.studying.enrol(teacher["code"], {}, phone(f"words-1-{language}"))[classes.member]
    second = classes.studying.enrol(teacher["code"], {}, phone(f"words-2-{language}"))[classes.member]
    named = {parts.nickname: "Mia", parts.send: True, parts.follow: True}
    out = classes.studying.settings({classes.member: first} | named, phone(f"words-1-{language}"))
    assert out[classes.said] == _("Your nickname in the class: {nickname}.", nickname="**Mia**")
    taken = classes.studying.settings({classes.member: second} | named, phone(f"words-2-{language}"))[classes.said]
    assert taken == _("Someone in this class is already called “{nickname}”: choose another nickname.",
                      nickname="Mia")
    result = context.run(page.ctx.translator("en-de"), "en-de", "I have a cat.", DecodeOptions(),
                         page.ctx.caches.translations, page.ctx.batcher)
    sent = {classes.member: first, page.result: result, panel.pair: "en-de", panel.text: "I have a cat.",
            panel.translation: result.translation.text, panel.notice: ""}
    monkeypatch.setattr(student, "SENDS", (0, 60))
    limited = classes.studying.send_translated(sent, phone(f"words-1-{language}"))[classes.said]
    assert limited == _("Sent many sentences just now: this one stayed on your phone. Wait a moment.")
    left = classes.studying.quit({classes.member: first}, phone(f"words-1-{language}"))[classes.said]
    assert left == _("You left the class.")
    monkeypatch.setattr(teacher_side, "STARTS", (0, 600))
    again = classes.teaching.begin({classes.address: "http://x/", page.result: None, classes.teacher: {}},
                                   phone("another-teacher"))[classes.said]
    assert again == _("Several classes were started from here just now: wait a few minutes.")
    english = [i18n.ENGLISH(m) for m in ("The class is closed: no new student can join (those in it can come back).",
                                         "Sent many sentences just now: this one stayed on your phone. Wait a moment.",
                                         "You left the class.",
                                         "Several classes were started from here just now: wait a few minutes.")]
    assert not {said, limited, left, again} & set(english) and "already called" not in taken  # none as in English
    classes.teaching.finish(values)


def test_a_running_class_is_never_lost_to_a_second_start(page):
    classes = page.classroom
    teacher, out = started(page, "teacher-twice")
    assert out[classes.present_start].visible is False and out[classes.present_end].visible is True
    again = classes.teaching.begin({classes.address: "http://127.0.0.1:7860/", page.result: None, classes.teacher: teacher},
                          Visitor("teacher-twice"))
    assert classes.teacher not in again and "still running" in again[classes.said]
    assert classes.teaching_class({classes.teacher: teacher}) is not None
    ended = classes.teaching.finish({classes.teacher: teacher})
    assert ended[classes.present_start].visible is True and ended[classes.teacher] == {}
    for button, out in ((classes.present_end, ended), (classes.start, again)):  # (the teacher's own End: built for
        # the teacher's page, wired as present_end is: ClassPanel.ends)
        fn = next(f for f in page.demo.fns.values() if (button._id, "click") in map(tuple, f.targets))
        if fn.fn is None:  # the browser's part (the page's address) first, then the handler
            fn = next(f for f in page.demo.fns.values() if f.trigger_after == fn._id)
        assert set(out) <= set(fn.outputs), "every update the handler returns is an output of its event"


def test_only_a_students_own_translate_or_enter_sends_to_the_wall(page):
    """The send listens to Translate and Enter only (`.success` after them, on the server, off the queue), never to
    a pair switched, an example picked, a reload or a link; the server decides whether the page is a student's (by
    the token its browser keeps), and sends what the page shows for the box's text, once."""
    deps, panel = {d["id"]: d for d in page.demo.config["dependencies"]}, page.panel
    after = {d["trigger_after"]: d for d in deps.values() if d.get("trigger_after") is not None}
    own = [i for i, d in deps.items() if set(map(tuple, d["targets"])) == {(panel.go._id, "click"),
                                                                          (panel.text._id, "submit")}]
    assert len(own) == 1
    step = after[own[0]]  # on the server: the page's own translation, then the send
    assert step["trigger_only_on_success"] and step["backend_fn"] and step["queue"] is False
    assert step["outputs"] == [page.classroom.said._id] and page.classroom.member._id in step["inputs"]
    sends = [d for d in deps.values() if step["inputs"] == d["inputs"] and d["outputs"] == step["outputs"]]
    assert sends == [step]  # a pair switched, an example picked, a wall's sentence opened: no send follows
    assert "send" not in page.classroom.question.js_on_load  # the browser decides nothing

    classes = page.classroom
    teacher, _ = started(page, "teacher-send")
    member = classes.studying.enrol(teacher["code"], {}, Visitor("sender"))[classes.member]
    result = context.run(page.ctx.translator("en-de"), "en-de", "I have a cat.", DecodeOptions(),
                         page.ctx.caches.translations, page.ctx.batcher)
    values = {classes.member: member, page.result: result, panel.pair: "en-de", panel.text: "I have a cat.",
              panel.translation: result.translation.text, panel.notice: ""}
    classes.studying.send_translated(values | {panel.text: "Another sentence."}, Visitor("sender"))  # not what is shown
    classes.studying.send_translated(values | {panel.pair: "en-fr"}, Visitor("sender"))
    classes.studying.send_translated(values, Visitor("sender"))
    classes.studying.send_translated(values, Visitor("sender"))  # Translate again on the same sentence
    classes.studying.send_translated(values | {classes.member: {}} | {panel.text: "Not a student's."}, Visitor("x"))
    class_id = classes.teaching_class({classes.teacher: teacher})
    assert [s["text"] for s in classes.store.state(class_id).wall] == ["I have a cat."]
    classes.teaching.finish({classes.teacher: teacher})


def test_a_phone_votes_on_the_question_it_shows_even_where_the_server_never_saw_it(page):
    """The tap says the poll it was on: a phone moved to another replica (no memory of it there) still votes, once,
    and a tap on a question the teacher has since replaced is refused in place."""
    classes = page.classroom
    teacher, _ = started(page, "teacher-vote")
    member = classes.studying.enrol(teacher["code"], {}, Visitor("voter"))[classes.member]
    class_id = classes.teaching_class({classes.teacher: teacher})
    first = classes.store.ask(class_id, "Which?", ["a", "b"], 0, "")
    classes.studying.cast({classes.member: member}, Visitor("voter-elsewhere"), gr.EventData(None, {"choice": "1",
                                                                                        "poll": str(first)}))
    classes.studying.cast({classes.member: member}, Visitor("voter"), gr.EventData(None, {"choice": "0", "poll": str(first)}))
    assert classes.store.state(class_id).poll.counts == [1, 0]  # changed, still one vote
    classes.store.ask(class_id, "Another?", ["c", "d"], 1, "")
    with pytest.raises(gr.Error, match="closed"):
        classes.studying.cast({classes.member: member}, Visitor("voter"), gr.EventData(None, {"choice": "1",
                                                                                   "poll": str(first)}))
    for bad in ({"choice": "x", "poll": str(first)}, {"choice": "9", "poll": "nope"}, {}):
        with pytest.raises(gr.Error, match="not one of the choices|closed"):
            classes.studying.cast({classes.member: member}, Visitor("voter"), gr.EventData(None, bad))
    classes.teaching.finish({classes.teacher: teacher})


def test_a_teacher_moved_to_another_replica_asks_about_the_sentence_the_class_was_shown(page):
    """The replica that held the teacher's translation stopped: the one left has none for this page, and asks about
    the sentence the class was last shown (kept in the store), translated again."""
    classes = page.classroom
    teacher, _ = started(page, "teacher-moved")
    class_id = classes.teaching_class({classes.teacher: teacher})
    with pytest.raises(gr.Error, match="Translate a sentence first"):  # nothing shown yet: nothing to ask about
        classes.questions.ask_lesson({classes.teacher: teacher, page.result: None})
    classes.store.show(class_id, "en-de", "I see a dog.", "Ich sehe einen Hund.", 1, "Pieces", "")
    classes.questions.ask_lesson({classes.teacher: teacher, page.result: None})
    classes.questions.ask_steps({classes.teacher: teacher, page.result: None, page.views["steps"].index: 2})
    ended = classes.store.end(class_id)
    assert [(p.text, p.step) for p in ended.polls] == [("I see a dog.", 1), ("I see a dog.", None)]


def test_a_teachers_page_opened_anew_comes_back_to_the_place_the_class_kept(page):
    """The teacher's place (the sentence, presentation mode, the open view, the Lesson's step) is kept in the
    teacher's browser state as the teacher's page polls its class (sent again only when it moved); a page opened
    anew (the app restarted: a session the server never saw) with that browser state comes back to it while the
    class runs. A link that says where to go wins; a student's page, a page outside a class and a class ended open
    as they did."""
    classes, panel = page.classroom, page.panel
    teacher, _ = started(page, "teacher-place")
    visitor = Visitor("teacher-place")
    visitor.query_params = {}
    fresh = {c: c.value for c in panel.controls + [panel.present, panel.which, panel.translation]} | {
        page.result: None, classes.teacher: {}, classes.member: {}}
    values = fresh | {panel.text: "My sister likes pizza.", panel.present: True, classes.teacher: teacher}
    values |= page.show_translation(values, visitor)
    session = page.sessions.of(visitor)
    session.tab, session.lesson_step = "lesson", 3  # the teacher opened the Lesson, and went on to step 3
    kept = classes.teaching.tick_teacher(values, visitor)[classes.teacher]
    assert "lesson=3" in kept["place"] and kept["secret"] == teacher["secret"]
    assert classes.teacher not in classes.teaching.tick_teacher(values | {classes.teacher: kept}, visitor)

    def opened(name: str, state: dict, **query):
        request = Visitor(name)
        request.query_params = query
        return page.load(fresh | state, request), page.sessions.of(request)

    out, again = opened("teacher-place-after-restart", {classes.teacher: kept})
    assert out[panel.text] == "My sister likes pizza." and out[panel.present] is True
    assert out[page.result].text == "My sister likes pizza." and again.tab == "lesson" and again.lesson_step == 3
    assert out[page.tabs.top].selected == "lesson"
    out, linked = opened("teacher-place-linked", {classes.teacher: kept}, view="attention")
    assert panel.text not in out and linked.tab == registry.tab_of("attention")  # the link's own place
    for name, state in (("student-place", {classes.member: {"code": teacher["code"], "token": "x"}}),
                        ("nobody-place", {})):
        out, other = opened(name, state)
        assert panel.text not in out and out[panel.present] is False and other.tab == registry.FIRST
    classes.teaching.finish({classes.teacher: teacher})
    out, ended = opened("teacher-place-ended", {classes.teacher: kept})
    assert panel.text not in out and out[panel.present] is False and ended.tab == registry.FIRST


@pytest.mark.slow
def test_postgresql_restarted_mid_lesson_the_page_waits_and_a_teacher_and_three_phones_lose_nothing(
        translators, postgres_url):
    """The class's page on PostgreSQL, a teacher and three phones (their handlers as the page calls them): the
    database restarts while the phones send and vote; their requests wait for it, and the projector then shows
    every sentence and vote."""
    if not hasattr(postgres_url, "restart"):
        pytest.skip("TEST_DATABASE_URL names a server this test cannot restart")
    import app

    page = app.build_page(translators, store=Store(postgres_url))
    classes, panel = page.classroom, page.panel
    teacher, _ = started(page, "pg-teacher")
    phones = [classes.studying.enrol(teacher["code"], {}, Visitor(f"pg-phone-{i}"))[classes.member] for i in range(3)]
    class_id = classes.teaching_class({classes.teacher: teacher})
    poll = classes.store.ask(class_id, "Which?", ["a", "b"], 1, "", pair="en-de", text="Hi.", step=1)
    results = {i: context.run(page.ctx.translator("en-de"), "en-de", f"I have {i + 2} cats.", DecodeOptions(),
                              page.ctx.caches.translations) for i in range(3)}

    def phone(i: int) -> None:
        values = {classes.member: phones[i], page.result: results[i], panel.pair: "en-de",
                  panel.text: f"I have {i + 2} cats.", panel.translation: results[i].translation.text,
                  panel.notice: ""}
        classes.studying.send_translated(values, Visitor(f"pg-phone-{i}"))
        classes.studying.cast({classes.member: phones[i]}, Visitor(f"pg-phone-{i}"),
                     gr.EventData(None, {"choice": "1", "poll": str(poll)}))

    restarting = threading.Thread(target=postgres_url.restart, args=(3.0,))
    restarting.start()
    time.sleep(0.5)
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        list(pool.map(phone, range(3)))
    restarting.join()
    shown = classes.teaching.tick_teacher({classes.teacher: teacher, panel.translation: "", page.result: None},
                                 Visitor("pg-teacher"))
    assert all(f"I have {i + 2} cats." in shown[classes.wall] for i in range(3))
    assert "3 students joined" in shown[classes.off_page[0].card]
    lesson = page.views["lesson"]  # the teacher's Lesson: the votes beside its question
    assert "3 votes" in classes.questions.votes_beside([lesson])({classes.teacher: teacher}, Visitor("pg-teacher"))[lesson.poll]
    classes.teaching.finish({classes.teacher: teacher})


def test_a_phone_is_told_the_answer_without_what_points_at_the_projectors_figure():
    from playground.classroom.questions import phone_words

    said = phone_words("**“dog”**, with weight 0.41 of 1 (the orange square, row “the”). Next. The orange path in "
                       "the tree is the one it kept.")
    assert said == "**“dog”**, with weight 0.41 of 1. Next." and "orange" not in said
    assert phone_words("**No**: greedy writes “Hallo.”; beam search “Hi.”.") == "**No**: greedy writes “Hallo.”; beam search “Hi.”."


def test_a_model_the_teacher_brings_joins_the_class_menu_until_the_class_ends(page, tmp_path, tokenizer):
    import zipfile

    import torch
    from conftest import tiny_config
    from transformer import Transformer, save_checkpoint

    torch.manual_seed(0)
    save_checkpoint(tmp_path / "m", Transformer(tiny_config(vocab_size=len(tokenizer))), tokenizer)
    with zipfile.ZipFile(tmp_path / "ours.zip", "w") as z:
        for f in (tmp_path / "m").iterdir():
            z.write(f, f.name)
    classes, panel, card = page.classroom, page.panel, page.views["card"]
    teacher, _ = started(page, "teacher-brings")
    member = classes.studying.enrol(teacher["code"], {}, Visitor("phone-menu"))[classes.member]
    first = classes.studying.tick_student({classes.member: member, panel.pair: "en-de"}, Visitor("phone-menu"))
    assert [k for _, k in first[panel.pair]["choices"]] == page.ctx.pairs  # no model shared yet
    values = {panel.pair: "en-de", panel.text: "A dog runs.", panel.n_samples: 3, page.result: None,
              card.bring: str(tmp_path / "ours.zip")} | {c: c.value for c in panel.decoding}
    brought = page.bring_model(values, Visitor("teacher-brings"))
    key = brought[panel.pair]["value"]
    said = classes.teaching.share_brought({classes.teacher: teacher, panel.pair: key}, Visitor("teacher-brings"))
    assert "class's language menu" in said[classes.said]
    menu = classes.studying.tick_student({classes.member: member, panel.pair: "en-de"}, Visitor("phone-menu"))[panel.pair]
    assert ("Your model: ours (the teacher's)", key) in menu["choices"] and menu["value"] == "en-de"
    assert classes.teaching.share_brought({classes.teacher: {}, panel.pair: key}, Visitor("someone")) == {}  # no teacher
    other, _ = started(page, "teacher-other")  # another class's teacher cannot share a model that is not theirs
    assert classes.teaching.share_brought({classes.teacher: other, panel.pair: key}, Visitor("teacher-other")) == {}
    classes.teaching.forget(Visitor("teacher-brings"))  # the teacher's page closed: the phones' menu loses it
    page.forget_models(Visitor("teacher-brings"))
    menu = classes.studying.tick_student({classes.member: member, panel.pair: key}, Visitor("phone-menu"))[panel.pair]
    assert key not in [k for _, k in menu["choices"]] and menu["value"] == page.ctx.pairs[0]
    for who in (teacher, other):
        classes.teaching.finish({classes.teacher: who})


@pytest.mark.slow
def test_ten_joins_posted_without_opening_the_page_are_marked_and_go_out_in_one_click(server):
    """Ten joins by plain HTTP from one address (the join event posted with the code, the page's HTML never asked
    for): each is listed with the mark of a join without the page's pass; a student who opened the link is not
    marked; the teacher's one action takes out every marked one and leaves the student."""
    from classroom import Student, block, find, start_class, tick, value_of

    teacher = Student(server, 60)
    teacher.open_page()
    code = start_class(teacher, server)
    for _ in range(10):
        script = Student(server, 60)  # the page's config, as a script reads it: no HTML, so no pass
        typed = block(script.config, elem_id="class-code")["id"]
        join = block(script.config, elem_id="class-join")["id"]
        script.event(find(script.config, "click", elem_id="class-join"), join, changes={typed: code})
        assert "You are in class" in str(value_of(script, "class-said"))
    student = Student(server, 60)
    student.query = {"class": code}
    student.open_page()  # the link opened: the HTML (its pass) and the page's load, which joins
    assert "pass" in " ".join(student.http.cookies.keys()) and "You are in class" in str(value_of(student, "class-said"))
    teacher.at_once(tick(teacher, "class-roster"))
    roster = str(value_of(teacher, "class-roster"))
    assert roster.count('class="roster-passless"') == 10 and "11 students joined" in roster
    listed = block(teacher.seen, elem_id="class-roster")["id"]
    act = next(d for d in teacher.seen["dependencies"] if [listed, "act"] in d["targets"])
    teacher.event(act, listed, event_data={"act": "remove-marked", "id": ""})
    assert "10 students taken out" in str(value_of(teacher, "class-said"))
    teacher.at_once(tick(teacher, "class-roster"))
    roster = str(value_of(teacher, "class-roster"))
    assert "1 student joined" in roster and "roster-passless" not in roster
