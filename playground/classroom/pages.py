"""A class's pages, as HTML (no gradio: playground/classroom/panel.py puts them on the page): the join link and its
QR code, the class's wall, the teacher's list of students, the polls (the projector's counts, a phone's buttons), the
follow box and the end-of-class summary. The class's data lives in playground/classroom/store.py. Everything a
student typed is escaped before any page shows it."""
from __future__ import annotations

import html
import json
from datetime import datetime, timezone
from urllib.parse import urlencode, urlsplit, urlunsplit

import segno

from ..doubts import marked_words, notice_in
from ..i18n import ENGLISH, Texts
from ..quiz import summary_html as quiz_summary_html
from ..pieces import named
from ..uploads import PREFIX
from .store import ClassState, Poll, shown_code

WALL_SHOWN = 60  # the most groups of sentences the projector's wall shows (the summary keeps every one)
PHONE_WALL = 6  # and a student's page
# the teacher's wall in a window of its own, for a second screen: the same page, which shows only the wall (page.js)
def wall_window(_: Texts) -> str:
    return ('<p class="wall-window"><a href="?wall" target="_blank" rel="noopener">'
            + _("Open the wall in a window of its own") + "</a> " + _("(for a second screen)") + "</p>")


def join_link(address: str, code: str) -> str:
    """The page's address (its query and fragment dropped) opening the class with this code."""
    scheme, host, path, _, _ = urlsplit(address)
    return urlunsplit((scheme, host, path or "/", urlencode({"class": code}), ""))


def qr_svg(link: str) -> str:
    """The link as a QR code, an SVG that takes its box's size (segno; medium error correction, which a projector
    photographed by a phone reads well)."""
    return segno.make(link, error="m").svg_inline(scale=1, border=2, omitsize=True, dark="#111")


def joined(students: int, locked: bool = False, _: Texts = ENGLISH) -> str:
    said = _.plural("{n} student joined", "{n} students joined", students)
    return said + (" · " + _("closed to new students") if locked else "")


def join_card(link: str, code: str, students: int, locked: bool = False, _: Texts = ENGLISH) -> str:
    """What the projector shows to let a class in: the QR code, the link as text, the code (large enough to read
    from the back of a room), how many joined and whether the class is closed to new students."""
    qr, join, class_code = _("QR code of the join link"), _("Join on your phone: scan the code or open"), _("Class code")
    sure = html.escape(_("Sure? Click again to end the class for everyone"))  # End asks it (assets/page.js)
    return (f'<div class="join-card" data-end-sure="{sure}"><div class="join-qr" role="img" aria-label="{qr}">'
            f'{qr_svg(link)}</div><div class="join-text"><p>{join}</p>'
            f'<p class="join-link"><a href="{html.escape(link)}" target="_blank">{html.escape(link)}</a></p>'
            f'<p>{class_code}</p><p class="join-code">{shown_code(code)}</p>'
            f'<p class="join-count">{joined(students, locked, _)}</p></div></div>')


def roster_html(state: ClassState, _: Texts = ENGLISH) -> str:
    """The teacher's list of the class: how many joined and the button that closes the class to new students (or
    opens it), then each student by nickname with their counts, and the buttons that hide everything from one, show
    it again, or take them out of the class (their clicks fire the list's "act" event)."""
    nameless = {s.key: n for n, s in enumerate((s for s in state.roster if not s.nickname), 1)}  # numbered as they
    # joined, removed students included: a name never changes when another student leaves
    listed = [s for s in state.roster if not s.removed]
    act = _("Open to new students") if state.locked else _("Close to new students")
    # a flood of joins, in one click: those marked as joined without the page, or every one without a nickname
    them, all_out = html.escape(_("Sure? Take them out")), ""
    marked, nameless_n = sum(s.passless for s in listed), sum(not s.nickname for s in listed)
    for act_on, n, label in (("remove-marked", marked, _("Take out everyone marked ⚠ ({n})", n=marked)),
                             ("remove-nameless", nameless_n, _("Take out everyone without a nickname ({n})",
                                                               n=nameless_n))):
        if n > 1:
            all_out += f'<button data-act="{act_on}" data-id="" data-sure="{them}">{label}</button>'
    passless = html.escape(_("Joined without opening the page: a script, most likely"))
    lock = (f'<p class="roster-head">{joined(state.students, state.locked, _)} <button data-act="lock" data-id="">'
            f'{act}</button>{all_out}</p>')
    if not listed:
        return f'<div class="roster">{lock}<p class="roster-empty">' + _("No student has joined yet.") + '</p></div>'
    rows = []
    show, hide_all, take_out = _("Show their sentences"), _("Hide all theirs"), _("Take out")
    sure = html.escape(_("Sure? Take out"))  # Take out asks it (assets/page.js)
    for s in listed:
        name = html.escape(s.nickname) if s.nickname else "<i>" + _("no nickname ({n})", n=nameless[s.key]) + "</i>"
        if s.passless:
            name += f' <span class="roster-passless" title="{passless}" aria-label="{passless}">⚠</span>'
        hide = (f'<button data-act="show-all" data-id="{s.key}">{show}</button>' if s.hidden and
                s.hidden == s.sentences else f'<button data-act="hide-all" data-id="{s.key}">{hide_all}</button>')
        counts = (_.plural("{n} sentence", "{n} sentences", s.sentences) + " · "
                  + _.plural("{n} vote", "{n} votes", s.votes))
        rows.append(f'<li><span class="roster-name">{name}</span><span class="roster-n">{counts}</span>'
                    f'<span class="roster-actions">{hide if s.sentences else ""}<button data-act="remove" '
                    f'data-id="{s.key}" data-sure="{sure}">{take_out}</button></span></li>')
    return f'<div class="roster">{lock}<ol class="roster-list">{"".join(rows)}</ol></div>'


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


def wall_html(state: ClassState, teacher: bool, limit: int = WALL_SHOWN, _: Texts = ENGLISH) -> str:
    """The wall; a teacher's entries carry the buttons that open a sentence in every view and hide it (their
    clicks fire the wall's own event: assets/page.js)."""
    entries = grouped(state.wall)[:limit]
    window = wall_window(_) if teacher else ""
    if not entries:
        return (f'<div class="wall">{window}<p class="wall-empty">'
                + _("The class's sentences appear here as they are translated.") + '</p></div>')
    items, show, hide = [], _("Show in every view"), _("Hide")
    for e in entries:
        who = ", ".join(e["nicknames"][:3]) + (" " + _("and others") if len(e["nicknames"]) > 3 else "")
        count = f'<span class="wall-count">×{e["count"]}</span>' if e["count"] > 1 else ""
        notice = f'<p class="wall-notice">{html.escape(notice_in(e["notice"], _))}</p>' if e["notice"] else ""
        language = ("OWN" if e["pair"].startswith(PREFIX)  # the teacher's own model
                    else html.escape(e["pair"].rsplit("-", 1)[-1].upper()))  # a German and a French card told apart
        actions = (f'<span class="wall-actions"><button data-act="open" data-id="{e["id"]}">{show}'
                   f'</button><button data-act="hide" data-id="{e["id"]}">{hide}</button></span>') if teacher else ""
        items.append(f'<li><p class="wall-source">{html.escape(e["text"])} {count}</p>'
                     f'<p class="wall-translation"><span class="wall-lang" title="{html.escape(e["pair"])}">{language}'
                     f'</span> {marked_words(e["translation"], json.loads(e["unsure"]))}</p>'
                     f'{notice}<p class="wall-who">{html.escape(who)}{actions}</p></li>')
    more = len(grouped(state.wall)) - len(entries)
    tail = '<p class="wall-more">' + _("and {n} more (in the summary)", n=more) + '</p>' if more > 0 else ""
    return f'<div class="wall">{window}<ol class="wall-list">{"".join(items)}</ol>{tail}</div>'


# -----------------------------------------------------------------------------
# Polls: a Lesson step's question, or "which piece comes next?" in Step by step


def next_piece_poll(result, index: int, _: Texts = ENGLISH) -> tuple[str, list[str], int, str]:
    """(question, choices, right, explained) for step `index` of the translation: its top pieces, in the order of
    the alphabet (never the right one first by habit), and the one the model wrote. `explained` is HTML."""
    steps = result.translation.steps
    index = max(0, min(int(index), len(steps) - 1))
    step, out = steps[index], result.translation.target_tokens
    written = out[:index]
    tokens = list(dict.fromkeys([tok for tok, _ in step.alternatives[:4]] + [step.token]))
    named_pieces = [named(written + [t], len(written), _) for t in tokens]
    order = sorted(range(len(tokens)), key=lambda i: named_pieces[i].lower())
    so_far = "".join(written).replace("\u2581", " ").strip()
    question = (_("After {written}, which piece does the model write next?", written=_.quoted(so_far)) if index else
                _("Which piece does the model write first?"))
    explained = html.escape(_("{piece}, with probability {p}.", piece=named_pieces[tokens.index(step.token)],
                              p=_.number(step.prob)))
    return question, [named_pieces[i] for i in order], order.index(tokens.index(step.token)), explained


def poll_html(poll: Poll | None, show_counts: bool, said: bool = True, _: Texts = ENGLISH) -> str:
    """The projector's current question (`said`: with its words and, once revealed, its answer; beside the Lesson's
    own question and answer, without them),
    each choice with its votes (when shown) and, once revealed, the right one marked (poll.explained is HTML the
    server wrote, its pieces escaped)."""
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
    votes = '<p class="poll-total">' + _.plural("{n} vote", "{n} votes", total) + '</p>' if show_counts else ""
    answered, asked = _("Answer:"), _("Question for the class:")
    answer = (f'<p class="poll-answer"><b>{answered}</b> {poll.explained or html.escape(poll.choices[poll.answer])}'
              '</p>' if poll.revealed and said else "")  # beside the Lesson, its own answer says it
    state = "revealed" if poll.revealed else "open"
    question = f'<p class="poll-question"><b>{asked}</b> {html.escape(poll.question)}</p>' if said else ""
    return (f'<div class="poll" data-poll="{poll.id}" data-state="{state}">{question}<ol class="poll-choices">'
            f'{"".join(rows)}</ol>{votes}{answer}</div>')


def question_html(poll: Poll | None, mine: int | None, _: Texts = ENGLISH) -> str:
    """A phone's current question: said once, each choice once as a button as large as a finger (its click fires
    the question's "vote" event), this phone's vote marked; once revealed, folded to whether the student was right
    and the question (unfolded: the answer and the class's votes). A new question (no vote yet) comes with a
    banner."""
    if poll is None:
        return ""
    total = sum(poll.counts)
    buttons = []
    for i, choice in enumerate(poll.choices):
        classes = " ".join(filter(None, ["chosen" if i == mine else "", "right" if poll.revealed and i == poll.answer
                                         else ""]))
        counted = f' <span class="choice-n">{poll.counts[i]}</span>' if poll.revealed else ""
        pressed = "true" if i == mine else "false"
        buttons.append(f'<li><button class="choice {classes}" data-choice="{i}" aria-pressed="{pressed}"'
                       f'{" disabled" if poll.revealed else ""}>{"✓ " if poll.revealed and i == poll.answer else ""}'
                       f'{html.escape(choice)}{counted}</button></li>')
    if poll.revealed:  # folded to its verdict and question: the translation box comes back up the screen
        verdict = ("" if mine is None else '<span class="verdict right">' + _("Right!") + "</span> " if mine ==
                   poll.answer else '<span class="verdict wrong">' + _("Not quite.") + "</span> ")
        answered, counted = _("Answer:"), _.plural("{n} vote in the class", "{n} votes in the class", total)
        return (f'<details class="question" data-poll="{poll.id}" data-state="revealed"><summary>{verdict}'
                f'<span class="poll-question">{html.escape(poll.question)}</span></summary>'
                f'<ol class="question-choices">{"".join(buttons)}</ol><p class="poll-answer"><b>{answered}</b> '
                f'{poll.explained or html.escape(poll.choices[poll.answer])}</p><p class="poll-total">{counted}</p>'
                '</details>')
    said = ('<p class="poll-said">' + (_("Your vote is in: you can change it until the teacher reveals the answer.")
                                       if mine is not None else _("Tap your answer.")) + "</p>")
    banner = ('<p class="poll-banner" role="status">' + _("New question from your teacher") + "</p>"
              if mine is None else "")
    return (f'<div class="question" data-poll="{poll.id}" data-state="open">{banner}<p class="poll-question">'
            f'{html.escape(poll.question)}</p><ol class="question-choices">{"".join(buttons)}</ol>{said}</div>')


def out_html(said: str) -> str:
    """A phone's box at its top when its page is out of the class (taken out, or the class closed to it): what the
    class said, where the phone shows the question, in its first screen."""
    return f'<p class="class-out" role="status">{html.escape(said)}</p>'


def followed_html(state: ClassState, _: Texts = ENGLISH) -> str:
    """What a following student's page shows of the teacher's: the sentence and its translation, the Lesson step."""
    t = state.teacher
    if not t.get("text"):
        return '<p class="follow-empty">' + _("The teacher has not shown a sentence yet.") + "</p>"
    asked = state.poll is not None and state.poll.question == t.get("question")  # said once: in the question box
    step = ('<p class="follow-step">' + _("Lesson step {n}:", n=t["step"]) + f' {html.escape(t["step_title"] or "")}'
            + (f'<br>{html.escape(t["question"])}' if t.get("question") and not asked else "") + "</p>"
            if t.get("step") else "")
    projector = _("On the projector")
    return (f'<div class="follow"><p class="follow-label">{projector}</p><p class="follow-source">'
            f'{html.escape(t["text"])}</p><p class="follow-translation">{html.escape(t["translation"] or "")}</p>'
            f'{step}</div>')


# -----------------------------------------------------------------------------
# The end of a class: one HTML page the teacher keeps, after which the store forgets the class

SUMMARY_STYLE = """body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#111}
li{margin:.6rem 0}.t{color:#333}.n{color:#8a4b00;font-size:.9em}mark.unsure{background:#ffe08a}
.right{font-weight:bold}.who{color:#666;font-size:.9em}p,li{overflow-wrap:anywhere}"""


# the summary's times in the reader's own time zone and language, once it opens in a browser (UTC where it cannot)
LOCAL_TIME = ("<script>document.querySelectorAll('time').forEach(t => t.textContent = new Date(t.dateTime)"
              ".toLocaleString(document.documentElement.lang, {dateStyle: 'long', timeStyle: 'short'}))</script>")


def summary(state: ClassState, labels: dict[str, str], _: Texts = ENGLISH) -> str:
    """The class as it ended: every sentence the class sent (hidden ones left out) with its translation, unsure words
    and warnings; every question with the sentence and Lesson step it was asked about, its votes and answer; the
    students by nickname with their counts (those the teacher took out left out). `labels`: pair -> its name on the
    page."""
    now = datetime.now(timezone.utc)  # written in UTC, and in the reader's own time where the page opens (LOCAL_TIME)
    when = f'<time datetime="{now.isoformat(timespec="seconds")}">{now.strftime("%Y-%m-%d %H:%M UTC")}</time>'

    sent = []
    for e in grouped(state.wall):
        who = html.escape(", ".join(e["nicknames"]))
        notice = f'<br><span class="n">{html.escape(notice_in(e["notice"], _))}</span>' if e["notice"] else ""
        sent.append(f'<li>{html.escape(e["text"])} <span class="who">({html.escape(labels.get(e["pair"], e["pair"]))}'
                    f'{", ×" + str(e["count"]) if e["count"] > 1 else ""}{"; " + who if who else ""})</span><br>'
                    f'<span class="t">{marked_words(e["translation"], json.loads(e["unsure"]))}</span>{notice}</li>')
    questions = []
    for p in state.polls:
        choices = "".join(f'<li class="{"right" if i == p.answer else ""}">{html.escape(c)}: '
                          + _.plural("{n} vote", "{n} votes", p.counts[i])
                          + (" " + _("(the answer)") if i == p.answer else "") + "</li>"
                          for i, c in enumerate(p.choices))
        where = _("Lesson step {n}", n=p.step) if p.step else _("Step by step")
        about = ('<br><span class="who">' + _("{where}, on {sentence} ({pair})", where=where,
                                                sentence=_.quoted(html.escape(p.text)),
                                                pair=html.escape(labels.get(p.pair, p.pair)))
                 + '</span>' if p.text else "")
        questions.append(f"<li>{html.escape(p.question)}{about}<ul>{choices}</ul>{p.explained}</li>")
    listed = [s for s in state.roster if not s.removed]
    nameless = "<i>" + _("no nickname") + "</i>"
    students = "".join(f'<li>{html.escape(s.nickname) or nameless}: '
                       + _.plural("{n} sentence on the wall", "{n} sentences on the wall", s.sentences - s.hidden)
                       + ", " + _.plural("{n} vote", "{n} votes", s.votes) + "</li>" for s in listed)
    code = shown_code(state.code)
    return (f"<!doctype html><html lang={_.language}><meta charset=utf-8><title>"
            + _("Class {code}: summary", code=code) + f"</title><style>{SUMMARY_STYLE}</style><h1>"
            + _("Class {code}", code=code) + "</h1><p>"
            + _("Ended {when}; {joined}. The playground deleted the class's data when this page was made.",
                when=when, joined=_.plural("{n} student joined", "{n} students joined", len(listed)))
            + "</p><h2>" + _("The class's sentences ({n})", n=len(state.wall)) + "</h2>"
            + "<ol>" + ("".join(sent) or "<li>" + _("None was sent.") + "</li>") + "</ol><p><mark class=unsure>"
            + _("word") + "</mark> " + _("the model was unsure here") + "</p><h2>"
            + _("Questions ({n})", n=len(state.polls)) + "</h2>"
            + "<ol>" + ("".join(questions) or "<li>" + _("None was asked.") + "</li>") + "</ol>"
            + quiz_summary(state, _) + "<h2>" + _("Students ({n})", n=len(listed)) + "</h2>"
            + "<ul>" + (students or "<li>" + _("None joined.") + "</li>") + "</ul>" + LOCAL_TIME + "</html>")


def quiz_summary(state: ClassState, _: Texts) -> str:
    return quiz_summary_html(state.quizzes, _)
