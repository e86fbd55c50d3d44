"""Several replicas behind HAProxy (deploy/serve.py): each session stays on one replica, a class spreads over all
of them, and a replica that stops mid-class leaves the others' sessions untouched. Real processes on loopback:
two replicas of the app on the shipped checkpoints, Debian's haproxy, and students speaking the page's protocol
with their cookies kept (tools/classroom.py's Student, as a browser keeps them)."""
from __future__ import annotations

import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from classroom import SENTENCES, Student, find, free_port, start_class, tick, together, value_of, vote  # noqa: E402

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("haproxy") is None and not Path("/usr/sbin/haproxy").exists(),
                                 reason="needs Debian's haproxy (.ci/run installs it)")]


class Balanced:
    """`python deploy/serve.py --replicas 2` on a free port: its URL and each replica's pid by name."""

    def __init__(self, replicas: int = 2, database: str = ""):
        self.port = free_port()
        flags = ["--", "--database-url", database] if database else []  # every replica's class store
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "deploy" / "serve.py"), "--replicas", str(replicas), "--port", str(self.port),
             *flags],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
            env={**os.environ, "GRADIO_ANALYTICS_ENABLED": "False"})
        self.pids: dict[str, int] = {}
        said, serving, deadline = [], False, time.monotonic() + 400
        for line in self.process.stdout:  # "replica r1 pid 123 port 8081", then "serving http://..." once it answers
            said.append(line)  # a replica's own output shares the pipe: its unfinished line may come first
            if m := re.search(r"replica (\w+) pid (\d+) port", line):
                self.pids[m.group(1)] = int(m.group(2))
            serving = line.startswith("serving")
            if serving or time.monotonic() > deadline:
                break
        assert len(self.pids) == replicas and serving, "".join(said[-20:])
        self.said = collections.deque(said, maxlen=400)  # what the balancer and the replicas print (their logs)
        threading.Thread(target=lambda: self.said.extend(self.process.stdout), daemon=True).start()  # the pipe drained
        self.url = f"http://127.0.0.1:{self.port}/"

    def log(self) -> str:
        """The servers' last lines: a handler's traceback, when one failed."""
        return "".join(self.said)

    def stop(self) -> None:
        os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait(timeout=60)


@pytest.fixture
def balanced(tmp_path):
    b = Balanced(database=f"sqlite:///{tmp_path / 'classes.sqlite3'}")  # the replicas share one SQLite file
    yield b
    b.stop()


def test_twenty_students_each_stay_on_one_replica_and_the_class_uses_both(balanced):
    students = [Student(balanced.url, timeout=120) for _ in range(20)]

    def lesson(student: Student, i: int):
        student.open_page()
        student.translate(SENTENCES[i % len(SENTENCES)])
        return student.open_tab("Heatmaps")

    done, errors = together(students, lesson)
    assert errors == [] and len(done) == 20, (errors, balanced.log())
    assert all(len(s.replicas) == 1 for s in students), [s.replicas for s in students]  # no session split
    on = [next(iter(s.replicas)) for s in students]
    assert set(on) == {"r1", "r2"} and min(on.count("r1"), on.count("r2")) >= 5  # spread by the cookie, not piled


def test_a_replica_stopped_mid_class_leaves_the_other_sessions_going(balanced):
    students = [Student(balanced.url, timeout=120) for _ in range(10)]
    _, errors = together(students, lambda s, i: s.open_page())
    assert errors == [], (errors, balanced.log())
    os.kill(balanced.pids["r1"], signal.SIGKILL)  # the replica is gone, as after a crash
    on_r2 = [s for s in students if s.replicas == {"r2"}]
    on_r1 = [s for s in students if s.replicas == {"r1"}]
    assert on_r1 and on_r2

    done, errors = together(on_r2, lambda s, i: s.translate(SENTENCES[i]))
    assert errors == [], (errors, balanced.log())
    assert all(s.replicas == {"r2"} for s in on_r2)  # the other replica's sessions go on
    # Those whose replica stopped: their next click reaches the one left (the balancer moves them); a hang would end
    # in the students' own time-out (120 s) and count as an error, so no timing is asserted here
    done, errors = together(on_r1, lambda s, i: s.translate(SENTENCES[i]))
    assert errors == [], (errors, balanced.log())
    assert all(s.replicas == {"r1", "r2"} for s in on_r1)
    newcomer = Student(balanced.url, timeout=120)  # a new session opens on the replica left
    newcomer.open_page()
    newcomer.translate("Good morning!")
    assert newcomer.replicas == {"r2"}


def polled(page: Student, tick: dict) -> None:
    """A page's poll of its class, as the page polls: one that finds its replica gone as it was killed (the balancer
    has not noticed yet, and closes the connection or answers 502) is followed by the next, 2 s later. Only the
    poll is asked again, never a sentence or a vote: those must go through the first time."""
    try:
        page.at_once(tick)
    except (httpx.TransportError, httpx.HTTPStatusError) as e:
        if isinstance(e, httpx.HTTPStatusError) and e.response.status_code not in (502, 503):
            raise
        time.sleep(2)
        page.at_once(tick)


def test_a_replica_stopped_mid_class_loses_no_sentence_vote_or_class(balanced):
    """The class lives in the store the replicas share: a teacher and ten students, a replica killed after they
    sent and voted, then everyone sends and votes again through the replica left."""
    teacher = Student(balanced.url, timeout=120)
    teacher.open_page()
    code = start_class(teacher, balanced.url)
    students = [Student(balanced.url, timeout=120) for _ in range(10)]
    for s in students:
        s.query = {"class": code}
    teacher.open_tab("Lesson")  # built for the teacher, with the question to ask
    student_tick = tick(teacher, "class-following")  # the page's own poll: every replica knows it

    def join_and_send(s: Student, i: int):
        s.open_page()
        return s.translate(f"{SENTENCES[i % len(SENTENCES)]} ({i})")

    _, errors = together(students, join_and_send)
    assert errors == [], (errors, balanced.log())
    teacher.event(find(teacher.seen, "click", elem_id="lesson-ask"), None)
    for s in students:
        s.at_once(student_tick)  # the phone's poll brings the question
    _, errors = together(students, lambda s, i: vote(s, 0))
    assert errors == [], (errors, balanced.log())

    os.kill(balanced.pids["r1"], signal.SIGKILL)  # mid-class, as after a crash
    assert any(s.replicas == {"r1"} for s in students + [teacher])
    for s in students:
        polled(s, student_tick)  # a moved phone finds its class again from its browser's state
    _, errors = together(students, lambda s, i: vote(s, 1))  # everyone changes their mind, through r2
    assert errors == [], (errors, balanced.log())
    _, errors = together(students, lambda s, i: s.translate(f"After the crash ({i})."))
    assert errors == [], (errors, balanced.log())

    if "r1" in teacher.replicas:  # the parts built for the teacher's page were r1's: the teacher reloads, and the
        teacher.reload()  # class comes back (the phones, whose polls are the page's own, never need to)
        teacher.open_tab("Lesson")
    polled(teacher, tick(teacher, "class-card"))
    polled(teacher, tick(teacher, "lesson-poll"))
    poll, wall = value_of(teacher, "lesson-poll"), value_of(teacher, "class-wall")
    assert "10 votes" in poll and [int(n) for n in re.findall(r'class="poll-n">(\d+)', poll)][:2] == [0, 10]
    assert all(f"({i})" in wall for i in range(10)) and all(f"After the crash ({i})." in wall for i in range(10))
