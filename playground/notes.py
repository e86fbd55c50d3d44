"""The teacher's notes: the whole lesson for one sentence as one HTML file, to print or send after class.

Each step's text, question, answer and its figure with the answer marked: plotly figures drawn by plotly's own
script, written into the file once, so the notes open offline; the model at a glance as its SVG.
"""
from __future__ import annotations

import functools
import html
import re
from pathlib import Path

import plotly.graph_objects as go

from . import downloads
from .figures import glance
from .context import Result
from .i18n import Texts

ROOT = Path(__file__).resolve().parents[1]
STYLE = """body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 24px auto; color: #222; }
section { page-break-inside: avoid; border-top: 1px solid #ccc; padding-top: 12px; margin-top: 24px; }
.question { font-weight: 600; } .answer { background: #fff3e6; padding: 6px 10px; border-radius: 6px; }
"""  # and the page's own style sheet, for the model at a glance


@functools.cache
def plotly_script() -> str:
    from plotly.offline import get_plotlyjs

    return f"<script>{get_plotlyjs()}</script>"


def inline_markdown(text: str) -> str:
    """The lessons' few Markdown marks as HTML: **bold** and `code` (their text is already escaped)."""
    text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", text)


def figure_html(figure) -> str:
    if isinstance(figure, go.Figure):
        return figure.to_html(full_html=False, include_plotlyjs=False, config={"displaylogo": False})
    return figure or ""


def document(result: Result, steps: list, language: str = "en") -> str:
    _ = Texts(language)
    sentence = html.escape(result.text)
    parts = [f"<!doctype html><html lang='{_.language}'><head><meta charset='utf-8'><title>"
             + html.escape(_("Lesson: {sentence}", sentence=result.text)) + "</title>"
             f"<style>{STYLE}{(ROOT / 'assets' / 'style.css').read_text(encoding='utf-8')}</style>{plotly_script()}"
             "</head><body>",
             "<h1>" + _("A lesson in ten steps") + "</h1><p>"
             + _("The sentence: {sentence}", sentence="<b>" + sentence + "</b>") + "<br>"
             + _("Its translation ({pair}): {translation}", pair=html.escape(result.pair),
                 translation="<b>" + html.escape(result.translation.text) + "</b>") + "</p>"]
    for step in steps:
        parts.append("<section><h2>" + _("Step {number}: {title}", number=step.number, title=html.escape(step.title))
                     + f"</h2><p>{inline_markdown(step.text)}</p>")
        if step.question:
            parts.append("<p class='question'>" + _("Question:") + f" {inline_markdown(step.question)}</p>"
                         "<p class='answer'>" + _("Answer:") + f" {inline_markdown(step.answer)}</p>")
        # the glance (the lesson's one HTML figure) as paper shows it: no word to click
        figure = glance.figure(result, printed=True, _=_) if isinstance(step.marked, str) else step.marked
        parts.append(figure_html(figure) + "</section>")
    return "".join(parts) + "</body></html>"


def write(folder, result: Result, steps: list, language: str = "en"):
    """The notes as a file in the page's download folder (pruned like every download), in `language`; returns its
    path."""
    return downloads.write(folder, "lesson-notes", document(result, steps, language), suffix=".html")
