"""A quiz before and after the Lesson: six questions, one per learning objective, asked on the class's own sentence
where the model can say the answer (no gradio: playground/classroom shows it on the phones and the projector,
views/lesson.py to a student alone).

Each question's choices come in an order of their own (never the right one first by habit), the same for everyone
who is asked about the same sentence in the same language.
"""
from __future__ import annotations

import hashlib
import html
from dataclasses import asdict, dataclass

from .context import Result
from .i18n import N_, Texts
from .lesson import clearest_step, is_word, looked_at
from .pieces import named

# the six learning objectives, in the Lesson's order
OBJECTIVES = (N_("What an attention weight means"), N_("Why positions are added"),
              N_("What the decoder's mask hides"), N_("How the next piece is chosen"), N_("What a head is"),
              N_("What attention does not tell you"))
PHASES = ("before", "after")


@dataclass
class Question:
    objective: int  # its index in OBJECTIVES
    text: str
    choices: list[str]
    right: int  # the right choice's index

    def to_dict(self) -> dict:
        return asdict(self)


def shuffled(key: str, choices: list[str]) -> tuple[list[str], int]:
    """The choices (the right one first) in an order fixed by `key` (the question and the sentence, not its words:
    the same order in every language), and where the right one went."""
    order = sorted(range(len(choices)), key=lambda i: hashlib.sha256(f"{key}\n{i}".encode()).hexdigest())
    return [choices[i] for i in order], order.index(0)


def questions(result: Result, language: str = "en") -> list[Question]:
    """The six questions on this translation, in `language`; each names the sentence's own pieces where the model
    makes the answer (the weight read from the hooked maps, the piece the model wrote with its probability)."""
    _ = Texts(language)
    src, out = result.maps.source_tokens, result.translation.target_tokens
    q = looked_at(result)  # as the Lesson's steps 3 and 4
    row = result.maps.encoder[0, 0, q]  # (S,): layer 0, head 0
    k = int(row.argmax())
    heads = int(result.maps.encoder.size(1))
    p = result.translation.steps[0].prob  # the first piece written: out[0]
    t = clearest_step(result)
    written = named(out, t, _) if t is not None else _("the next piece")
    top = named(src, int(result.maps.cross[-1].mean(0)[t].argmax()), _) if t is not None else named(src, k, _)
    later = named(out, min(2, len(out) - 1), _) if len(out) > 1 else _("the pieces it writes later")
    weight = _.number(float(row[k]))
    looker, looked = named(src, q, _), named(src, k, _)

    def asked(objective: int, text: str, right: str, *wrong: str) -> Question:
        choices, index = shuffled(f"{objective}\n{result.text}", [right, *wrong])
        return Question(objective, text, choices, index)

    return [
        asked(0, _("In the encoder's first layer, head 1 gives {looked} the weight {weight} when it updates "
                   "{looker}. What does that number say?", looked=looked, weight=weight, looker=looker),
              _("how much of {looked}'s content is mixed into {looker}", looked=looked, looker=looker),
              _("how likely {looked} is to be the next word", looked=looked),
              _("how many times {looked} appears in the sentence", looked=looked),
              _("how important {looked} is for the whole translation", looked=looked)),
        asked(1, _("Why does the model add a position wave to each piece's vector?"),
              _("attention alone cannot tell the order of the words"),
              _("to make the vectors longer"), _("to tell which language the sentence is in"),
              _("to count the pieces")),
        asked(2, _("While the decoder works on {first}, what does its mask hide?", first=named(out, 0, _)),
              _("the pieces it writes later, such as {later}", later=later),
              _("the English sentence"), _("the pieces it has already written"), _("nothing: it sees everything")),
        asked(3, _("With greedy decoding the model wrote {first} first. Why that piece?", first=named(out, 0, _)),
              _("it had the highest probability ({p})", p=_.number(p)),
              _("it was drawn at random"), _("it translates the first English word, word for word"),
              _("it is the most common word of the language")),
        asked(4, _("Each layer of this model has {heads} heads. What is a head?", heads=heads),
              _("one attention with its own queries, keys and values, beside the others"),
              _("the first layer of the model"), _("the piece the model looks at most"),
              _("the part that chooses the next piece")),
        asked(5, _("While it writes {written}, the last layer looks most at {top}. What does that tell us?",
                   written=written, top=top),
              _("where the model looks, not what it uses: that takes a test, such as hiding {top}", top=top),
              _("{top} is the reason it wrote {written}", top=top, written=written),
              _("the other pieces were not used at all"), _("{written} is the translation of {top}", written=written,
                                                            top=top)),
    ]


def usable(result: Result) -> bool:
    """Whether the sentence gives the questions what they name: two words, and a translation with a word."""
    return sum(is_word(s) for s in result.maps.source_tokens) >= 2 and clearest_step(result) is not None


def shares(questions: list[dict], answers: list[dict]) -> list[tuple[int, int]]:
    """Per question (its order in `questions`), (right, answered) over every student's answers: dicts with
    "question" and "choice"."""
    right, answered = [0] * len(questions), [0] * len(questions)
    for a in answers:
        i = a["question"]
        if 0 <= i < len(questions):
            answered[i] += 1
            right[i] += a["choice"] == questions[i]["right"]
    return list(zip(right, answered))


# -----------------------------------------------------------------------------
# The quiz as HTML: a phone's (or a student's alone), the projector's chart, the summary's table


def title(phase: str, _: Texts) -> str:
    return _("Quiz before the Lesson") if phase == "before" else _("Quiz after the Lesson")


def questions_html(key: str, phase: str, asked: list[dict], mine: dict[int, int], _: Texts) -> str:
    """The six questions to answer, each choice a button as large as a finger (its tap fires the element's "answer"
    event with the quiz's key, the question and the choice), this student's answers marked; once all are answered,
    one line that says so. `key`: the quiz's id in a class, its phase for a student alone."""
    if len(mine) >= len(asked):
        return (f'<div class="quiz" data-quiz="{html.escape(key)}" data-state="done"><p class="quiz-said">'
                + _("{title}: all six answered, thank you.", title=title(phase, _)) + "</p></div>")
    items = []
    for i, q in enumerate(asked):
        buttons = "".join(
            f'<button class="choice{" chosen" if mine.get(i) == c else ""}" data-question="{i}" data-answer="{c}" '
            f'aria-pressed="{"true" if mine.get(i) == c else "false"}">{html.escape(choice)}</button>'
            for c, choice in enumerate(q["choices"]))
        items.append(f'<li class="quiz-question"><p>{html.escape(q["text"])}</p>'
                     f'<div class="quiz-choices">{buttons}</div></li>')
    said = _("{n} of {total} answered", n=len(mine), total=len(asked))
    return (f'<div class="quiz" data-quiz="{html.escape(key)}" data-state="open"><p class="quiz-banner" role="status">'
            f'{title(phase, _)}</p><ol class="quiz-questions">{"".join(items)}</ol>'
            f'<p class="quiz-said">{said}</p></div>')


def bar(right: int, answered: int, phase: str, _: Texts) -> str:
    if not answered:
        return '<span class="quiz-none">–</span>'
    share = right / answered
    return (f'<span class="quiz-bar {phase}" style="width:{100 * share:.0f}%"></span>'
            f'<span class="quiz-share">{_.percent(share)} ({right}/{answered})</span>')


def chart_html(quizzes: list, _: Texts, ended: bool = False) -> str:
    """The projector's chart: the class's share right per objective, before and after the Lesson (the newest quiz
    of each phase), how many answered, and which quiz is open now (none once the class has `ended`: its summary).
    Empty before any quiz."""
    by_phase = {q.phase: q for q in quizzes}
    if not by_phase:
        return ""
    rows = []
    for i, objective in enumerate(OBJECTIVES):
        cells = []
        for phase in PHASES:
            q = by_phase.get(phase)
            right, answered = q.shares[i] if q is not None and i < len(q.shares) else (0, 0)
            cells.append(f'<td>{bar(right, answered, phase, _)}</td>')
        rows.append(f'<tr><th scope="row">{html.escape(_(objective))}</th>{"".join(cells)}</tr>')
    counts = " · ".join(_.plural("{n} student answered {when}", "{n} students answered {when}", q.students,
                                 when=_("before") if q.phase == "before" else _("after"))
                        for q in by_phase.values())
    opened = None if ended else next((q for q in quizzes if q.open), None)
    now = " · " + _("open now: {title}", title=title(opened.phase, _)) if opened else ""
    head, before, after = _("The class, right per learning objective"), _("before the Lesson"), _("after the Lesson")
    return (f'<div class="quiz-chart"><p class="quiz-chart-title">{head}'
            f'</p><table><thead><tr><th></th><th>{before}</th><th>{after}</th></tr>'
            f'</thead><tbody>{"".join(rows)}</tbody></table><p class="quiz-counts">{counts}{now}</p></div>')


def summary_html(quizzes: list, _: Texts) -> str:
    """The summary's section: each objective's share right before and after, and every question asked."""
    if not quizzes:
        return ""
    asked = "".join(f"<li>{title(q.phase, _)}" + (f" ({_.quoted(html.escape(q.text))})" if q.text else "")
                    + "<ol>" + "".join(f"<li>{html.escape(x['text'])} <b>{html.escape(x['choices'][x['right']])}</b>"
                                       "</li>" for x in q.questions) + "</ol></li>" for q in quizzes)
    return "<h2>" + _("Quiz") + "</h2>" + chart_html(quizzes, _, ended=True) + f"<ul>{asked}</ul>"


def own_html(rounds: dict, _: Texts) -> str:
    """A student alone: the round open now (its questions, or once answered its results), and their own before and
    after per objective: ✓ right, ✗ not."""
    parts = []
    current = next((p for p in reversed(PHASES) if p in rounds), None)
    if current is not None:
        r = rounds[current]
        if len(r["answers"]) < len(r["questions"]):
            return questions_html(current, current, r["questions"], r["answers"], _)
    done = [p for p in PHASES if p in rounds and len(rounds[p]["answers"]) >= len(rounds[p]["questions"])]
    if not done:
        return ""
    named = {"before": _("before the Lesson"), "after": _("after the Lesson")}
    head = "".join(f"<th>{named[p]}</th>" for p in done)
    rows = []
    for i, objective in enumerate(OBJECTIVES):
        cells = "".join("<td>" + ("✓" if rounds[p]["answers"].get(i) == rounds[p]["questions"][i]["right"] else "✗")
                        + "</td>" for p in done)
        rows.append(f'<tr><th scope="row">{html.escape(_(objective))}</th>{cells}</tr>')
    scores = " · ".join(_("{title}: {right} of {total} right", title=title(p, _), total=len(rounds[p]["questions"]),
                          right=sum(rounds[p]["answers"].get(i) == q["right"]
                                    for i, q in enumerate(rounds[p]["questions"]))) for p in done)
    yours = _("Your answers")
    parts.append(f'<div class="quiz-chart quiz-own"><p class="quiz-chart-title">{yours}</p><table><thead>'
                 f'<tr><th></th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
                 f'<p class="quiz-counts">{scores}</p></div>')
    return "".join(parts)
