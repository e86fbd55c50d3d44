"""A class at once: N simulated students use the real app over Gradio's HTTP queue, as the page itself does.

    python tools/classroom.py --students 30 [--tabs Attention bertviz] [--port 7861] [--json out.json]
    python tools/classroom.py --students 30 60 100 --setups 1 2     one process against two replicas, alternating
    python tools/classroom.py --students 30 --url http://127.0.0.1:8080/        a server already running
    python tools/classroom.py --students 30 --no-training --profile      where the server's CPU goes (py-spy)

Starts `python app.py` on this machine (setup 1, the default), or N replicas of it behind HAProxy (setup N,
deploy/serve.py, one thread each), then every student (a session of its own, its cookies kept as a browser keeps
them) does what a class does:
  1. opens the link: the page's HTML (with its config inside) and the page's load event;
  2. translates a sentence of its own (Translate, with the page's own inputs, and what the page runs after it);
  3. opens two other tabs (their select events, when the page has them).
All students start each step together. Prints p50 / p95 / max seconds and the mean kB the server sent per step
(behind the balancer: how many sessions each replica served, and how many were split across replicas)
(the HTML and the event's stream; not the page's scripts and styles, which a browser caches), and the
translation latency while one toy training runs ("Train a tiny one"), against the same translations idle.
Traffic goes to 127.0.0.1 only; every loop is bounded in count and time.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from playground import registry  # noqa: E402  (the views' tabs: which group holds one)
SENTENCES = [  # one of its own per student: the examples' kind of scene, none of them an example
    "A boy in a green shirt kicks a ball across the field.", "Two women are talking on a bench in the park.",
    "A dog jumps over a log in the snow.", "An old man is reading a newspaper at a cafe.",
    "Three children are building a sandcastle on the beach.", "A woman in a red dress walks down the street.",
    "A cyclist rides past a row of parked cars.", "A group of people watch a street performer.",
    "A girl with a pink umbrella waits for the bus.", "A man is cooking food on a grill outside.",
    "Two dogs play with a stick in the water.", "A young woman plays the guitar on a stage.",
    "A construction worker climbs a tall ladder.", "A little girl feeds ducks at the pond.",
    "A man in a black jacket sits on the stairs.", "Children are running through a sprinkler.",
    "A woman carries a basket of fruit on her head.", "Four men are playing cards at a table.",
    "A skier goes down a steep mountain slope.", "A boy is climbing a tree in the garden.",
    "A chef prepares a meal in a busy kitchen.", "Two girls are laughing in front of a shop.",
    "A man rides a horse along the beach.", "A baby sleeps in a blue stroller.",
    "A woman is painting a picture of the sea.", "Several people are waiting at a train station.",
    "A brown dog runs with a toy in its mouth.", "A man sells vegetables at a market.",
    "Two boys are playing basketball in the street.", "A woman takes a photo of a bridge.",
]


# -----------------------------------------------------------------------------
# One student: a session on the queue, speaking the page's protocol


class Student:
    """A browser session: posts events to queue/join and reads their messages from one queue/data stream."""

    def __init__(self, url: str, timeout: float):
        self.url, self.timeout = url, timeout
        self.replicas: set[str] = set()  # who served this session (X-Replica, set by the balancer)
        self.http = httpx.Client(timeout=timeout, event_hooks={"response": [self._served_by]})
        # The page's config, from the server that will serve the session (a browser finds it in the HTML)
        self.config = config = self.http.get(url + "config").raise_for_status().json()
        self.api = url + config.get("api_prefix", "/gradio_api").strip("/") + "/"
        self.session = uuid.uuid4().hex[:11]
        self.values = {c["id"]: c.get("props", {}).get("value") for c in config["components"]}
        self.broken = ""  # why the event stream broke while an event waited (the server went away)
        self.messages: dict[str, list] = {}  # event id -> [(message, bytes)]
        self.waiting: set[str] = set()  # events joined and not yet completed
        self.arrived = threading.Condition()
        self.reading = False
        self.query: dict = {}  # the page's own query (?class=CODE): the browser sends it with its events
        self.retried = 0  # polls sent again after a connection closed under them (at_once)
        self.parts: list[dict] = []  # parts built for this session (a tab's gr.render), and their events
        self.rendered: list[dict] = []

    @property
    def seen(self) -> dict:
        """The page as this session has it: the parts built for it (the newest first: parts built again replace
        those before them) and the page's config."""
        return {"components": self.parts[::-1] + self.config["components"],
                "dependencies": self.rendered[::-1] + self.config["dependencies"]}

    def reload(self) -> None:
        """The page opened again in this browser (a new session on the server), what the browser keeps kept: its
        cookies and its BrowserStates (a class's teacher or student)."""
        kept = {c["id"] for c in self.config["components"] if c.get("type") == "browserstate"}
        self.values = {c["id"]: self.values.get(c["id"]) if c["id"] in kept else c.get("props", {}).get("value")
                       for c in self.config["components"]}
        self.session, self.parts, self.rendered = uuid.uuid4().hex[:11], [], []
        self.open_page()

    def _served_by(self, response: httpx.Response) -> None:
        if "x-replica" in response.headers:
            self.replicas.add(response.headers["x-replica"])

    def _read(self) -> None:
        """The page's stream of messages, routed to events by id, bytes counted per message. The server closes it
        when nothing is pending; it is opened again while an event still waits."""
        while True:
            try:
                with self.http.stream("GET", self.api + "queue/data", params={"session_hash": self.session},
                                      timeout=httpx.Timeout(self.timeout, read=None)) as response:
                    buffer = b""
                    for chunk in response.iter_bytes():
                        buffer += chunk
                        while b"\n\n" in buffer:
                            line, buffer = buffer.split(b"\n\n", 1)
                            message = json.loads(line[5:]) if line.startswith(b"data:") else {}
                            if message.get("msg") in (None, "heartbeat", "close_stream"):
                                continue
                            with self.arrived:
                                self.messages.setdefault(message.get("event_id"), []).append((message, len(line) + 2))
                                self.arrived.notify_all()
            except httpx.HTTPError as e:  # the server went away: a waiting event fails now, not at its time-out
                with self.arrived:
                    self.reading = False
                    self.broken = f"the event stream broke ({type(e).__name__})" if self.waiting else ""
                    self.arrived.notify_all()
                return
            with self.arrived:
                if not self.waiting:
                    self.reading = False
                    return

    def event(self, dependency: dict, trigger: int | None, changes: dict | None = None,
              event_data: dict | None = None) -> tuple[float, int]:
        """Run one of the page's events with the page's current values (and what the browser says of the event:
        a custom event's data); returns (seconds, bytes received)."""
        self.values |= changes or {}
        payload = {"data": [self.values.get(i) for i in dependency["inputs"]], "event_data": event_data,
                   "fn_index": dependency["id"], "trigger_id": trigger, "session_hash": self.session}
        t0 = time.perf_counter()
        joined = self.http.post(self.api + "queue/join", json=payload, params=self.query)
        joined.raise_for_status()
        event_id = joined.json()["event_id"]
        deadline = time.monotonic() + self.timeout
        with self.arrived:
            self.waiting.add(event_id)
            self.broken = ""
            if not self.reading:
                self.reading = True
                threading.Thread(target=self._read, daemon=True).start()
            while not any(m.get("msg") == "process_completed" for m, _ in self.messages.get(event_id, [])):
                if self.broken:
                    self.waiting.discard(event_id)
                    raise ConnectionError(f"event {dependency['id']}: {self.broken}")
                if not self.arrived.wait(timeout=max(0.0, deadline - time.monotonic())):
                    raise TimeoutError(f"event {dependency['id']} took over {self.timeout} s")
            self.waiting.discard(event_id)
            got = self.messages.pop(event_id)
        done = got[-1][0]
        if not done.get("success", False):
            raise RuntimeError(f"event {dependency['id']} failed: {str(done.get('output'))[:300]}")
        woken = self.apply(dependency, done["output"].get("data", []))
        received = len(joined.content) + sum(n for _, n in got) + self.follow(dependency)
        received += self.built(done["output"].get("render_config"))
        received += self.changed((done["output"].get("changed_state_ids") or []) + woken)
        return time.perf_counter() - t0, received

    def built(self, rendered: dict | None) -> int:
        """Parts built for this session by a render (a tab opened the first time): their values and events kept,
        and their load events run, as a browser runs them once the parts are in; returns the bytes they brought."""
        if not rendered:
            return 0
        self.values |= {c["id"]: c.get("props", {}).get("value") for c in rendered["components"]}
        self.parts += rendered["components"]
        self.rendered += rendered["dependencies"]
        return sum(self.event(after, None)[1] for after in rendered["dependencies"]
                   if any(name == "load" for _, name in after["targets"]) and after.get("backend_fn", True))

    def changed(self, states: list[int]) -> int:
        """The events a browser runs when an event changed a state or a hidden number that has change listeners (a
        tab told to be built or to draw itself); returns the bytes they brought. (A browser runs those of every
        component whose value an event changed; the visible ones' are left out here, as before.)"""
        return sum(self.event(after, state)[1] for state in states
                   for after in self.config["dependencies"] + self.rendered
                   if [state, "change"] in after["targets"] and after.get("backend_fn", True))

    def apply(self, dependency: dict, data: list) -> list[int]:
        """The event's answer applied to the page's values; returns the hidden numbers whose value it changed."""
        woken = []
        for component, value in zip(dependency["outputs"], data):
            if isinstance(value, dict) and value.get("__type__") == "update":
                if "value" not in value:
                    continue
                value = value["value"]
            if component in self.hidden_numbers and value != self.values.get(component):
                woken.append(component)
            self.values[component] = value
        return woken

    @functools.cached_property
    def hidden_numbers(self) -> set[int]:
        return {c["id"] for c in self.config["components"]
                if c.get("type") == "number" and c.get("props", {}).get("visible") is False}

    def follow(self, dependency: dict) -> int:
        """The events a browser runs after this one (`.then`), each on the queue or off it as the page says;
        returns the bytes they brought."""
        received = 0
        for after in self.config["dependencies"]:
            if after.get("trigger_after") != dependency["id"] or not after.get("backend_fn", True):
                continue
            if after.get("queue", True):
                received += self.event(after, None)[1]
                continue
            payload = {"data": [self.values.get(i) for i in after["inputs"]], "event_data": None,
                       "fn_index": after["id"], "trigger_id": None, "session_hash": self.session}
            answer = self.http.post(self.api + "run/predict", json=payload)
            answer.raise_for_status()
            self.apply(after, answer.json().get("data", []))
            received += len(answer.content) + self.follow(after)
        return received

    def translate(self, sentence: str) -> tuple[float, int]:
        """Type a sentence and click Translate, and what follows it (`follow`): on a student's page, the send that
        puts the sentence on the wall."""
        click = find(self.config, "click", elem_id="translate-button")
        text = block(self.config, elem_id="source-text")["id"]
        return self.event(click, click["targets"][0][0], {text: sentence})

    def open_tab(self, label: str) -> tuple[float, int]:
        """Select a tab, as a click on it does (nothing to run where the page draws it without an event). A view's
        tab in a group built for each visitor comes in with its group: the group's tab is opened first, as a user
        does."""
        group = registry.GROUP_LABELS.get(next((e.group for e in registry.VIEWS if e.label == label), None))
        if block(self.seen, label=label) is None and group is not None:
            took, received = self.open_tab(group)
            (dependency, tab), = tab_events(self.seen, [label])
            more = self.event(dependency, tab) if dependency else (0.0, 0)
            return took + more[0], received + more[1]
        (dependency, tab), = tab_events(self.seen, [label])
        return self.event(dependency, tab) if dependency else (0.0, 0)

    def open_page(self) -> tuple[float, int]:
        """What a browser fetches from this server to show the page, less its cached scripts and styles: the HTML
        (it carries the page's config) and the page's load event."""
        t0 = time.perf_counter()
        sent = len(self.http.get(self.url).content)
        _, streamed = self.event(find(self.config, event="load"), None)
        return time.perf_counter() - t0, sent + streamed


    def at_once(self, dependency: dict) -> dict:
        """An event off the queue (a class page's poll of its class), as the browser posts it; returns its data."""
        payload = {"data": [self.values.get(i) for i in dependency["inputs"]], "event_data": None,
                   "fn_index": dependency["id"], "trigger_id": None, "session_hash": self.session}
        try:
            answer = self.http.post(self.api + "run/predict", json=payload, params=self.query)
        except httpx.RemoteProtocolError:
            # a kept-alive connection closed by the other end as the poll went out, before any answer: a browser
            # sends such a request again by itself on a new connection, and a poll is safe to repeat (a sentence
            # or a vote never is: they go through `event`, which does not retry)
            self.retried += 1
            answer = self.http.post(self.api + "run/predict", json=payload, params=self.query)
        answer.raise_for_status()
        data = answer.json().get("data", [])
        self.apply(dependency, data)
        return dict(zip(dependency["outputs"], data))


# -----------------------------------------------------------------------------
# The page's events, found in its config as the browser finds them


def written(value):
    """A prop as the page's English writes it: a label the browser translates (gr.I18n's "__i18n__{...}") by its key."""
    if isinstance(value, str) and value.startswith("__i18n__"):
        return json.loads(value[len("__i18n__"):]).get("key")
    return value


def block(config: dict, **props) -> dict | None:
    return next((c for c in config["components"]
                 if all(written(c.get("props", {}).get(k)) == v for k, v in props.items())), None)


def find(config: dict, event: str, **props) -> dict | None:
    """The dependency that `event` on the component with these props triggers (event 'load': the page's)."""
    target = block(config, **props)["id"] if props else None
    for dependency in config["dependencies"]:
        for block_id, name in dependency["targets"]:
            if name == event and (target is None or block_id == target) and dependency.get("backend_fn", True):
                return dependency
    return None


def tab_events(config: dict, labels: list[str]) -> list[tuple[dict | None, int]]:
    """(dependency, tab id) of each tab's select event; None where the page draws the tab without one."""
    out = []
    for label in labels:
        tab = block(config, label=label)
        if tab is None:
            raise SystemExit(f"no tab labelled {label!r} on this page")
        out.append((find(config, "select", label=label), tab["id"]))
    return out


# -----------------------------------------------------------------------------
# The class


def summary(samples: list[tuple[float, int]]) -> dict:
    seconds = sorted(s for s, _ in samples)
    pick = lambda q: seconds[min(len(seconds) - 1, round(q * (len(seconds) - 1)))]
    return {"p50_s": statistics.median(seconds), "p95_s": pick(0.95), "max_s": seconds[-1],
            "kB": statistics.mean(b for _, b in samples) / 1000, "n": len(samples)}


def together(students: list[Student], step) -> tuple[list[tuple[float, int]], list[str]]:
    """Every student runs step(student, i) at the same moment; (seconds, bytes) of those that succeeded, errors."""
    results, errors, start = [], [], threading.Barrier(len(students))
    lock = threading.Lock()

    def one(i: int, student: Student) -> None:
        start.wait()
        try:
            r = step(student, i)
            with lock:
                results.append(r)
        except (Exception, SystemExit) as e:  # counted and printed, never hidden (a thread's SystemExit was)
            with lock:
                errors.append(f"student {i}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=one, args=(i, s)) for i, s in enumerate(students)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, errors


def classroom(url: str, n: int, tabs: list[str], timeout: float, training: bool = True,
              profile: int | None = None) -> dict:
    """profile: the server's process id, profiled while the class opens the page and while it translates
    (`profiled`)."""
    students = [Student(url, timeout) for _ in range(n)]
    report, errors = {}, []
    steps = {"open the link": lambda s, i: s.open_page(),
             "translate their own sentence": lambda s, i: s.translate(SENTENCES[i % len(SENTENCES)])}
    for label in tabs:
        steps[f"open the {label} tab"] = lambda s, i, label=label: s.open_tab(label)
    for name, step in steps.items():
        if profile and name in ("open the link", "translate their own sentence"):
            (samples, failed), report[f"profile: {name}"] = profiled(profile, lambda: together(students, step))
        else:
            samples, failed = together(students, step)
        report[name] = summary(samples) if samples else None
        errors += [f"{name}: {e}" for e in failed]
    served = [s.replicas for s in students]
    if any(served):
        report["replicas"] = {"sessions": {r: sum(r in s for s in served) for r in sorted(set().union(*served))},
                              "split": sum(len(s) > 1 for s in served)}
    if training:
        report["training"] = beside_training(url, timeout)
    report["errors"] = errors
    return report


def tick(page: Student, elem_id: str) -> dict:
    """A page's poll of its class that draws the part `elem_id`: a timer's tick event (the teacher's, which draws
    the join card "class-card", and the teacher's Lesson's, "lesson-poll", come with the parts built for the
    teacher; the students', "class-following", is the page's own)."""
    seen = page.seen
    timers = {c["id"] for c in seen["components"] if c.get("type") == "timer"}
    drawn = block(seen, elem_id=elem_id)["id"]
    return next(d for d in seen["dependencies"]
                if drawn in d["outputs"] and any(t[0] in timers and t[1] == "tick" for t in d["targets"]))


def start_class(teacher: Student, url: str) -> str:
    """The teacher's click on "Start a class" (its address put in by the browser first); the class's code."""
    config = teacher.config
    start = block(config, elem_id="class-start")["id"]
    js = next(d for d in config["dependencies"] if [start, "click"] in d["targets"])
    begin = next(d for d in config["dependencies"] if d.get("trigger_after") == js["id"])
    address = next(i for i in begin["inputs"] if next(c for c in config["components"] if c["id"] == i)["type"]
                   == "textbox")
    teacher.values[address] = url  # what the browser puts there (links.ADDRESS_JS)
    teacher.event(begin, None)
    return value_of(teacher, "class-card").split("?class=")[1][:8]


def vote(student: Student, choice: int) -> tuple[float, int]:
    """A tap on one of the current question's choice buttons (the question's own "vote" event, which says the
    choice and the poll the phone shows)."""
    question = block(student.config, elem_id="class-question")["id"]
    dependency = next(d for d in student.config["dependencies"] if [question, "vote"] in d["targets"])
    poll = re.search(r'data-poll="(\d+)"', str(student.values.get(question) or ""))
    return student.event(dependency, question, event_data={"choice": str(choice), "poll": poll.group(1) if poll
                                                            else ""})


def value_of(student: Student, elem_id: str):
    return student.values.get(block(student.seen, elem_id=elem_id)["id"])


def class_mode(url: str, n: int, timeout: float, kill=None) -> dict:
    """A class together: a teacher starts a class and polls it (1 s, as the projector's page does); n students join
    by the link, each polls the class (2 s), translates a sentence of their own (sent to the wall) and votes on the
    teacher's question. Counts every sentence on the wall and every vote once, and how long a vote takes to reach
    the projector (from the vote's answer to the first poll of the teacher's page that shows it). `kill`: called
    halfway (after the sentences, before the question), e.g. to kill a replica."""
    teacher = Student(url, timeout)
    teacher.open_page()
    config = teacher.config
    code = start_class(teacher, url)
    teacher.open_tab("Lesson")  # built for the teacher, with the class's question to ask and its votes beside it
    student_tick = tick(teacher, "class-following")  # the page's own: the same on every replica
    shown, stop, moving = [], threading.Event(), threading.Lock()  # (time, votes shown) of every teacher poll

    def projector():
        while not stop.is_set():
            with moving:  # the parts built for the teacher's page: the newest (built again after a reload)
                teacher.at_once(tick(teacher, "class-card"))
                drawn = teacher.at_once(tick(teacher, "lesson-poll"))
                poll = drawn.get(block(teacher.seen, elem_id="lesson-poll")["id"])
            if isinstance(poll, str) and "vote" in poll:
                total = int(re.search(r"(\d+) votes?", poll).group(1))
                shown.append((time.monotonic(), total))
            stop.wait(1.0)

    students = [Student(url, timeout) for _ in range(n)]
    for s in students:
        s.query = {"class": code}
    report, errors, polling, polls, failed_polls = {}, [], threading.Event(), [], []

    def phone(s: Student):
        while not polling.is_set():
            try:
                polls.append(1)
                s.at_once(student_tick)
            except Exception as e:  # the phone polls again 2 s later
                failed_polls.append(f"{type(e).__name__}: {e}")
            polling.wait(2.0)

    watcher = threading.Thread(target=projector, daemon=True)
    watcher.start()
    samples, failed = together(students, lambda s, i: s.open_page())
    report["join by the link"], errors = summary(samples) if samples else None, errors + failed
    errors += [f"student {i}: not in the class: {value_of(s, 'class-said')}" for i, s in enumerate(students)
               if "You are in class" not in str(value_of(s, "class-said"))]  # a join refused is said in place
    phones = [threading.Thread(target=phone, args=(s,), daemon=True) for s in students]
    for t in phones:
        t.start()
    samples, failed = together(students, lambda s, i: s.translate(SENTENCES[i % len(SENTENCES)]))  # as a class
    report["translate and send"], errors = summary(samples) if samples else None, errors + failed
    if kill is not None:
        with moving:
            kill()
            time.sleep(4)  # the balancer takes the replica out after two failed checks, 1 s apart
            if "r1" in teacher.replicas:  # the parts built for the teacher's page were r1's: the teacher reloads
                teacher.reload()
                teacher.open_tab("Lesson")
    ask = find(teacher.seen, "click", elem_id="lesson-ask")
    teacher.event(ask, ask["targets"][0][0])
    question = block(config, elem_id="class-question")["id"]
    deadline = time.monotonic() + 30
    while any("poll-question" not in str(s.values.get(question)) for s in students) and time.monotonic() < deadline:
        time.sleep(0.2)  # every phone's poll has brought the question (a phone votes once it sees the choices)
    voted = []

    def cast(s: Student, i: int):
        result = vote(s, i % 2)
        voted.append(time.monotonic())
        return result

    samples, failed = together(students, cast)
    report["vote"], errors = summary(samples) if samples else None, errors + failed
    deadline = time.monotonic() + 30
    while (not shown or shown[-1][1] < len(voted)) and time.monotonic() < deadline:
        time.sleep(0.2)
    stop.set(), polling.set()
    lags = []
    for rank, at in enumerate(sorted(voted), start=1):
        seen = next((t for t, total in shown if t >= at and total >= rank), None)
        lags.append(seen - at if seen is not None else float("inf"))
    wall = value_of(teacher, "class-wall") or ""
    report["vote on the projector"] = summary([(lag, 0) for lag in lags]) if lags else None
    report["counted"] = {"votes shown": shown[-1][1] if shown else 0, "votes cast": len(voted),
                         "sentences on the wall": sum(int(k) for k in re.findall(r'wall-count">×(\d+)', wall))
                         + wall.count("<li>") - wall.count('wall-count">'), "students": n}
    served = [s.replicas for s in students]
    if any(served):
        report["replicas"] = {"sessions": {r: sum(r in s for s in served) for r in sorted(set().union(*served))},
                              "split": sum(len(s) > 1 for s in served)}
    report["polls"] = {"sent": len(polls), "failed": len(failed_polls), "sent again at once": sum(
        s.retried for s in students + [teacher]), "why failed": sorted(set(failed_polls))[:5]}
    report["errors"] = errors
    return report


def beside_training(url: str, timeout: float, sentences: int = 8) -> dict:
    """One user's translations idle, then the same ones while another user's toy training runs."""
    user, trainer = Student(url, timeout), Student(url, timeout)
    user.open_page()
    # The same sentences three times, with their first 1, 2, then 3 spaces doubled: the server's cache keys on the
    # text as typed (its ends trimmed) and nobody typed these, while the tokenizer folds the spaces, so every run
    # does the same work and none is served from the cache
    run = lambda doubled: [user.translate(s.replace(" ", "  ", doubled))[0] for s in SENTENCES[:sentences]]
    run(1)  # untimed: the first calls of a fresh server (the lengths it has not seen yet) are out of the way
    idle = run(2)
    train = find(trainer.config, "click", elem_id="toy-train")

    def keep_training():
        try:
            trainer.event(train, train["targets"][0][0])
        except (ConnectionError, httpx.HTTPError):  # the server is stopped under it once the class is measured
            pass

    training = threading.Thread(target=keep_training, daemon=True)
    training.start()
    time.sleep(3.0)  # the training is under way
    busy = run(3)
    return {"idle_p50_s": statistics.median(idle), "training_p50_s": statistics.median(busy),
            "ratio": statistics.median(busy) / statistics.median(idle), "still_training": training.is_alive()}


# -----------------------------------------------------------------------------
# Where the server's CPU goes while the class translates

IDLE = ("select (selectors.py", "Condition.wait", "Event.wait", "sleep", "Queue.get (queue.py")  # a thread waiting
SHARES = {  # the innermost frame's package decides: a stack is counted once
    "the model and our code": ("(torch/", "(playground/", "(transformer/", "(plotly/", "(_plotly_utils/", "(numpy/",
                               "(sentencepiece", "(py3langid/", "(narwhals/", "(bertviz/", "(pysbd/"),
    "Gradio and the web server": ("(gradio/", "(gradio_client/", "(starlette/", "(uvicorn/", "(anyio/", "(fastapi/",
                                  "(h11/", "(pydantic", "(orjson", "(brotli", "(jinja2/", "(asyncio/", "(httpx/",
                                  "(httpcore/", "(safehttpx/"),
}


def profiled(pid: int, step) -> tuple[object, dict]:
    """(step(), the server's busy CPU while it ran): py-spy samples every thread of process `pid` 50 times a second
    without pausing it; waiting threads are left out, and each busy sample is counted for the innermost package of
    SHARES it is in. Also the share of samples inside Gradio's postprocessing, session set-up, and the copy of the
    page's config and API description that the page's HTML carries."""
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.txt"
        spy = subprocess.Popen(["py-spy", "record", "-p", str(pid), "-r", "50", "-f", "raw", "-o", str(raw),
                                "--nonblocking"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(2.0)  # attached
        try:
            out = step()
        finally:
            spy.send_signal(signal.SIGINT)
            spy.wait(timeout=60)
        stacks = [(line.rsplit(" ", 1)[0].split(";"), int(line.rsplit(" ", 1)[1]))
                  for line in raw.read_text().splitlines() if line.strip()] if raw.exists() else []
    busy = [(frames, n) for frames, n in stacks if not any(w in frames[-1] for w in IDLE)]
    total = sum(n for _, n in busy) or 1
    shares = dict.fromkeys([*SHARES, "other"], 0)
    for frames, n in busy:
        share = next((k for f in reversed(frames) for k, packages in SHARES.items()
                      if any(p in f for p in packages)), "other")
        shares[share] += n
    within = lambda name: sum(n for frames, n in busy if any(name in f for f in frames)) / total  # noqa: E731
    return out, {"busy_s": total / 50} | {k: v / total for k, v in shares.items()} | {
        "gradio postprocess_data": within("Blocks.postprocess_data"), "gradio SessionState": within("SessionState.__init__"),
        "gradio page config": within("get_page_config"), "gradio api info": within("get_api_info")}


# -----------------------------------------------------------------------------
# Serving the app for the class, and the table


def serve(port: int, code: Path = ROOT, replicas: int = 1, database: str | None = None) -> subprocess.Popen:
    """One `python app.py` (replicas 1), or N replicas behind HAProxy (deploy/serve.py), answering on `port`;
    database: their class store's URL."""
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False"}
    flags = ["--database-url", database] if database else []
    command = [str(code / "app.py"), "--port", str(port), *flags]
    if replicas > 1:
        command = [str(ROOT / "deploy" / "serve.py"), "--replicas", str(replicas), "--port", str(port), "--", *flags]
    app = subprocess.Popen([sys.executable, *command], cwd=code, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if app.poll() is not None:
            raise SystemExit(f"the app exited: {app.stderr.read()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/config", timeout=5).status_code == 200:
                return app
        except httpx.HTTPError:
            time.sleep(0.5)
    app.kill()
    raise SystemExit("the app did not answer within 180 s")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def table(runs: dict[str, dict]) -> str:
    steps = [k for k in next(iter(runs.values()))
             if k not in ("training", "errors", "replicas") and not k.startswith("profile")]
    head = "| step | " + " | ".join(runs) + " |"
    lines = [head, "| --- |" + " --- |" * len(runs)]
    for step in steps:
        cells = []
        for r in runs.values():
            s = r[step]
            cells.append("—" if s is None else f"p50 {s['p50_s']:.2f} s, p95 {s['p95_s']:.2f} s, max {s['max_s']:.2f} s, "
                                                f"{s['kB']:.0f} kB")
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    lines.append("| errors | " + " | ".join(str(len(r["errors"])) for r in runs.values()) + " |")
    if any("replicas" in r for r in runs.values()):
        lines.append("| sessions per replica (split) | " + " | ".join(
            " / ".join(map(str, r["replicas"]["sessions"].values())) + f" ({r['replicas']['split']})"
            if "replicas" in r else "—" for r in runs.values()) + " |")
    for step in ("open the link", "translate their own sentence"):
        key = f"profile: {step}"
        if any(key in r for r in runs.values()):
            lines.append(f"| server CPU while they {step.split(' ', 1)[0]} (busy s: " + ", ".join(SHARES) +
                         ", other; inside Gradio's session set-up) | " + " | ".join(
                f"{r[key]['busy_s']:.1f} s: " + ", ".join(f"{100 * r[key][k]:.0f} %" for k in [*SHARES, "other"]) +
                f"; {100 * r[key]['gradio SessionState']:.0f} %" if key in r else "—" for r in runs.values()) + " |")
    trained = {name: r["training"] for name, r in runs.items() if "training" in r}
    if trained:  # measured after each class, on the same server
        lines.append("\nOne user's translation while a toy training runs, p50 against idle: " + "; ".join(
            f"after {name}, {t['training_p50_s']:.2f} s against {t['idle_p50_s']:.2f} s (x{t['ratio']:.2f})"
            for name, t in trained.items()) + ".")
    return "\n".join(lines)


def ratios(runs: dict[str, dict], steps: tuple[str, ...] = ("open the link", "translate their own sentence")) -> str:
    """p95 of each setup against the first setup's, for each class size: 'N replicas / one process'."""
    by_size: dict[str, dict[str, dict]] = {}
    for name, r in runs.items():
        size, _, setup = name.partition(", ")
        by_size.setdefault(size, {})[setup] = r
    lines = []
    for size, setups in by_size.items():
        base_name, base = next(iter(setups.items()))
        for setup, r in list(setups.items())[1:]:
            parts = [f"{step.split()[0]} x{r[step]['p95_s'] / base[step]['p95_s']:.2f}" for step in steps
                     if r.get(step) and base.get(step)]
            lines.append(f"{size}: {setup} against {base_name}, p95 " + ", ".join(parts))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, nargs="+", default=[1, 10, 30], help="class sizes, one run each")
    parser.add_argument("--tabs", nargs=2, default=["Attention", "bertviz"], help="the two other tabs opened")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds one event may take")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="the checkout whose app.py is served (e.g. a `git worktree` of an older commit)")
    parser.add_argument("--setups", type=int, nargs="+", default=[1],
                        help="1: one app.py; N: N replicas behind HAProxy; several alternate for each class size")
    parser.add_argument("--url", help="a server already running (on this machine): no server is started")
    parser.add_argument("--no-training", action="store_true", help="skip the translation beside a toy training")
    parser.add_argument("--profile", action="store_true",
                        help="profile the server (py-spy) while the class opens the page and while it translates: where its "
                             "CPU goes (setup 1)")
    parser.add_argument("--class-mode", choices=["sqlite", "postgresql"],
                        help="a class together instead (class_mode): its store in a fresh SQLite file, or a throwaway "
                             "PostgreSQL (tools/throwaway_postgres.py)")
    parser.add_argument("--kill-replica", action="store_true",
                        help="with --class-mode and --setups 2 or more: replica r1 killed halfway through the class")
    args = parser.parse_args()
    if args.class_mode:
        return main_class_mode(args)
    if any(not 1 <= n <= 100 for n in args.students):
        raise SystemExit("--students: from 1 to 100")
    if args.url and not args.url.startswith(("http://127.", "http://localhost", "http://[::1]")):
        raise SystemExit("--url: a server on this machine (127.0.0.1, localhost or [::1])")
    runs = {}
    for n in args.students:
        for setup in [0] if args.url else args.setups:  # a fresh server per run: nothing cached from the one before
            name = f"{n} student{'s' if n > 1 else ''}" + ("" if args.url or len(args.setups) == 1 else
                                                           ", one process" if setup == 1 else f", {setup} replicas")
            port = args.port or free_port()
            app = None if args.url else serve(port, args.code.resolve(), setup)
            try:
                url = args.url.rstrip("/") + "/" if args.url else f"http://127.0.0.1:{port}/"
                pid = app.pid if app and args.profile and setup == 1 else None
                runs[name] = classroom(url, n, args.tabs, args.timeout, training=not args.no_training, profile=pid)
            finally:
                if app:
                    os.killpg(app.pid, signal.SIGTERM)
                    app.wait(timeout=60)
            print(f"{name}: {json.dumps(runs[name])}", flush=True)
    print(table(runs))
    if len(args.setups) > 1 and not args.url:
        print(ratios(runs))
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2))


def kill_replica(serving: int, name: str) -> None:
    """SIGKILL to replica `name` of a deploy/serve.py (as after a crash)."""
    import psutil

    for child in psutil.Process(serving).children(recursive=True):
        try:
            if child.environ().get("PLAYGROUND_REPLICA") == name:
                child.kill()
                return
        except psutil.Error:
            continue
    raise RuntimeError(f"no replica {name} under process {serving}")


def main_class_mode(args) -> None:
    import contextlib

    import throwaway_postgres

    runs = {}
    for n in args.students:
        for setup in args.setups:
            with contextlib.ExitStack() as stack:
                if args.class_mode == "postgresql":
                    database = stack.enter_context(throwaway_postgres.running())
                else:
                    database = f"sqlite:///{stack.enter_context(tempfile.TemporaryDirectory())}/classes.sqlite3"
                port = args.port or free_port()
                app = serve(port, args.code.resolve(), setup, database)
                name = f"{n} students, {args.class_mode}, " + ("one process" if setup == 1 else f"{setup} replicas")
                kill = None
                if args.kill_replica and setup > 1:
                    name += ", r1 killed halfway"
                    kill = functools.partial(kill_replica, app.pid, "r1")
                try:
                    runs[name] = class_mode(f"http://127.0.0.1:{port}/", n, args.timeout, kill)
                finally:
                    os.killpg(app.pid, signal.SIGTERM)
                    app.wait(timeout=60)
            print(f"{name}: {json.dumps(runs[name])}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2))


if __name__ == "__main__":
    main()
