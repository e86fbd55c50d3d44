"""A class at once: N simulated students use the real app over Gradio's HTTP queue, as the page itself does.

    python tools/classroom.py --students 30 [--tabs Attention bertviz] [--port 7861] [--json out.json]

Starts `python app.py` on this machine, then every student (a session of its own) does what a class does:
  1. opens the link: the page's HTML (with its config inside) and the page's load event;
  2. translates a sentence of its own (Translate, with the page's own inputs, and what the page runs after it);
  3. opens two other tabs (their select events, when the page has them).
All students start each step together. Prints p50 / p95 / max seconds and the mean kB the server sent per step
(the HTML and the event's stream; not the page's scripts and styles, which a browser caches), and the
translation latency while one toy training runs ("Train a tiny one"), against the same translations idle.
Traffic goes to 127.0.0.1 only; every loop is bounded in count and time.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
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

    def __init__(self, url: str, config: dict, timeout: float):
        self.url, self.config, self.timeout = url, config, timeout
        self.api = url + config.get("api_prefix", "/gradio_api").strip("/") + "/"
        self.session = uuid.uuid4().hex[:11]
        self.values = {c["id"]: c.get("props", {}).get("value") for c in config["components"]}
        self.http = httpx.Client(timeout=timeout)
        self.messages: dict[str, list] = {}  # event id -> [(message, bytes)]
        self.waiting: set[str] = set()  # events joined and not yet completed
        self.arrived = threading.Condition()
        self.reading = False

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
            except httpx.HTTPError:  # the server went away (the run is over): the waiting event times out
                with self.arrived:
                    self.reading = False
                return
            with self.arrived:
                if not self.waiting:
                    self.reading = False
                    return

    def event(self, dependency: dict, trigger: int | None, changes: dict | None = None) -> tuple[float, int]:
        """Run one of the page's events with the page's current values; returns (seconds, bytes received)."""
        self.values |= changes or {}
        payload = {"data": [self.values.get(i) for i in dependency["inputs"]], "event_data": None,
                   "fn_index": dependency["id"], "trigger_id": trigger, "session_hash": self.session}
        t0 = time.perf_counter()
        joined = self.http.post(self.api + "queue/join", json=payload)
        joined.raise_for_status()
        event_id = joined.json()["event_id"]
        deadline = time.monotonic() + self.timeout
        with self.arrived:
            self.waiting.add(event_id)
            if not self.reading:
                self.reading = True
                threading.Thread(target=self._read, daemon=True).start()
            while not any(m.get("msg") == "process_completed" for m, _ in self.messages.get(event_id, [])):
                if not self.arrived.wait(timeout=max(0.0, deadline - time.monotonic())):
                    raise TimeoutError(f"event {dependency['id']} took over {self.timeout} s")
            self.waiting.discard(event_id)
            got = self.messages.pop(event_id)
        done = got[-1][0]
        if not done.get("success", False):
            raise RuntimeError(f"event {dependency['id']} failed: {str(done.get('output'))[:300]}")
        self.apply(dependency, done["output"].get("data", []))
        received = len(joined.content) + sum(n for _, n in got) + self.follow(dependency)
        return time.perf_counter() - t0, received

    def apply(self, dependency: dict, data: list) -> None:
        for component, value in zip(dependency["outputs"], data):
            if isinstance(value, dict) and value.get("__type__") == "update":
                if "value" in value:
                    self.values[component] = value["value"]
            else:
                self.values[component] = value

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

    def open_page(self) -> tuple[float, int]:
        """What a browser fetches from this server to show the page, less its cached scripts and styles: the HTML
        (it carries the page's config) and the page's load event."""
        t0 = time.perf_counter()
        sent = len(self.http.get(self.url).content)
        _, streamed = self.event(find(self.config, event="load"), None)
        return time.perf_counter() - t0, sent + streamed


# -----------------------------------------------------------------------------
# The page's events, found in its config as the browser finds them


def block(config: dict, **props) -> dict | None:
    return next((c for c in config["components"]
                 if all(c.get("props", {}).get(k) == v for k, v in props.items())), None)


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
        except Exception as e:  # counted and printed, never hidden
            with lock:
                errors.append(f"student {i}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=one, args=(i, s)) for i, s in enumerate(students)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, errors


def classroom(url: str, n: int, tabs: list[str], timeout: float) -> dict:
    config = httpx.get(url + "config", timeout=timeout).json()
    translate = find(config, "click", elem_id="translate-button")
    text = block(config, elem_id="source-text")["id"]
    students = [Student(url, config, timeout) for _ in range(n)]
    report, errors = {}, []
    steps = {"open the link": lambda s, i: s.open_page(),
             "translate their own sentence": lambda s, i: s.event(translate, translate["targets"][0][0],
                                                                    {text: SENTENCES[i % len(SENTENCES)]})}
    for k, (dependency, tab) in enumerate(tab_events(config, tabs)):
        steps[f"open the {tabs[k]} tab"] = (lambda s, i, d=dependency, t=tab: s.event(d, t) if d else (0.0, 0))
    for name, step in steps.items():
        samples, failed = together(students, step)
        report[name] = summary(samples) if samples else None
        errors += [f"{name}: {e}" for e in failed]
    report["training"] = beside_training(url, config, timeout)
    report["errors"] = errors
    return report


def beside_training(url: str, config: dict, timeout: float, sentences: int = 8) -> dict:
    """One user's translations idle, then the same ones while another user's toy training runs."""
    translate = find(config, "click", elem_id="translate-button")
    text = block(config, elem_id="source-text")["id"]
    user, trainer = Student(url, config, timeout), Student(url, config, timeout)
    user.open_page()
    # The same sentences twice, ending in a tab, then in a space: the server's cache keys on the text as typed and
    # nobody typed these, while the model sees the same tokens, so both runs do the same work
    run = lambda end: [user.event(translate, translate["targets"][0][0], {text: s + end})[0]
                       for s in SENTENCES[:sentences]]
    idle = run("\t")
    train = find(config, "click", elem_id="toy-train")
    training = threading.Thread(target=lambda: trainer.event(train, train["targets"][0][0]), daemon=True)
    training.start()
    time.sleep(3.0)  # the training is under way
    busy = run(" ")
    return {"idle_p50_s": statistics.median(idle), "training_p50_s": statistics.median(busy),
            "ratio": statistics.median(busy) / statistics.median(idle), "still_training": training.is_alive()}


# -----------------------------------------------------------------------------
# Serving the app for the class, and the table


def serve(port: int, code: Path = ROOT) -> subprocess.Popen:
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False"}
    app = subprocess.Popen([sys.executable, str(code / "app.py"), "--port", str(port)], cwd=code, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
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


def table(runs: dict[int, dict]) -> str:
    steps = [k for k in next(iter(runs.values())) if k not in ("training", "errors")]
    head = "| step | " + " | ".join(f"{n} student{'s' if n > 1 else ''}" for n in runs) + " |"
    lines = [head, "| --- |" + " --- |" * len(runs)]
    for step in steps:
        cells = []
        for r in runs.values():
            s = r[step]
            cells.append("—" if s is None else f"p50 {s['p50_s']:.2f} s, p95 {s['p95_s']:.2f} s, max {s['max_s']:.2f} s, "
                                                f"{s['kB']:.0f} kB")
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    lines.append("| errors | " + " | ".join(str(len(r["errors"])) for r in runs.values()) + " |")
    t = next(iter(runs.values()))["training"]
    lines.append(f"\nOne user's translation while a toy training runs: p50 {t['training_p50_s']:.2f} s against "
                 f"{t['idle_p50_s']:.2f} s idle (x{t['ratio']:.2f}).")
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
    args = parser.parse_args()
    if any(not 1 <= n <= 100 for n in args.students):
        raise SystemExit("--students: from 1 to 100")
    runs = {}
    for n in args.students:  # a fresh server per class size: nothing cached from the run before
        port = args.port or free_port()
        app = serve(port, args.code.resolve())
        try:
            runs[n] = classroom(f"http://127.0.0.1:{port}/", n, args.tabs, args.timeout)
        finally:
            app.terminate()
            app.wait(timeout=30)
        print(f"{n} students: {json.dumps(runs[n])}", flush=True)
    print(table(runs))
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2))


if __name__ == "__main__":
    main()
