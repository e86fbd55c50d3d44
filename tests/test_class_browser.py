"""A class in Debian's chromium: a teacher's projector and three students' phones at once (four browser contexts, so
four browsers' storage), through the real page: join by the QR code's link, send, vote, reveal, hide, follow, end."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import segno

from conftest import CHROMIUM
from test_browser import ARTIFACTS, open_page
from tools.figure_overlaps import SIZES  # the four sizes a class meets: (width, height, presentation mode)

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="needs Debian's chromium (.ci/run installs it)")]

HOSTILE = ["<script>window.pwned = 1</script>Hi", '<img src=x onerror="window.pwned = 1">', "W" * 2000]


def qr_matrix_of(page) -> list[list[bool]]:
    """The QR code the page draws, read back as its dark modules (segno's SVG: one path of unit moves)."""
    return page.evaluate("""() => {
        const svg = document.querySelector('#class-card .join-qr svg');
        const [, , w, h] = svg.getAttribute('viewBox').split(' ').map(Number);
        const grid = Array.from({length: h}, () => Array(w).fill(false));
        const path = svg.querySelector('path');
        const probe = svg.createSVGPoint();
        for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
            probe.x = x + 0.5; probe.y = y + 0.5; grid[y][x] = path.isPointInStroke(probe) || path.isPointInFill(probe);
        }
        return grid;
    }""")


def segno_matrix(link: str) -> list[list[bool]]:
    qr = segno.make(link, error="m")
    return [[bool(v) for v in row] for row in qr.matrix_iter(scale=1, border=2)]


def translate(page, text: str) -> None:
    before = page.input_value("#translation textarea")
    page.fill("#source-text textarea", text)
    page.click("#translate-button")
    page.wait_for_function("(b) => document.querySelector('#translation textarea').value !== b", arg=before,
                           timeout=30_000)


def wall_text(page, selector: str = "#class-wall") -> str:
    return page.inner_text(selector)


def test_a_teacher_and_three_students_run_a_lesson_together(browser, server):
    teacher = open_page(browser, server, (1280, 720))
    teacher.click("#class-entry button >> nth=0")
    teacher.click("#class-start")
    teacher.wait_for_selector("#class-card .join-link a", timeout=20_000)
    link = teacher.inner_text("#class-card .join-link a")
    assert re.search(r"\?class=[A-Z2-9]{8}$", link), link
    assert qr_matrix_of(teacher) == segno_matrix(link), "the QR code is the link shown beside it"
    code = link.rsplit("=", 1)[1]
    assert f"{code[:4]}-{code[4:]}" in teacher.inner_text("#class-card")

    students = [open_page(browser, link, (390, 844)) for _ in range(3)]
    for i, s in enumerate(students):
        s.wait_for_selector("#class-student", state="visible", timeout=20_000)
        assert s.is_hidden("#class-teacher")
        s.fill("#class-nickname textarea, #class-nickname input", f"Student {i + 1}")
        s.press("#class-nickname textarea, #class-nickname input", "Enter")
    teacher.wait_for_function("() => document.querySelector('#class-card').innerText.includes('3 students joined')",
                              timeout=20_000)

    # send: each student's sentence reaches the projector's wall, the same sentence grouped
    translate(students[0], "I have a red bicycle.")
    translate(students[1], "My sister likes pizza.")
    translate(students[2], "I have a red bicycle.")
    teacher.wait_for_function("() => document.querySelector('#class-wall').innerText.includes('My sister likes pizza.')"
                              " && document.querySelector('#class-wall').innerText.includes('×2')", timeout=20_000)
    wall = wall_text(teacher)
    assert "Student 2" in wall and "Fahrrad" in wall

    # a student who switches sending off keeps their sentences to themselves
    students[2].click("#class-send input")
    translate(students[2], "This one stays on my phone.")
    # hostile texts are shown as text, run nothing and stay inside their card
    for text in HOSTILE:
        translate(students[1], text)
    teacher.wait_for_function("() => document.querySelector('#class-wall').innerText.includes('WWWW')", timeout=20_000)
    assert "This one stays on my phone." not in wall_text(teacher)
    assert "<script>" in wall_text(teacher) and teacher.evaluate("() => window.pwned") is None
    assert teacher.evaluate("() => document.querySelector('#class-wall').scrollWidth <= "
                            "document.querySelector('#class-wall').clientWidth + 1")

    # follow: the teacher shows a student's sentence in every view; following phones show it too
    teacher.locator("#class-wall li", has_text="I have a red bicycle.").locator("button[data-act=open]").click()
    teacher.wait_for_function("() => document.querySelector('#source-text textarea').value === "
                              "'I have a red bicycle.'", timeout=20_000)
    teacher.wait_for_function("() => document.querySelector('#translation textarea').value.includes('Fahrrad')",
                              timeout=30_000)
    for s in students:
        s.wait_for_function("() => document.querySelector('#class-follow').innerText.includes('I have a red bicycle.')",
                            timeout=20_000)
    students[0].click("#class-follow-toggle input")  # switched off: the teacher's next sentence is not followed
    translate(teacher, "We are going to the cinema on Saturday.")
    students[1].wait_for_function("() => document.querySelector('#class-follow').innerText.includes('cinema')",
                                  timeout=20_000)
    assert "cinema" not in students[0].inner_text("#class-student")

    # vote: the Lesson's first question as a poll, one vote per student, changeable until Reveal
    teacher.click("button[role=tab]:has-text('Lesson')")
    teacher.wait_for_selector("#lesson-question", timeout=30_000)
    teacher.click("#class-ask")
    for s in students:
        s.wait_for_selector("#class-vote input", timeout=20_000)
    choices = students[0].locator("#class-vote label")
    assert choices.count() >= 3
    students[0].locator("#class-vote label").nth(0).click()
    students[1].locator("#class-vote label").nth(0).click()
    students[1].wait_for_selector("#class-voted:has-text('Your vote is in')", timeout=20_000)
    students[1].locator("#class-vote label").nth(1).click()  # changed: still one vote
    students[2].locator("#class-vote label").nth(1).click()
    teacher.wait_for_function("() => document.querySelector('#class-poll').innerText.includes('3 votes')",
                              timeout=20_000)
    counts = [int(n) for n in teacher.locator("#class-poll .poll-n").all_inner_texts()]
    assert counts[:2] == [1, 2] and sum(counts) == 3

    # reveal: every phone shows the answer and the class's votes, and votes close
    teacher.click("#class-reveal")
    for s in students:
        s.wait_for_selector("#class-question .poll-answer", timeout=20_000)
        assert s.locator("#class-question .poll-right").count() == 1
    assert students[0].locator("#class-vote input").first.is_disabled()

    # hide: the sentence leaves every screen
    teacher.locator("#class-wall li", has_text="My sister likes pizza.").locator("button[data-act=hide]").click()
    teacher.wait_for_function("() => !document.querySelector('#class-wall').innerText.includes('My sister likes')",
                              timeout=20_000)
    students[1].wait_for_function("() => !document.querySelector('#class-student-wall').innerText"
                                  ".includes('My sister likes')", timeout=20_000)

    # the wall and a student's page at the four sizes (looked at; the wall never scrolls sideways at any of them)
    for name, (width, height, present) in SIZES.items():
        for who, p in (("teacher", teacher), ("student", students[1])):
            p.set_viewport_size({"width": width, "height": height})
            p.evaluate("(on) => tp.present(on)", present)
            p.wait_for_timeout(300)
            p.screenshot(path=str(ARTIFACTS / f"class-{who}-{name}.png"), full_page=True)
            for box in ("#class-wall", "#class-student-wall", "#class-question", "#class-card"):
                assert p.evaluate(f"() => {{ const e = document.querySelector('{box}'); return !e || "
                                  "!e.checkVisibility() || e.scrollWidth <= e.clientWidth + 1; }"), (name, who, box)
    teacher.evaluate("() => tp.present(false)")

    # end: the summary downloads, the class's data is gone, its code stops working
    with teacher.expect_download(timeout=30_000) as download:
        teacher.click("#class-end")
    summary = Path(download.value.path()).read_text(encoding="utf-8")
    assert "I have a red bicycle." in summary and "My sister likes pizza." not in summary  # hidden: left out
    assert "&lt;script&gt;" in summary and "<script>window" not in summary
    assert "3 votes" not in summary and "2 votes" in summary
    for s in students:
        s.wait_for_selector("#class-said:has-text('The class has ended')", timeout=20_000)
    late = open_page(browser, link, (390, 844))
    late.wait_for_selector("#class-said:has-text('No class has this code')", timeout=20_000)
    assert late.is_hidden("#class-student")
    for p in [teacher, late, *students]:
        assert not p.errors, p.errors
        p.context.close()
