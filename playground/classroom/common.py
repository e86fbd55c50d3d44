"""What the class's parts on the page share (playground/classroom/panel.py and the teacher's, the questions' and the
student's parts beside it): the one interface through which they read and set the page (`PageParts`), what a
page remembers of its class (`ClassMemory`), and small helpers."""
from __future__ import annotations

import functools
import html
import ipaddress
import re
from dataclasses import dataclass, field
from typing import Callable

import gradio as gr

from ..context import Sessions
from ..panel import TranslatePanel
from ..view import View, log
from .store import Poll, Quiz

ACT_JS = "tp.wall(element, trigger, 'act')"  # the wall's and the list's buttons fire their "act" event (assets/page.js)
TEACHER_TICK_S, STUDENT_TICK_S = 1.0, 2.0  # how often a page asks whether its class changed
CLASS_VIEWS = ("lesson", "steps")  # the views with a teacher's parts (the question to ask, its votes beside it)


@dataclass
class PageParts:
    """What the class reads and sets of the page, and nothing more: made once from the page (ClassPanel.wire)."""

    panel: TranslatePanel  # the sentence, its pair, translation and notice; presentation mode and the settings
    result: gr.State  # the visitor's translation (context.Result)
    sessions: Sessions  # each visitor's page on the server (context.Session: open, lesson_step, teaching, panel_only)
    top: gr.Tabs  # the views' tabs: hidden on a student's page
    rebuilt: dict  # each of CLASS_VIEWS -> the hidden number that builds it again for a visitor (a teacher's: with
    # the class's question and its votes)
    view: Callable[[str], View]  # a view of the page by its key: the page's own, or its copy off the page (the
    # Lesson's steps and their questions; a student's own quiz)
    demo: gr.Blocks  # the page (its unload event)

    @property
    def lesson(self) -> View:
        return self.view("lesson")

    @property
    def steps(self) -> View:
        return self.view("steps")


@dataclass
class ClassMemory:
    """What one page remembers of its class, on the server (ClassPanel.memory): which class it is in and what of it
    the page was last sent, so that a poll sends only what changed."""

    class_id: int | None = None  # the class a student's page is in (found once from its token)
    seen: int | None = None  # the class's version the page last drew
    drawn: dict = field(default_factory=dict)  # id(component) -> the value last sent to it
    poll: Poll | None = None  # the question a phone shows, as last read
    quiz: Quiz | None = None  # the quiz a phone shows (the class's open one), as last read
    shown: tuple | None = None  # what the teacher's page last wrote as shown to the class: (pair, text, step)
    sent: tuple | None = None  # a student's last sentence sent to the wall: (pair, text)

    def changed(self, drawn: dict) -> dict:
        """Of `drawn` (component -> value), what differs from what this page was last sent."""
        out = {c: v for c, v in drawn.items() if self.drawn.get(id(c)) != v}
        self.drawn.update({id(c): v for c, v in out.items()})
        return out


def bold(text: str) -> str:
    """Markdown's bold."""
    return "**" + text + "**"


def plain(text: str) -> str:
    """A Lesson text (Markdown with escaped HTML) as plain text, for a page that escapes what it shows."""
    return html.unescape(re.sub(r"<[^>]+>", "", text.replace("**", "")))


def quiet(poll):
    """A page's poll of its class: a failure is logged and the page keeps what it shows (the next poll, a second
    or two later, tries again); never an error box every second."""
    @functools.wraps(poll)
    def polled(*args, **kwargs):
        try:
            return poll(*args, **kwargs)
        except Exception:
            log.exception("%s failed", poll.__qualname__)
            return {}
    return polled


def client_address(request, trusted: frozenset[str]) -> str:
    """The visitor's address: the one the server sees, or, when that is a balancer the app was told to trust
    (--trusted-proxy), the one it forwarded (the last in X-Forwarded-For: the one it added itself)."""
    seen = getattr(getattr(request, "client", None), "host", "") or ""
    if seen in trusted:
        forwarded = [a.strip() for a in (request.headers.get("x-forwarded-for") or "").split(",") if a.strip()]
        if forwarded:
            try:
                return str(ipaddress.ip_address(forwarded[-1]))
            except ValueError:
                pass
    return seen
