"""A class, together (no gradio: playground/class_panel.py puts it on the page): the join link and its QR code, the
class's wall, its polls and the follow box as HTML, the end-of-class summary, and the rate limits. The class's data
lives in playground.store. Everything a student typed is escaped before any page shows it."""
from __future__ import annotations

import html
import json
import threading
import time
from collections import defaultdict, deque
from datetime import datetime, timezone
from urllib.parse import urlencode, urlsplit, urlunsplit

import segno

from .pieces import named
from .store import ClassState, Poll, shown_code

WALL_SHOWN = 60  # the most groups of sentences the projector's wall shows (the summary keeps every one)
PHONE_WALL = 6  # and a student's page


class Limiter:
    """At most `n` events per `per_s` seconds for each key (a session, a student): a sliding window, in memory.
    Each replica counts its own (a session stays on its replica: the balancer's cookie)."""

    def __init__(self, n: int, per_s: float):
        self.n, self.per_s = n, per_s
        self.events: dict[str, deque] = defaultdict(deque)
        self.lock = threading.Lock()

    def allow(self, key: str, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        with self.lock:
            seen = self.events[key]
            while seen and seen[0] <= now - self.per_s:
                seen.popleft()
            if len(seen) >= self.n:
                return False
            seen.append(now)
            if len(self.events) > 50_000:  # keys of sessions long gone
                for old in [k for k, v in self.events.items() if not v or v[-1] <= now - self.per_s]:
                    del self.events[old]
            return True


def join_link(address: str, code: str) -> str:
    """The page's address (its query and fragment dropped) opening the class with this code."""
    scheme, host, path, _, _ = urlsplit(address)
    return urlunsplit((scheme, host, path or "/", urlencode({"class": code}), ""))


def qr_svg(link: str) -> str:
    """The link as a QR code, an SVG that takes its box's size (segno; medium error correction, which a projector
    photographed by a phone reads well)."""
    return segno.make(link, error="m").svg_inline(scale=1, border=2, omitsize=True, dark="#111")


def join_card(link: str, code: str, students: int) -> str:
    """What the projector shows to let a class in: the QR code, the link as text, the code, how many joined."""
    joined = f"{students} student{'' if students == 1 else 's'} joined"
    return (f'<div class="join-card"><div class="join-qr" role="img" aria-label="QR code of the join link">'
            f'{qr_svg(link)}</div><div class="join-text"><p>Join on your phone: scan the code or open</p>'
            f'<p class="join-link"><a href="{html.escape(link)}" target="_blank">{html.escape(link)}</a></p>'
            f'<p>Class code <b class="join-code">{shown_code(code)}</b></p>'
            f'<p class="join-count">{joined}</p></div></div>')


# -----------------------------------------------------------------------------
# The wall: the class's sentences as they arrive, newest first, the same sentence grouped


def grouped(wall: list[dict]) -> list[dict]:
    """Sentences of the same pair and text (case and spaces aside) as one entry, newest first: its newest sentence,
    how many sent it and their nicknames."""
    groups: dict[tuple, dict] = {}
    for s in wall:  # newest first
        key = (s["pair"], " ".join(s["text"].lower().split()))
        if key not in groups:
            groups[key] = dict(s, count=0, nicknames=[])
        groups[key]["count"] += 1
        if s["nickname"] and s["nickname"] not in groups[key]["nicknames"]:
            groups[key]["nicknames"].append(s["nickname"])
    return list(groups.values())


def marked_words(translation: str, unsure: list[str]) -> str:
    """The translation, escaped, with the words the model was unsure of marked."""
    doubts = set(unsure)
    return " ".join(f'<mark class="unsure">{html.escape(w)}</mark>' if w in doubts else html.escape(w)
                    for w in translation.split())


def wall_html(state: ClassState, teacher: bool, limit: int = WALL_SHOWN) -> str:
    """The wall; a teacher's entries carry the buttons that open a sentence in every view and hide it (their
    clicks fire the wall's own event: assets/page.js)."""
    entries = grouped(state.wall)[:limit]
    if not entries:
        return ('<div class="wall"><p class="wall-empty">The class\'s sentences appear here as they are '
                'translated.</p></div>')
    items = []
    for e in entries:
        who = ", ".join(e["nicknames"][:3]) + (" and others" if len(e["nicknames"]) > 3 else "")
        count = f'<span class="wall-count">×{e["count"]}</span>' if e["count"] > 1 else ""
        notice = f'<p class="wall-notice">{html.escape(e["notice"])}</p>' if e["notice"] else ""
        actions = (f'<span class="wall-actions"><button data-act="open" data-id="{e["id"]}">Show in every view'
                   f'</button><button data-act="hide" data-id="{e["id"]}">Hide</button></span>') if teacher else ""
        items.append(f'<li><p class="wall-source">{html.escape(e["text"])} {count}</p>'
                     f'<p class="wall-translation">{marked_words(e["translation"], json.loads(e["unsure"]))}</p>'
                     f'{notice}<p class="wall-who">{html.escape(who)}{actions}</p></li>')
    more = len(grouped(state.wall)) - len(entries)
    tail = f'<p class="wall-more">and {more} more (in the summary)</p>' if more > 0 else ""
    return f'<div class="wall"><ol class="wall-list">{"".join(items)}</ol>{tail}</div>'


# -----------------------------------------------------------------------------
# Polls: a Lesson step's question, or "which piece comes next?" in Step by step


def next_piece_poll(result, index: int) -> tuple[str, list[str], int, str]:
    """(question, choices, right, explained) for step `index` of the translation: its top pieces, in the order of
    the alphabet (never the right one first by habit), and the one the model wrote. `explained` is HTML."""
    steps = result.translation.steps
    index = max(0, min(int(index), len(steps) - 1))
    step, out = steps[index], result.translation.target_tokens
    written = out[:index]
    tokens = list(dict.fromkeys([tok for tok, _ in step.alternatives[:4]] + [step.token]))
    named_pieces = [named(written + [t], len(written)) for t in tokens]
    order = sorted(range(len(tokens)), key=lambda i: named_pieces[i].lower())
    so_far = "".join(written).replace("\u2581", " ").strip()
    question = (f"After “{so_far}”, which piece does the model write next?" if index else
                "Which piece does the model write first?")
    explained = html.escape(f"{named_pieces[tokens.index(step.token)]}, with probability {step.prob:.2f}.")
    return question, [named_pieces[i] for i in order], order.index(tokens.index(step.token)), explained


def poll_html(poll: Poll | None, show_counts: bool) -> str:
    """The current question, each choice with its votes (when shown) and, once revealed, the right one marked
    (poll.explained is HTML the server wrote, its pieces escaped)."""
    if poll is None:
        return ""
    total = sum(poll.counts)
    rows = []
    for i, choice in enumerate(poll.choices):
        n = poll.counts[i] if i < len(poll.counts) else 0
        right = poll.revealed and i == poll.answer
        width = f"{100 * n / total:.0f}%" if total else "0%"
        bar = (f'<span class="poll-bar" style="width:{width}"></span><span class="poll-n">{n}</span>'
               if show_counts else "")
        rows.append(f'<li class="{"poll-right" if right else ""}"><span class="poll-choice">'
                    f'{"✓ " if right else ""}{html.escape(choice)}</span>{bar}</li>')
    votes = f'<p class="poll-total">{total} vote{"" if total == 1 else "s"}</p>' if show_counts else ""
    answer = (f'<p class="poll-answer"><b>Answer:</b> {poll.explained or html.escape(poll.choices[poll.answer])}'
              '</p>' if poll.revealed else "")
    return (f'<div class="poll"><p class="poll-question"><b>Question for the class:</b> {html.escape(poll.question)}'
            f'</p><ol class="poll-choices">{"".join(rows)}</ol>{votes}{answer}</div>')


def followed_html(state: ClassState) -> str:
    """What a following student's page shows of the teacher's: the sentence and its translation, the Lesson step."""
    t = state.teacher
    if not t.get("text"):
        return '<p class="follow-empty">The teacher has not shown a sentence yet.</p>'
    step = (f'<p class="follow-step">Lesson step {t["step"]}: {html.escape(t["step_title"] or "")}'
            + (f'<br>{html.escape(t["question"])}' if t.get("question") else "") + "</p>" if t.get("step") else "")
    return (f'<div class="follow"><p class="follow-label">On the projector</p><p class="follow-source">'
            f'{html.escape(t["text"])}</p><p class="follow-translation">{html.escape(t["translation"] or "")}</p>'
            f'{step}</div>')


# -----------------------------------------------------------------------------
# The end of a class: one HTML page the teacher keeps, after which the store forgets the class

SUMMARY_STYLE = """body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#111}
li{margin:.6rem 0}.t{color:#333}.n{color:#8a4b00;font-size:.9em}mark.unsure{background:#ffe08a}
.right{font-weight:bold}.who{color:#666;font-size:.9em}p,li{overflow-wrap:anywhere}"""


def summary(state: ClassState, labels: dict[str, str]) -> str:
    """The class as it ended: every sentence the class sent (hidden ones left out) with its translation, unsure words
    and warnings, and every question with its votes and answer. `labels`: pair -> its name on the page."""
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    sent = []
    for e in grouped(state.wall):
        who = html.escape(", ".join(e["nicknames"]))
        notice = f'<br><span class="n">{html.escape(e["notice"])}</span>' if e["notice"] else ""
        sent.append(f'<li>{html.escape(e["text"])} <span class="who">({html.escape(labels.get(e["pair"], e["pair"]))}'
                    f'{", ×" + str(e["count"]) if e["count"] > 1 else ""}{"; " + who if who else ""})</span><br>'
                    f'<span class="t">{marked_words(e["translation"], json.loads(e["unsure"]))}</span>{notice}</li>')
    questions = []
    for p in state.polls:
        choices = "".join(f'<li class="{"right" if i == p.answer else ""}">{html.escape(c)}: {p.counts[i]} '
                          f'vote{"" if p.counts[i] == 1 else "s"}{" (the answer)" if i == p.answer else ""}</li>'
                          for i, c in enumerate(p.choices))
        questions.append(f"<li>{html.escape(p.question)}<ul>{choices}</ul>{p.explained}</li>")
    return (f"<!doctype html><html lang=en><meta charset=utf-8><title>Class {shown_code(state.code)}: summary</title>"
            f"<style>{SUMMARY_STYLE}</style><h1>Class {shown_code(state.code)}</h1><p>Ended {when}; "
            f"{state.students} student{'' if state.students == 1 else 's'} joined. The playground deleted the "
            f"class's data when this page was made.</p><h2>The class's sentences ({len(state.wall)})</h2>"
            f"<ol>{''.join(sent) or '<li>None was sent.</li>'}</ol><p><mark class=unsure>word</mark> the model was "
            f"unsure here</p><h2>Questions ({len(state.polls)})</h2>"
            f"<ol>{''.join(questions) or '<li>None was asked.</li>'}</ol></html>")
