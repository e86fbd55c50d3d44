"""A class in Debian's chromium: a teacher's projector and three students' phones at once (four browser contexts, so
four browsers' storage), through the real page: join by the QR code's link, send, vote, reveal, hide, follow, end."""
from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest
import segno

from conftest import CHROMIUM
from test_browser import EXAMPLES, navigated, open_page, open_settings, pick_example, settle, shot
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


def wall_sentences(page) -> list[tuple[str, int]]:
    """The projector's wall as (sentence, how many sent it)."""
    return page.evaluate("""() => [...document.querySelectorAll('#class-wall .wall-list li')].map(li => {
        const source = li.querySelector('.wall-source');
        const count = source.querySelector('.wall-count');
        return [source.firstChild.textContent.trim(), count ? Number(count.innerText.slice(1)) : 1];
    })""")


def box(page, selector: str) -> dict:
    """Where an element is on the screen now (its top and bottom in the window, in CSS pixels)."""
    return page.evaluate(f"""() => {{ const r = document.querySelector('{selector}').getBoundingClientRect();
        return {{top: r.top, bottom: r.bottom, height: r.height}}; }}""")


def small_tap_targets(page, scope: str) -> list[str]:
    """What a finger taps in `scope` (buttons, check boxes' rows, text boxes), visible and under 44 px high."""
    return page.evaluate(f"""() => [...document.querySelectorAll(
            '{scope} button, {scope} label:has(input[type=checkbox]), {scope} textarea, {scope} input[type=text]')]
        .filter(e => e.checkVisibility() && e.getBoundingClientRect().height < 44)
        .map(e => `${{e.tagName}} ${{(e.innerText || e.id || '').slice(0, 30)}} ${{e.getBoundingClientRect().height}}`)""")


def asks_once_more(page, selector: str) -> None:
    """What cannot be undone asks once more in place (assets/page.js): a first click turns the button into its
    question ("Sure? ...") and nothing reaches the server: nothing downloads while the page settles. The caller's
    second click goes through."""
    downloads = []

    def downloaded(download):
        downloads.append(download)

    page.on("download", downloaded)
    page.click(selector)
    assert "?" in page.inner_text(f"{selector} .asking", timeout=5_000)  # "Sure? ...", "Sicher? ..."
    settle(page)
    page.remove_listener("download", downloaded)
    assert not downloads


def ended(teacher, selector: str):
    """Click End (`selector`, asked once more before) and return the summary's download. The class's parts of the
    teacher's page are built again without the class (gr.render), and with them go their timers' events: a tick
    the browser sent as the render was replaced finds no endpoint in Gradio's client ("No endpoint matching N") or
    on the server (its KeyError). That is Gradio replacing a render under a running timer, not an error of the
    page; anything else the page says stays an error."""
    n = len(teacher.errors)
    with teacher.expect_download(timeout=30_000) as download:
        teacher.click(selector)
    teacher.wait_for_selector("#class-teacher", state="detached", timeout=30_000)  # the parts built again, without
    # the class (a tick sent before, answered meanwhile)
    teacher.errors[n:] = [e for e in teacher.errors[n:] if "No endpoint matching" not in e]
    return download.value


def test_a_whole_lesson_with_a_projector_and_three_phones(browser, server):
    """A teacher in presentation mode at 1280x720 and three phones at 390x844 through a whole lesson: join by the
    QR code's link, sentences, a pair switched, an example picked, a reload, ten Lesson steps asked and revealed,
    the students listed, hide, follow, End. Its assertions are the defects a real lesson met."""
    teacher = open_page(browser, server, (1280, 720))
    teacher.evaluate("() => tp.present(true)")
    teacher.click("#class-start-present")
    teacher.wait_for_selector("#class-card .join-link a", timeout=20_000)
    link = teacher.inner_text("#class-card .join-link a")
    assert re.search(r"\?class=[A-Z2-9]{8}$", link), link
    assert qr_matrix_of(teacher) == segno_matrix(link), "the QR code is the link shown beside it"
    code = link.rsplit("=", 1)[1]
    assert f"{code[:4]}-{code[4:]}" in teacher.inner_text("#class-card")
    assert box(teacher, "#class-card .join-code")["height"] >= 0.08 * 720, "the code read from the back of a room"
    # a running class is protected: no Start anywhere on the teacher's page, End where Start was
    assert teacher.is_hidden("#class-start-present") and teacher.is_visible("#class-end-present")
    assert teacher.is_hidden("#class-start")

    students = [open_page(browser, link, (390, 844)) for _ in range(3)]
    for i, s in enumerate(students):
        s.wait_for_selector("#class-student", state="visible", timeout=20_000)
        assert s.is_hidden("#class-teacher") and s.is_hidden("#class-start") and s.is_hidden("#class-start-present")
        s.fill("#class-nickname textarea, #class-nickname input", f"Student {i + 1}")
        s.press("#class-nickname textarea, #class-nickname input", "Enter")
    teacher.wait_for_function("() => document.querySelector('#class-card').innerText.includes('3 students joined')",
                              timeout=20_000)
    teacher.click("#class-students button >> nth=0")  # the list of students unfolds
    teacher.wait_for_function("() => document.querySelectorAll('#class-roster li').length === 3 && "
                              "['Student 1', 'Student 2', 'Student 3'].every(n => document.querySelector("
                              "'#class-roster').innerText.includes(n))", timeout=20_000)
    shot(teacher, "lesson-teacher-students", full_page=False)
    teacher.click("#class-roster button[data-act=lock]")  # everyone is in: closed (a reload below still comes back)
    teacher.wait_for_function("() => document.querySelector('#class-card').innerText.includes('closed to new')",
                              timeout=20_000)
    # a nickname that poses as the teacher, or is taken, is refused in place
    students[2].fill("#class-nickname textarea, #class-nickname input", "Mr Weber (your teacher)")
    students[2].press("#class-nickname textarea, #class-nickname input", "Enter")
    students[2].wait_for_selector("#class-said:has-text('only the teacher')", timeout=20_000)
    assert students[2].input_value("#class-nickname textarea, #class-nickname input") == "Student 3"

    # sentences: only what a student translates with Translate or Enter reaches the wall
    translate(students[0], "I have a red bicycle.")
    translate(students[1], "My sister likes pizza.")
    translate(students[2], "I have a red bicycle.")
    students[1].fill("#source-text textarea", "We play football after school.")
    students[1].press("#source-text textarea", "Enter")
    teacher.wait_for_function("() => document.querySelector('#class-wall').innerText.includes('football')",
                              timeout=30_000)
    before = students[0].input_value("#translation textarea")
    students[0].get_by_label("Language pair").click()  # another pair: translated again, sent nowhere
    students[0].get_by_role("option", name="English → French").click()
    students[0].wait_for_function("(b) => document.querySelector('#translation textarea').value !== b", arg=before,
                                  timeout=30_000)
    before = students[1].input_value("#translation textarea")
    pick_example(students[1], EXAMPLES[3])  # an example picked: translated, sent nowhere
    students[1].wait_for_function("(b) => document.querySelector('#translation textarea').value !== b", arg=before,
                                  timeout=30_000)
    navigated(students[2], students[2].reload)  # a reload: the page opens translated, sends nothing, and is back in the class
    students[2].wait_for_selector("#class-student", state="visible", timeout=30_000)
    students[2].wait_for_function("() => document.querySelector('#translation textarea')?.value.length > 0",
                                  timeout=60_000)
    teacher.wait_for_timeout(4_000)  # three of the teacher's polls
    assert sorted(map(tuple, wall_sentences(teacher))) == sorted([("I have a red bicycle.", 2), ("My sister likes pizza.", 1),
                                                      ("We play football after school.", 1)]), "no card nobody sent"
    assert "DE" in teacher.inner_text("#class-wall .wall-lang >> nth=0")
    # the wall alone, in a window of its own (the same browser: the teacher's class found again), for a second screen
    with teacher.context.expect_page() as opened:
        teacher.click("#class-wall .wall-window a")
    second = opened.value
    second.wait_for_function("() => document.body.classList.contains('wall-only') && document.querySelector("
                             "'#class-wall')?.innerText.includes('We play football')", timeout=60_000)
    wall_box = box(second, "#class-wall-fold")
    assert wall_box["top"] <= 1 and wall_box["height"] >= 700, wall_box  # the whole window
    shot(second, "lesson-wall-window", full_page=False)
    second.close()

    # follow: the teacher shows a student's sentence in every view; following phones show it too
    teacher.locator("#class-wall li", has_text="My sister likes pizza.").locator("button[data-act=open]").click()
    teacher.wait_for_function("() => document.querySelector('#source-text textarea').value === "
                              "'My sister likes pizza.'", timeout=20_000)
    for s in students:
        s.wait_for_function("() => document.querySelector('#class-follow').innerText.includes('My sister likes')",
                            timeout=30_000)

    # ten Lesson steps, each question asked beside it, answered on the phones, revealed with the Lesson's Reveal
    teacher.click("button[role=tab]:has-text('Lesson')")
    teacher.wait_for_selector("#lesson-question", timeout=30_000)
    asked = []
    for number in range(1, 11):
        teacher.wait_for_function("(n) => document.querySelector('#lesson-where')?.innerText.includes(`Step ${n} `)",
                                  arg=number, timeout=30_000)
        if not teacher.inner_text("#lesson-question").strip():
            teacher.click("#lesson-next")
            continue
        teacher.click("#lesson-ask")
        teacher.wait_for_selector("#lesson-poll .poll[data-state=open]", timeout=20_000)
        for who, s in enumerate(students):
            s.wait_for_selector(".question[data-state=open] button.choice", timeout=20_000)
            if number == 1 and who == 0:
                shot(s, "lesson-phone-question", full_page=False)
            question = box(s, "#class-question .question")
            assert question["top"] >= 0 and question["bottom"] <= 844, ("the question in the first screen", question)
            texts = s.locator("#class-question button.choice").all_inner_texts()
            assert len(texts) == len(set(texts)) >= 2 and s.locator("#class-question .poll-question").count() == 1
            s.locator("#class-question button.choice").nth(who % len(texts)).click()
        teacher.wait_for_function("() => document.querySelector('#lesson-poll')?.innerText.includes('3 votes')",
                                  timeout=20_000)
        # Ask, Reveal and the question within one projector screen, the poll beside them, its figure still hidden
        teacher.evaluate("() => tp.toStep()")  # where Back and Next leave the page: the step's top at the window's
        settle(teacher)
        shot(teacher, f"lesson-projector-step-{number}", full_page=False)
        parts = [box(teacher, sel) for sel in ("#lesson-where", "#lesson-question", "#lesson-ask", "#lesson-reveal",
                                               "#lesson-poll")]  # the step's title with its question and votes
        assert all(p["top"] >= 0 and p["bottom"] <= 720 for p in parts), (number, parts)
        assert teacher.evaluate("() => [...document.querySelectorAll('#lesson-plot, #lesson-html')].filter(e => "
                                "e.checkVisibility()).every(e => getComputedStyle(e).filter.includes('blur'))"), \
            "the step's figure waits for Reveal"
        teacher.click("#lesson-reveal")  # one Reveal: the projector's answer and every phone's
        teacher.wait_for_selector("#lesson-answer:has-text('Answer')", timeout=20_000)
        teacher.wait_for_selector("#lesson-poll .poll[data-state=revealed]", timeout=20_000)
        for s in students:
            s.wait_for_selector(".question[data-state=revealed] .verdict", timeout=20_000)  # folded to it
            assert s.locator(".question[data-state=revealed] .poll-answer").is_hidden()  # the box comes back up
            verdict = s.inner_text("#class-question .verdict")
            assert verdict in ("Right!", "Not quite."), verdict
            assert "change it" not in s.inner_text("#class-question")
        asked.append(number)
        teacher.click("#lesson-next")
    assert len(asked) >= 8, asked

    # hide: the sentence leaves every screen
    teacher.locator("#class-wall li", has_text="We play football").locator("button[data-act=hide]").click()
    teacher.wait_for_function("() => !document.querySelector('#class-wall').innerText.includes('We play football')",
                              timeout=20_000)

    # the projector and a phone at the four sizes (looked at; nothing scrolls sideways at any of them)
    for name, (width, height, present) in SIZES.items():
        for who, p in (("teacher", teacher), ("student", students[1])):
            p.set_viewport_size({"width": width, "height": height})
            p.evaluate("(on) => tp.present(on)", present)
            settle(p)
            shot(p, f"class-{who}-{name}")
            for element in ("#class-wall", "#class-student-wall", "#class-question", "#class-card", "#class-roster"):
                assert p.evaluate(f"() => {{ const e = document.querySelector('{element}'); return !e || "
                                  "!e.checkVisibility() || e.scrollWidth <= e.clientWidth + 1; }"), (name, who, element)
    teacher.set_viewport_size({"width": 1280, "height": 720})
    teacher.evaluate("() => tp.present(true)")

    # End: one click asks once more, and the class goes on; the second downloads the summary with the sentences,
    # the questions' steps and the students, and the code stops working
    asks_once_more(teacher, "#class-end-present")
    assert teacher.is_visible("#class-card")
    summary = Path(ended(teacher, "#class-end-present").path()).read_text(encoding="utf-8")
    assert "I have a red bicycle." in summary and "We play football" not in summary  # hidden: left out
    assert all(f"Lesson step {n}," in summary for n in asked) and "“My sister likes pizza.”" in summary
    assert all(f"Student {i}:" in summary for i in (1, 2, 3)) and "3 students joined" in summary
    summary_page = teacher.context.new_page()
    summary_page.set_content(summary)
    shot(summary_page, "lesson-summary")
    summary_page.close()
    assert teacher.is_visible("#class-start-present") and teacher.is_hidden("#class-end-present")
    for s in students:
        s.wait_for_selector("#class-said:has-text('The class has ended')", timeout=20_000)
    late = open_page(browser, link, (390, 844))
    late.wait_for_selector("#class-said:has-text('No class has this code')", timeout=20_000)
    assert late.is_hidden("#class-student")
    for p in [teacher, late, *students]:
        assert not p.errors, p.errors
        p.context.close()


def test_a_phones_class_page_is_built_for_a_finger_and_keeps_hostile_text_as_text(browser, server):
    teacher = open_page(browser, server, (1280, 720))
    teacher.click("#class-entry button >> nth=0")
    teacher.click("#class-start")
    teacher.wait_for_selector("#class-card .join-link a", timeout=20_000)
    link = teacher.inner_text("#class-card .join-link a")
    phone = open_page(browser, link, (390, 844))
    phone.wait_for_selector("#class-student", state="visible", timeout=20_000)
    for text in HOSTILE:
        translate(phone, text)
    teacher.wait_for_function("() => document.querySelector('#class-wall').innerText.includes('WWWW')", timeout=30_000)
    assert "<script>" in wall_text(teacher) and teacher.evaluate("() => window.pwned") is None
    teacher.click("button[role=tab]:has-text('Lesson')")
    teacher.wait_for_selector("#lesson-question", timeout=30_000)
    teacher.click("#lesson-ask")
    phone.wait_for_selector(".question[data-state=open] button.choice", timeout=20_000)
    assert small_tap_targets(phone, "#class-question") == []
    assert small_tap_targets(phone, "#class-student") == []
    phone.click("#class-send input")  # switched off: this one stays on the phone
    translate(phone, "This one stays on my phone.")
    teacher.wait_for_timeout(3_000)
    assert "stays on my phone" not in wall_text(teacher)
    # Take out asks once more; then the phone is told, and its link opened again in the same browser (the class
    # open to new students) does not let it back in
    teacher.click("#class-students button >> nth=0")  # the list of students unfolds
    out = "#class-roster button[data-act=remove]"
    teacher.wait_for_selector(out, timeout=20_000)
    asks_once_more(teacher, out)
    assert phone.is_visible("#class-student")  # still in
    teacher.click(out)
    phone.wait_for_selector("#class-said:has-text('took you out')", timeout=20_000)
    navigated(phone, lambda: phone.goto(link))
    phone.wait_for_selector("#class-said:has-text('took you out')", timeout=30_000)
    assert phone.is_hidden("#class-student")
    asks_once_more(teacher, "#class-end")
    ended(teacher, "#class-end")
    for p in (teacher, phone):
        assert not p.errors, p.errors
        p.context.close()


def back_after_restart(page, restarted: float, timeout_s: float = 60) -> None:
    """A page whose server restarted (at `restarted`, time.monotonic()), opened again: Gradio's page reloads itself
    once it reaches the server again; one that has not 15 s after the restart is reloaded here (as its user would). Waits until the new page shows a
    translation. A reload of ours that meets Gradio's own is cut short by it (net::ERR_ABORTED), which is fine."""
    from playwright.sync_api import Error

    reloaded = False
    while time.monotonic() - restarted < timeout_s:
        try:
            if page.evaluate("() => !window.beforeRestart && "
                             "document.querySelector('#translation textarea')?.value.length > 0"):
                return
        except Error:  # the page is between two documents
            pass
        if not reloaded and time.monotonic() - restarted > 15:
            reloaded = True
            try:
                page.reload()
            except Error as e:
                if "ERR_ABORTED" not in str(e):
                    raise
        page.wait_for_timeout(250)
    raise AssertionError(f"{page.url} did not come back within {timeout_s} s")


def test_the_app_restarted_mid_lesson_brings_the_teacher_and_every_phone_back_to_the_class(browser, translators,
                                                                                           tmp_path):
    """One process on SQLite, restarted (a new process's state: every page and session forgotten) while a poll is
    open: the teacher's page comes back to its place (presentation mode, the class's sentence, the Lesson at its
    step) and three phones to the same class, with the wall, the open poll about that sentence and the votes, and the
    lesson goes on."""
    import socket

    import app
    from playground.classroom.store import Store

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url, database = f"http://127.0.0.1:{port}/", f"sqlite:///{tmp_path / 'classes.sqlite3'}"

    def launched():
        store = Store(database)
        demo = app.build_demo(translators, store=store)
        demo.queue(default_concurrency_limit=2)
        demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                    **app.launch_options(store))
        return demo

    demo = launched()
    teacher = open_page(browser, url, (1280, 720))
    teacher.click("#class-entry button >> nth=0")
    teacher.click("#class-start")
    teacher.wait_for_selector("#class-card .join-link a", timeout=20_000)
    link = teacher.inner_text("#class-card .join-link a")
    phones = [open_page(browser, link, (390, 844)) for _ in range(3)]
    for i, p in enumerate(phones):
        p.wait_for_selector("#class-student", state="visible", timeout=20_000)
        translate(p, f"My cat is {i + 2} years old.")
    teacher.wait_for_function("() => document.querySelector('#class-wall').innerText.includes('is 4 years')",
                              timeout=30_000)
    open_settings(teacher)
    teacher.locator("#present-toggle input").check()  # presentation mode, for the projector
    teacher.wait_for_function("() => document.body.classList.contains('present')")
    translate(teacher, "My sister likes pizza.")  # the class's sentence
    teacher.click("button[role=tab]:has-text('Lesson')")
    teacher.wait_for_selector("#lesson-question", timeout=30_000)
    step = 2  # the first step after the first with a question to ask
    teacher.click("#lesson-next")
    while True:
        teacher.wait_for_function("(n) => document.querySelector('#lesson-where')?.innerText.includes(`Step ${n} `)",
                                  arg=step, timeout=30_000)
        if teacher.inner_text("#lesson-question").strip():
            break
        teacher.click("#lesson-next")
        step += 1
    teacher.wait_for_timeout(2_500)  # a poll of the class or two: the teacher's place is kept with the class
    teacher.click("#lesson-ask")
    for i, p in enumerate(phones[:2]):  # two vote before the restart, the third after it
        p.wait_for_selector(".question[data-state=open] button.choice", timeout=20_000)
        p.locator("#class-question button.choice").nth(i).click()
    teacher.wait_for_function("() => document.querySelector('#lesson-poll')?.innerText.includes('2 votes')",
                              timeout=20_000)

    for p in [teacher, *phones]:
        p.evaluate("() => { window.beforeRestart = true; }")
    demo.close()  # the app stops, and starts again on the same file
    demo, restarted = launched(), time.monotonic()
    try:
        for p in [teacher, *phones]:
            back_after_restart(p, restarted)
        teacher.wait_for_function("() => ['is 2 years', 'is 3 years', 'is 4 years'].every(t => "
                                  "document.querySelector('#class-wall').innerText.includes(t))", timeout=30_000)
        assert "3 students joined" in teacher.inner_text("#class-card")
        # the teacher's place: presentation mode, the class's sentence, the Lesson at its step, with no click
        teacher.wait_for_function("(n) => document.querySelector('#lesson-where')?.innerText.includes(`Step ${n} `)",
                                  arg=step, timeout=30_000)
        assert teacher.evaluate("() => document.body.classList.contains('present')")
        assert teacher.input_value("#source-text textarea") == "My sister likes pizza."
        for p in phones:  # following the teacher: the sentence the open poll asks about
            p.wait_for_function("() => document.querySelector('#class-follow')?.innerText.includes('My sister likes')",
                                timeout=30_000)
        for i, p in enumerate(phones[:2]):  # each phone's own vote, still marked
            p.wait_for_selector(".question[data-state=open] button.chosen", timeout=30_000)
            assert p.locator("#class-question button.choice").nth(i).get_attribute("aria-pressed") == "true"
        phones[2].wait_for_selector(".question[data-state=open] button.choice", timeout=30_000)
        phones[2].locator("#class-question button.choice").nth(0).click()
        teacher.wait_for_function("() => document.querySelector('#lesson-poll')?.innerText.includes('3 votes')",
                                  timeout=30_000)
        teacher.click("#lesson-reveal")
        for p in phones:
            p.wait_for_selector(".question[data-state=revealed] .verdict", timeout=30_000)
        for p in [teacher, *phones]:
            assert not [e for e in p.errors if "Connection" not in e], p.errors
            p.context.close()
    finally:
        demo.close()


def test_the_quiz_before_and_after_with_a_projector_and_three_phones_in_german(browser, server, translators):
    """The browsers' language German: the teacher starts the quiz before the Lesson, three phones answer it, the
    projector's chart shows each question's share right as they voted; then after the Lesson, and the summary
    keeps both. The right answers are the model's own, computed here as the server does (the same sentence)."""
    from playground import context, quiz

    teacher = open_page(browser, server, (1280, 720), locale="de-DE")
    sentence = teacher.input_value("#source-text textarea")
    questions = quiz.questions(context.run(translators["en-de"], "en-de", sentence), "de")
    teacher.click("#class-entry button >> nth=0")
    teacher.click("#class-start")
    teacher.wait_for_selector("#class-card .join-link a", timeout=20_000)
    link = teacher.inner_text("#class-card .join-link a")
    students = [open_page(browser, link, (390, 844), locale="de-DE") for _ in range(3)]
    for s in students:
        s.wait_for_selector("#class-student", state="visible", timeout=20_000)
    teacher.click("button[role=tab]:has-text('Lektion')")
    expected = {}
    for phase, label, picks in (("before", "Quiz vor der Lektion", lambda who, q: who % len(q.choices)),
                                ("after", "Quiz nach der Lektion", lambda who, q: q.right)):
        teacher.click(f"#quiz-{phase}")
        teacher.wait_for_selector(f"#quiz .quiz-chart:has-text('{label}')", timeout=20_000)
        for who, s in enumerate(students):
            s.wait_for_selector(f"#class-question .quiz[data-state=open]:has-text('{label}')", timeout=30_000)
            s.wait_for_function("() => { const top = document.querySelector('#class-question .quiz')"
                                ".getBoundingClientRect().top; return top >= 0 && top < 844; }",
                                timeout=5_000)  # the phone scrolls to it: it arrives in the first screen
            for i, q in enumerate(questions):
                assert s.locator(f"#class-question button[data-question='{i}']").all_inner_texts() == q.choices
                s.locator(f"#class-question button[data-question='{i}'][data-answer='{picks(who, q)}']").click()
                if i < len(questions) - 1:  # the last answer folds the quiz into one line
                    s.wait_for_selector(f"#class-question button[data-question='{i}'].chosen", timeout=20_000)
            s.wait_for_selector("#class-question .quiz[data-state=done]:has-text('alle sechs beantwortet')",
                                timeout=20_000)
        expected[phase] = [f"{sum(picks(w, q) == q.right for w in range(3))}/3" for q in questions]
        teacher.wait_for_function("(n) => (document.querySelector('#quiz')?.innerText.match(/\\/3\\)/g) || [])"
                                  ".length === n", arg=6 * len(expected), timeout=30_000)  # every answer counted
        assert f"3 haben {'vorher' if phase == 'before' else 'nachher'} geantwortet" in teacher.inner_text("#quiz")
    shown = re.findall(r"\((\d+/\d+)\)", teacher.inner_text("#quiz"))
    assert shown == [s for pair in zip(expected["before"], expected["after"]) for s in pair]
    assert "Aufmerksamkeitsgewicht" in teacher.inner_text("#quiz")  # the objectives, in German
    shot(teacher, "quiz-projector-de")
    shot(students[0], "quiz-phone-de", full_page=False)
    asks_once_more(teacher, "#class-end")
    summary = Path(ended(teacher, "#class-end").path()).read_text(encoding="utf-8")
    assert "<h2>Quiz</h2>" in summary and re.findall(r"\((\d+/\d+)\)", summary)[:12] == shown
    for p in [teacher, *students]:
        assert not p.errors, p.errors
        p.context.close()
