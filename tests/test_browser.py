"""The real page in Debian's chromium, driven by Playwright: click through the views with the network cut off."""
from __future__ import annotations

import json
import os
import re
import shutil
from urllib.parse import urlparse

import pytest

import app
from conftest import CHROMIUM, ROOT
from playground.figures.glance import piece as lesson_piece
from playground import i18n, registry
from tools.figure_overlaps import SETTLED, collisions

ARTIFACTS = ROOT / "tests" / "artifacts"
LEAVES = re.compile(r"^(?!(https?://(127\.0\.0\.1|localhost)[:/]|data:|blob:|about:))")  # any address but this machine
EXAMPLES = json.loads((ROOT / "assets" / "examples.json").read_text())

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="needs Debian's chromium (.ci/run installs it)")]


def open_page(browser, url: str, size: tuple[int, int] = (1400, 1000), locale: str | None = None):
    """A fresh page on `url` (a window of `size`, the browser's language `locale`) in which every request that
    leaves this machine is refused and recorded; returned once the page has made its opening translation (the load
    event), so no later click races with it."""
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, locale=locale)
    page = context.new_page()
    page.blocked, page.dialogs = [], []

    def refuse(route):
        page.blocked.append(route.request.url)
        route.abort()

    # only what would leave the machine is intercepted (a pattern the driver matches): an intercepted request is held
    # by this process, which holds the page's event stream (open while a class's page polls) and its answers
    page.route(LEAVES, refuse)
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    page.errors = []  # what the console says went wrong (a refused request is ours: blocked, not an error)
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error"
            and "net::ERR_FAILED" not in m.text and "Failed to load resource" not in m.text else None)
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(url)
    page.wait_for_selector("#translate-button", timeout=30_000)
    page.wait_for_function("() => document.querySelector('#translation textarea')?.value.length > 0", timeout=60_000)
    return page


def navigated(page, go) -> None:
    """Leave the page (`go`: a reload, another address) and wait for the new one to load: what the old page's open
    requests say as it goes (a fetch aborted, Gradio's "Connection errored out") is its leaving, not an error."""
    n = len(page.errors)
    go()
    page.wait_for_load_state()
    page.errors[n:] = [e for e in page.errors[n:] if "AbortError" not in e and "Connection errored out" not in e]


@pytest.fixture
def page(browser, server):
    page = open_page(browser, server)
    yield page
    page.context.close()


# Gradio shows the translation box's status tracker while the event runs and hides it when the outputs land
WATCH_EVENT = """() => {
    const tracker = document.querySelector('#translation [data-testid=status-tracker]');
    window.eventBusy = false; window.eventDone = false;
    new MutationObserver(records => {  // the old values too: shown and hidden again within one batch counts
        if (records.some(r => !(r.oldValue || '').includes('hide')) || !tracker.classList.contains('hide'))
            window.eventBusy = true;
        if (window.eventBusy && tracker.classList.contains('hide')) window.eventDone = true;
    }).observe(tracker, {attributes: true, attributeFilter: ['class'], attributeOldValue: true});
}"""


IDLE = "() => document.querySelector('#translation [data-testid=status-tracker]').classList.contains('hide')"


def click_translate(page) -> str:
    """Click Translate and wait until that translation has landed (the page already shows one); returns it. A
    translation still running (another pair chosen just before) lands first, so that its end is not taken for this
    one's."""
    page.wait_for_function(IDLE, timeout=60_000)
    page.evaluate(WATCH_EVENT)
    page.click("#translate-button")
    page.wait_for_function("() => window.eventDone", timeout=60_000)
    return page.locator("#translation textarea").input_value()


def shot(page, name: str, full_page: bool = True) -> None:
    """The page photographed as tests/artifacts/{name}.png, for a person to look at, when the run asks for it
    (TP_SHOTS=1: docs/development.md); no assertion reads a photograph."""
    if os.environ.get("TP_SHOTS") == "1":
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full_page)


def pick_example(page, example: str) -> None:
    """Choose an example from the menu under the text box (the page translates it at once)."""
    page.locator("#examples input").click()
    page.get_by_role("option", name=example, exact=True).click()


def translate_example(page, example: str) -> str:
    from playwright.sync_api import expect

    page.wait_for_function(IDLE, timeout=60_000)
    page.evaluate(WATCH_EVENT)
    pick_example(page, example)
    expect(page.locator("#source-text textarea")).to_have_value(example)
    page.wait_for_function("() => window.eventDone", timeout=60_000)
    return page.locator("#translation textarea").input_value()


def open_view(page, *labels: str) -> None:
    """Open a view: its top-level tab, then its tab inside that group. A tab that a narrow screen shows on a line of
    its own (gradio's overflow, which the page's style lays out in view) is clicked there; one folded into a "More
    tabs" menu (⋯) is chosen there."""
    for level, label in enumerate(labels):
        tab = page.get_by_role("tab", name=label, exact=True)
        if level:  # a group's tabs come in once the group is built for this page (its first opening)
            tab.or_(page.locator(".overflow-dropdown").get_by_role("button", name=label, exact=True)).first.wait_for(
                state="attached", timeout=30_000)
        if tab.count() and tab.first.is_visible():
            tab.first.click()
            continue
        beyond = page.locator(".overflow-dropdown:visible").get_by_role("button", name=label, exact=True)
        if beyond.count():
            beyond.first.click()
            continue
        menus = page.locator(".overflow-menu:visible > button")
        (menus.last if level else menus.first).click()  # a group's inner tabs come after the top level
        page.locator(".overflow-dropdown:visible").get_by_role("button", name=label, exact=True).click()


def open_settings(page) -> None:
    """Unfold decoding, presentation mode and the link (folded under the text box until asked for)."""
    if not page.locator("#present-toggle").is_visible():
        page.get_by_text("Decoding, presentation mode, link").click()
        page.locator("#present-toggle").wait_for(state="visible")


# Problems with what is on screen: a plotly figure, frame, table or SVG wider than its box, or a box around one that
# scrolls sideways (only the glance's picture may, on a phone, where it says so), and figure text under 11 px as
# drawn (presentation mode's zoom included)
FITS = """() => {
  const shown = e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
  const out = [];
  for (const e of document.querySelectorAll('.js-plotly-plot .main-svg:first-of-type, iframe, table, svg')) {
    if (!shown(e) || e.closest('.glance-scroll, #js-plotly-tester') || e.closest('button, .icon-button-wrapper, label, .modebar, [role=listbox]')) continue;
    const box = e.closest('.block') || e.parentElement;
    const w = e.getBoundingClientRect().width, bw = box.getBoundingClientRect().width;
    if (w > bw + 1) out.push(['wide', e.tagName, e.closest('[id]')?.id, Math.round(w), Math.round(bw)]);
  }
  for (const a of document.querySelectorAll('.block, .html-container, .prose, div')) {
    const o = getComputedStyle(a).overflowX;
    if ((o === 'auto' || o === 'scroll') && shown(a) && a.scrollWidth > a.clientWidth + 1 && !a.matches('.glance-scroll')
        && a.querySelector('.js-plotly-plot, table, svg'))
      out.push(['scrolls', a.className.slice(0, 40), a.closest('[id]')?.id, a.scrollWidth, a.clientWidth]);
  }
  let small = 0, smallest = 99, ex = '';
  for (const t of document.querySelectorAll('.js-plotly-plot text')) {
    if (!shown(t) || !t.textContent.trim()) continue;
    const fs = parseFloat(getComputedStyle(t).fontSize) * (parseFloat(getComputedStyle(document.querySelector('.gradio-container')).zoom) || 1);
    if (fs < 11) { small++; if (fs < smallest) { smallest = fs; ex = t.textContent.slice(0, 20); } }
  }
  if (small) out.push(['small text', small, smallest, ex]);
  return out;
}"""
# A button another element covers (its middle is not the button when the page is asked what lies there)
COVERED = """() => [...document.querySelectorAll('button')].filter(b => {
  const r = b.getBoundingClientRect();
  // Gradio's tab bar keeps a flat copy to measure; a button whose top is within 2 px of the window's bottom is not in view
  if (r.width < 4 || r.height < 4 || r.bottom < 0 || r.top > innerHeight - 2
      || !b.checkVisibility({opacityProperty: true, visibilityProperty: true})) return false;
  const at = document.elementFromPoint(r.left + r.width / 2, Math.min(r.top + r.height / 2, innerHeight - 1));
  return at && !b.contains(at) && !at.contains(b);
}).map(b => b.textContent.trim().slice(0, 30))"""
# A figure's title as read: a wrapped title's lines (tspans) joined by a space
TITLE = ("(s) => { const e = document.querySelector(s); if (!e) return '';"
         " const lines = [...e.querySelectorAll('tspan.line')].map(t => t.textContent); return lines.length ? lines.join(' ') : e.textContent; }")


def settle(page, timeout: int = 60_000) -> None:
    """Wait for the page's signal that it has settled (tools/figure_overlaps.py's SETTLED)."""
    page.wait_for_function(SETTLED, timeout=timeout)


VIEWS = [(registry.GROUP_LABELS[e.group], e.label) if e.group else (e.label,)  # every tab, as the registry says
         for e in registry.VIEWS if e.inside is None]


def in_view(page, selector: str) -> bool:
    """Whether the element is drawn whole inside the window, unscrolled."""
    return page.evaluate("(s) => { const r = document.querySelector(s).getBoundingClientRect();"
                         " return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight; }", selector)


def come_into_view(page, selectors: list[str], timeout: int = 10_000) -> None:
    """Wait (at most `timeout` ms) until every element is drawn whole inside the window: plotly lays a figure out and
    the page scrolls to it after the event has settled, later on a loaded machine. The caller asserts in_view."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function("(ss) => ss.every((s) => { const r = document.querySelector(s).getBoundingClientRect();"
                               " return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight; })",
                               arg=selectors, timeout=timeout)
    except PlaywrightTimeout:
        pass


SENTENCE_IN_PIECES = "My sister Oluwaseun has two brothers and I'm 12."  # a name and a number cut into pieces
# The screens a class meets, each swept on a page of its own: its window, presentation mode, the browser's language,
# whether each Lesson answer is revealed and the pieces' notation read on every screen, and the sentence swept (None:
# the opening example)
SCREENS = {"projector-present": ((1280, 720), True, "en", False, None),
           "projector": ((1280, 720), False, "en", True, SENTENCE_IN_PIECES),
           "laptop": ((1440, 900), False, "en", False, None),
           "laptop-de": ((1440, 900), False, "de", False, None),
           "phone": ((390, 844), False, "en", False, None)}
FAILED = ("(word) => [...document.querySelectorAll('[data-testid=status-tracker]')].filter(e => "
          "e.textContent.includes(word) && e.getClientRects().length).length")  # a view's box says it failed
FAILED_SAYS = {"de": "Fehler"}  # what gradio's status tracker says in that language


def screen_problems(page) -> list:
    """What is wrong with the screen as drawn: too wide, scrolls sideways, text too small, a button covered, texts of a
    figure on one another or cut by its edge."""
    return page.evaluate(FITS) + [("covered", b) for b in page.evaluate(COVERED)] + collisions(page)


def sweep(page, name: str, language: str, pieces: bool, layout: bool = True) -> dict:
    """Every view and inner tab, then every Lesson step (from the step it shows to the far end, Next or Back): what
    is wrong on each screen (screen_problems, where `layout`), and where `pieces`, with each Lesson answer revealed,
    any piece or count written otherwise than the page's notation (shown_problems). Photographed as
    tests/artifacts/{name}_*.png."""
    _ = i18n.Texts(language)
    found = {}

    def look(where: str, reveal: bool = False) -> None:
        if layout and (problems := screen_problems(page)):
            found[where] = problems
        if pieces and reveal and page.locator("#lesson-reveal").is_visible():
            page.click("#lesson-reveal")
            page.wait_for_function("() => document.querySelector('#lesson-answer')?.textContent.includes('Answer')")
            settle(page)
        if pieces and (wrong := shown_problems(page)):
            found[f"{where}: pieces"] = wrong[:5]
        if language in FAILED_SAYS:
            assert page.evaluate(FAILED, FAILED_SAYS[language]) == 0, f"{where} failed in {language}"
        shot(page, f"{name}_{where}".replace(" ", "_").lower())

    for path in VIEWS:
        open_view(page, *map(_, path))
        settle(page)
        look("_".join(path), reveal=path == ("Lesson",))
        if path == ("Attention", "Heatmaps") and language == "de":
            title = page.locator("#attention-plot .gtitle").first.text_content()
            assert "Schicht" in title and "layer" not in title, title
    open_view(page, _("Lesson"))
    settle(page)
    start = step_shown(page)
    assert start in (1, 10), page.inner_text("#lesson-where")  # where the last sweep left it
    for n in range(2, 11) if start == 1 else range(9, 0, -1):
        lesson_to(page, n, language)
        look(f"lesson {n}", reveal=True)
    return found


@pytest.mark.parametrize("screen", list(SCREENS))
def test_every_view_and_lesson_step_fits_its_box_at_projector_laptop_and_phone_sizes(browser, server, screen):
    """Every view, inner tab and Lesson step opened at a projector's size (with and without presentation mode), a
    laptop's (in English and as a German browser opens it) and a phone's: nothing on screen is wider than its box or
    scrolls sideways, no button is covered, no two texts of a figure cover each other and none is cut by the figure's
    edge (tools/figure_overlaps.py), and the console logs no error. On a laptop or a projector the first screen holds
    the sentence, its translation and the model at a glance (on a phone it is the next thing down). In German every
    tab is German, no view fails, and Attention's title says "Schicht". On the projector, swept on a sentence whose
    name and number are cut into pieces, every view and every Lesson step with its answer revealed writes no "▁",
    "<s>", "</s>" and counts no layer, head, step, position or piece from 0."""
    (width, height), presenting, language, pieces, sentence = SCREENS[screen]
    _ = i18n.Texts(language)
    page = open_page(browser, server + ("?present=1" if presenting else ""), (width, height),
                     locale=None if language == "en" else f"{language}-{language.upper()}")
    try:
        page.wait_for_selector(".glance svg", timeout=30_000)
        name = f"{width}x{height}" + ("_present" if presenting else "") + ("" if language == "en" else f"_{language}")
        ARTIFACTS.mkdir(exist_ok=True)
        shot(page, f"first_screen_{name}", full_page=False)
        if width >= 1280 and not presenting:
            for selector in ("#source-text textarea", "#translation textarea", "#translate-button", ".glance svg",
                             ".glance-words"):
                assert in_view(page, selector), (name, selector)
            assert page.get_by_role("tab").all_text_contents() == [_(label) for label in (  # all on one line
                "At a glance", "Lesson", "Step by step", "Attention", "Beyond attention", "Training", "The model")]
        if language == "de":
            assert "Dein Satz" in page.inner_text(".glance-words") or page.locator(".glance svg text",
                                                                                  has_text="Dein Satz").count()
        if sentence:  # swept on a sentence of its own
            page.fill("#source-text textarea", sentence)
            click_translate(page)
        found = sweep(page, name, language, pieces)
        assert not found, found
        assert not page.dialogs and not page.blocked
        assert not page.errors, page.errors[:5]  # the console stays clean through every view and step
    finally:
        page.context.close()


# What a class reads, in one notation (playground/pieces.py): no sentencepiece mark, no <s> or </s>, nothing
# counted from 0. Shown text only: the open tab's words, its figures' and frames' text
RAW = re.compile(r"▁|<s>|</s>|&lt;/?s&gt;|\b(?:[Ll]ayer|[Hh]ead|[Ss]tep|[Pp]osition|[Dd]imension|L|H) ?0\b")
SHOWN_TEXT = """() => [...document.querySelectorAll('.tabitem:not([style*="display: none"])')]
  .filter(e => e.getClientRects().length).map(e => e.innerText + ' ' +
    [...e.querySelectorAll('svg text')].map(t => t.textContent).join(' | ')).join(' ')"""


def shown_problems(page) -> list[str]:
    """Raw pieces or 0-based counts in what the open tab shows (bertviz's frame included), and axis labels of
    pieces counted from 0 ("0 A")."""
    text = page.evaluate(SHOWN_TEXT)
    for frame in page.frames[1:]:
        try:
            text += " " + frame.evaluate("() => document.body.innerText + ' ' + [...document.querySelectorAll('svg > text, select option')].map(t => t.textContent).join(' ')")
        except Exception:  # a frame that went away while we read
            pass
    found = [m.group(0) for m in RAW.finditer(text)]
    found += re.findall(r"(?:^| \| )0 [^\d\s|][^|]{0,12}", text)  # an axis label of pieces from 0: "0 A"
    return found


FIFTEEN_WORDS = "A young man in a red jacket is riding his bicycle past an old stone church today."


def test_click_to_every_view_for_fifteen_words(page):
    """Times click -> translation, heatmaps and bertviz drawn; written to tests/artifacts/timings.json."""
    import time

    open_view(page, "Attention", "bertviz")
    page.frame_locator("#bertviz iframe").locator("svg text").first.wait_for(state="attached", timeout=60_000)
    page.locator("#source-text textarea").fill(FIFTEEN_WORDS)  # (the opening translation's page is drawn first)
    t0 = time.perf_counter()
    click_translate(page)  # the page opened translated: wait for this click's bertviz page, not that one
    page.frame_locator("#bertviz iframe").locator("svg text", has_text="church").first.wait_for(state="attached",
                                                                                               timeout=60_000)
    seconds = time.perf_counter() - t0
    open_view(page, "Attention", "Heatmaps")
    page.wait_for_selector("#attention-plot .heatmaplayer", timeout=30_000)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "timings.json").write_text(json.dumps({"click_to_all_views_s": seconds, "words": 15}))
    page.hover("#attention-plot .js-plotly-plot")
    titles = page.locator("#attention-plot .modebar-btn").evaluate_all("els => els.map(e => e.getAttribute('data-title'))")
    assert "Download plot as a PNG" in titles  # plotly's camera button


def test_translate_an_example_and_see_every_view(page):
    translation = translate_example(page, EXAMPLES[1])
    assert len(translation.split()) >= 3
    open_view(page, "Step by step")
    page.wait_for_selector(".js-plotly-plot .heatmaplayer", timeout=30_000)
    shot(page, "steps")

    open_view(page, "Attention", "Heatmaps")
    page.wait_for_selector("#attention-plot .heatmaplayer", timeout=30_000)
    labels = page.locator("#attention-plot .xtick text").all_text_contents()
    assert any(t.endswith(" end") for t in labels)  # the end mark written as the glance writes it, index-prefixed
    page.get_by_text("All heads of a layer").click()
    page.wait_for_function("() => document.querySelectorAll('#attention-plot .heatmaplayer image').length >= 4")
    shot(page, "attention")

    open_view(page, "Attention", "bertviz")
    frame = page.frame_locator("#bertviz iframe")
    frame.locator("svg text").first.wait_for(timeout=30_000)
    drawn = frame.locator("svg text").all_text_contents()
    assert any("blue" in t for t in drawn) or any("girls" in t for t in drawn), drawn[:20]
    layers = [t for t in frame.locator("select option").all_text_contents() if t.isdigit()]  # the layer menu
    assert layers == [str(n) for n in range(1, len(layers) + 1)] and layers  # counted from 1, as the page counts
    shot(page, "bertviz")
    assert all(urlparse(u).hostname not in ("127.0.0.1", "localhost") for u in page.blocked)
    assert not page.dialogs


def test_enter_and_an_example_translate_at_once_and_an_empty_box_is_answered_in_place(page, translators):
    box, shown = page.locator("#source-text textarea"), page.locator("#translation textarea")
    landed = "(want) => document.querySelector('#translation textarea').value === want"
    box.fill("A horse runs on the beach.")
    box.press("Enter")  # translates
    want = translators["en-de"].translate("A horse runs on the beach.").text
    page.wait_for_function(landed, arg=want, timeout=60_000)
    box.press("End")
    box.press("Shift+Enter")  # a new line, no translation
    assert box.input_value() == "A horse runs on the beach.\n" and shown.input_value() == want
    example = EXAMPLES[4]
    pick_example(page, example)  # an example is translated when chosen
    page.wait_for_function(landed, arg=translators["en-de"].translate(example).text, timeout=60_000)
    box.fill("   ")
    page.click("#translate-button")
    page.wait_for_function(landed, arg=app.EMPTY, timeout=60_000)
    assert not page.locator(".toast-body").count() and not page.dialogs  # no error badge, no toast


def test_new_sample_and_the_comparison_each_leave_the_translation_box_on_this_sentence(page, translators):
    tr, text = translators["en-de"], "A small boy plays with a red ball."
    landed = "(want) => document.querySelector('#translation textarea').value === want"
    page.locator("#source-text textarea").fill(text)
    open_settings(page)
    page.get_by_text("Random sampling", exact=True).click()
    page.click("#translate-button")
    page.wait_for_function(landed, arg=tr.translate(text, strategy="sample", seed=0).text, timeout=60_000)
    page.click("#new-sample")  # the next seed, translated at once
    page.wait_for_function(landed, arg=tr.translate(text, strategy="sample", seed=1).text, timeout=60_000)
    page.wait_for_function("() => !document.querySelector('#translation.stale')", timeout=10_000)  # old: unmarked
    page.get_by_text("Greedy", exact=True).click()
    other = "Two women walk along a quiet road."
    page.locator("#source-text textarea").fill(other)
    page.get_by_role("button", name="Compare greedy, sampling and beam search").click()
    page.wait_for_function(landed, arg=tr.translate(other).text, timeout=60_000)  # the box follows the comparison


def test_a_tab_opened_after_a_translation_draws_that_translation(page):
    """Translate on Step by step; Attention, One head and bertviz were not drawn for it until they are opened."""
    page.locator("#source-text textarea").fill("A zebra eats grass beside a yellow tractor.")
    click_translate(page)
    open_view(page, "Attention", "Heatmaps")
    page.wait_for_function("() => [...document.querySelectorAll('#attention-plot .xtick text')]"
                           ".some(e => e.textContent.includes('tractor'))", timeout=30_000)
    open_view(page, "Attention", "bertviz")
    page.frame_locator("#bertviz iframe").locator("svg text", has_text="tractor").first.wait_for(state="attached",
                                                                                                timeout=30_000)
    open_view(page, "Attention", "One head")  # its open inner tab, One head (never drawn before)
    page.wait_for_function("() => document.querySelector('#inside-steps')?.textContent.includes('Equal to')",
                           timeout=30_000)
    assert not page.blocked and not page.dialogs  # bertviz's scripts came from this server


def test_a_view_built_for_its_visitor_draws_keeps_its_settings_and_is_each_visitors_own(browser, server):
    """Heatmaps is not on the page until a visitor opens its tab: then it is built for that visitor, drawn at once,
    redrawn by their own translations and settings, keeps its settings when they leave and come back; a second
    visitor's Heatmaps is their own."""
    import urllib.request
    config = json.loads(urllib.request.urlopen(server.rstrip("/") + "/config").read())
    on_page = {c["props"].get("elem_id") for c in config["components"]}
    assert "looks-group" in on_page and not on_page & {"attention-tab", "attention-plot"}
    ticks = "() => [...document.querySelectorAll('#attention-plot .xtick text')].map(e => e.textContent).join(' ')"
    title = "() => document.querySelector('#attention-plot .gtitle')?.textContent || ''"
    first, second = open_page(browser, server), open_page(browser, server)
    try:
        assert first.locator("#attention-plot").count() == 0  # not built before it is opened
        for visitor, animal in ((first, "dog"), (second, "cat")):  # each a piece of its own
            visitor.locator("#source-text textarea").fill(f"A {animal} walks beside a yellow tractor.")
            click_translate(visitor)
            open_view(visitor, "Attention", "Heatmaps")
            visitor.wait_for_function(f"() => ({ticks})().includes('{animal}')", timeout=30_000)
        first.locator("#attention-tab").get_by_label("Encoder self").check()  # its own settings
        first.wait_for_function(f"() => ({title})().startsWith('encoder self-attention')", timeout=30_000)
        first.locator("#source-text textarea").fill("A horse walks beside a yellow tractor.")
        click_translate(first)  # a translation while the tab is open redraws it, with its settings
        first.wait_for_function(f"() => ({ticks})().includes('horse')", timeout=30_000)
        assert first.evaluate(title).startswith("encoder self-attention")
        open_view(first, "At a glance")
        open_view(first, "Attention")  # back: the group's open tab, as it was left
        first.wait_for_function(f"() => ({ticks})().includes('horse')", timeout=30_000)
        assert first.locator("#attention-tab").get_by_label("Encoder self").is_checked()
        assert "cat" in second.evaluate(ticks) and "horse" not in second.evaluate(ticks)
        assert not second.evaluate(title).startswith("encoder self-attention")
        assert not first.errors and not second.errors, first.errors + second.errors
    finally:
        first.context.close()
        second.context.close()


def test_translate_and_a_tab_clicked_at_once_always_end_on_the_newest_translation(page, translators):
    """Translate, then at once another tab, round after round without waiting: whatever order the answers come back
    in, the page ends on the newest translation and the open tab shows it (a late answer for an older one is
    dropped)."""
    animals = ["zebra", "camel", "horse", "goat", "elephant", "donkey"]
    tabs = [("Attention", "Heatmaps"), ("Attention", "One head"), ("Step by step",), ("Attention", "One head"),
            ("Step by step",), ("Attention", "Heatmaps")]
    for animal, tab in zip(animals, tabs):
        page.locator("#source-text textarea").fill(f"A {animal} walks beside a yellow tractor.")
        page.click("#translate-button")
        open_view(page, *tab)  # no wait: the translation is still running
    ticks = "() => [...document.querySelectorAll('#attention-plot .xtick text')].map(e => e.textContent).join(' ')"
    page.wait_for_function(f"() => ({ticks})().includes('donkey')", timeout=120_000)
    page.wait_for_timeout(3000)  # every answer still on its way lands by now: none may bring an older sentence
    shown = page.evaluate(ticks)
    assert "donkey" in shown and not any(a in shown for a in animals[:-1]), shown
    newest = translators["en-de"].translate("A donkey walks beside a yellow tractor.").text
    assert page.locator("#translation textarea").input_value() == newest


def test_an_imported_opus_mt_model_translates_and_its_views_draw_and_compare_models_shows_both(browser, with_imported):
    """A tiny random Marian model imported beside the shipped en-de: choose it, translate, open Attention and What
    the model used; then Compare models on en-de against it."""
    import app
    from conftest import serving

    translators, problems = app.load_translators(with_imported, "cpu")
    assert not problems
    with serving(translators) as url:
        page = open_page(browser, url)
        page.get_by_label("Language pair").click()
        page.get_by_role("option", name="English → German (OPUS-MT)").click()
        page.locator("#source-text textarea").fill("a dog runs in the park")
        click_translate(page)
        open_view(page, "Attention", "Heatmaps")
        page.wait_for_function("() => [...document.querySelectorAll('#attention-plot .xtick text')]"
                               ".some(e => e.textContent.includes('park'))", timeout=30_000)  # its own pieces
        open_view(page, "Beyond attention", "What the model used")
        page.wait_for_function("() => document.querySelector('#used-summary')?.textContent.includes('Output piece 1')",
                               timeout=60_000)
        page.get_by_label("Language pair").click()
        page.get_by_role("option", name="English → German", exact=True).click()
        page.locator("#source-text textarea").fill("A dog runs in the park.")
        click_translate(page)
        open_view(page, "The model", "Compare models")  # it opens on an earlier epoch: the imported model is chosen
        page.wait_for_function("() => (document.querySelector('#compare-diff')?.textContent || '').includes('after epoch')",
                               timeout=60_000)
        page.locator("#compare-other input").click()
        page.get_by_role("option", name="English → German (OPUS-MT)", exact=True).click()
        page.wait_for_function("() => { const t = document.querySelector('#compare-diff')?.textContent || '';"
                               " return t.trim().startsWith('English → German:') && t.includes('(OPUS-MT)'); }",
                               timeout=60_000)  # this translation (en-de) first, the imported model's second
        page.wait_for_function("() => document.querySelectorAll('#compare-plot .xtick text').length > 0",
                               timeout=30_000)
        shot(page, "compare_models")
        assert not page.blocked and not page.dialogs
        page.context.close()


def test_bertviz_model_view_and_ablation(page):
    translate_example(page, EXAMPLES[4])
    open_view(page, "Attention", "bertviz")
    page.get_by_text("Model view").click()
    frame = page.frame_locator("#bertviz iframe")
    frame.locator("svg text", has_text="Layer").first.wait_for(timeout=30_000)  # the grid's row heading
    numbers = [t for t in frame.locator("svg > text").all_text_contents() if t.isdigit()]  # its axes
    assert numbers and "0" not in numbers and "1" in numbers  # layers and heads counted from 1, as the page counts
    open_view(page, "Beyond attention", "Head ablation")
    boxes = page.locator("#ablation-heads label")
    boxes.first.wait_for(timeout=30_000)  # the tab draws its head list when it is opened
    for i in range(min(boxes.count(), 64)):
        if boxes.nth(i).inner_text().startswith("Cross, layer"):
            boxes.nth(i).click()
    page.click("#ablate-button")
    page.wait_for_selector("#ablation .diff", timeout=60_000)
    assert "struck out" in page.locator("#ablation").inner_text()
    shot(page, "ablation")
    assert not page.dialogs


def test_positional_encoding_learning_rate_and_model_card(page):
    translate_example(page, EXAMPLES[2])
    open_view(page, "The model", "Positional encoding")
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .heatmaplayer').length >= 3",
                           timeout=30_000)  # PE matrix, similarity, and this sentence's layer input
    assert page.locator(".js-plotly-plot .scatterlayer .trace").count() >= 6  # six sinusoids by default
    shot(page, "positional")
    open_view(page, "Training", "Learning rate")
    page.locator("input[aria-label='number input for warmup steps']").fill("8000")
    page.locator("input[aria-label='number input for warmup steps']").press("Enter")
    page.get_by_text("Add this curve").click()
    page.wait_for_function("() => [...document.querySelectorAll('.legendtext')].some(e => e.textContent.includes('warmup=8000'))")
    shot(page, "learning_rate")
    open_view(page, "The model", "Model card")
    page.locator("#model-card").get_by_text("parameters", exact=False).first.wait_for()
    assert page.get_by_role("tab").all_text_contents() == [  # the top level, then the open group's views
        "At a glance", "Lesson", "Step by step", "Attention", "Beyond attention", "Training", "The model",
        "Positional encoding", "Compare models", "Model card"]
    assert "shared embedding" in page.content()
    shot(page, "model_card")
    assert not page.dialogs



def test_the_epoch_slider_changes_the_example_translations(page):
    open_view(page, "Training", "How it learned")
    table = page.locator("#timeline-table")
    table.get_by_text("after epoch 1", exact=True).wait_for(timeout=30_000)
    first = table.inner_text()
    stages = len(list((ROOT / "checkpoints" / "en-de" / "timeline").glob("epoch*.safetensors"))) + 1
    page.wait_for_function(f"() => document.querySelectorAll('.js-plotly-plot .heatmaplayer').length >= {stages}",
                           timeout=60_000)  # every snapshot and the shipped model, side by side
    number = page.locator("input[aria-label='number input for after epoch']")
    rows = json.loads((ROOT / "checkpoints" / "en-de" / "metrics.json").read_text())["epochs"]
    middle = rows[-1]["epoch"] - 3  # the last stage, part-way (it records every epoch of its own)
    assert rows[[r["epoch"] for r in rows].index(middle)]["translations"]
    number.fill(str(middle))
    number.press("Enter")
    table.get_by_text(f"after epoch {middle}", exact=True).wait_for(timeout=30_000)
    assert table.inner_text() != first
    shot(page, "how_it_learned")
    assert not page.dialogs


def test_train_a_tiny_one_streams_stops_and_leaves_other_users_alone(page, server):
    """Train with the defaults, see two progress reports, translate as a second user meanwhile, then Stop."""
    from gradio_client import Client

    other = Client(server, verbose=False)
    sentence = "Two young girls are playing with a dog in the park."
    alone = other.predict(sentence, "en-de", "greedy", api_name="/translate")
    open_view(page, "Training", "Train a tiny one")
    page.click("#toy-train")
    status = page.locator("#toy-status")
    status.get_by_text("step 100 of", exact=False).wait_for(timeout=60_000)
    during = other.predict(sentence, "en-de", "greedy", api_name="/translate")  # while the training runs
    status.get_by_text("step 150 of", exact=False).wait_for(timeout=60_000)
    assert during == alone
    assert page.locator(".js-plotly-plot .heatmaplayer").count() >= 2  # the probe's cross and self attention
    page.click("#toy-stop")
    status.get_by_text("stopped: step", exact=False).wait_for(timeout=10_000)
    stopped = status.inner_text()
    step = int(re.search(r"step (\d+) of", stopped).group(1))
    page.wait_for_timeout(4000)  # a report comes every 50 steps, about a second apart while training
    assert status.inner_text() == stopped  # no progress arrived after Stop
    output = page.locator("#toy-output")
    for _ in range(2):  # the kept model is the one of the last report, and stays so
        page.get_by_role("button", name="Run the trained model").click()
        output.get_by_text(f"the model after step {step})", exact=False).wait_for(timeout=30_000)
        page.wait_for_timeout(1000)
    shot(page, "train_a_tiny_one")
    assert not page.dialogs

def test_a_second_training_waits_its_turn_and_its_user_sees_the_queue(browser, server):
    """One training per server: a second user's Train queues, shows its place, and starts when the first stops."""
    pages = [open_page(browser, server) for _ in range(2)]
    try:
        for page in pages:
            open_view(page, "Training", "Train a tiny one")
        first, second = pages
        first.click("#toy-train")
        first.locator("#toy-status").get_by_text("step 50 of", exact=False).wait_for(timeout=60_000)
        second.click("#toy-train")
        second.get_by_text(re.compile(r"queue: 1/\d")).first.wait_for(timeout=30_000)  # its place in the queue
        assert "training" not in second.locator("#toy-status").inner_text()
        first.click("#toy-stop")
        second.locator("#toy-status").get_by_text("step 50 of", exact=False).wait_for(timeout=60_000)
        second.click("#toy-stop")
        assert not first.dialogs and not second.dialogs
    finally:
        for page in pages:
            page.context.close()


def test_a_click_on_translate_while_a_translation_runs_is_kept_and_runs_next(page, translators):
    """Another pair starts translating the box's text (twenty sentences: a while); the user types a new sentence
    and clicks Translate before it has landed. That click is not lost: its translation follows and stays."""
    paragraph = " ".join(f"The {n} children in row {n} are reading a long book about boats." for n in range(3, 23))
    sentence = "Two dogs play in the snow."
    page.locator("#source-text textarea").fill(paragraph)
    page.get_by_label("Language pair").click()
    page.get_by_role("option", name="English → French", exact=True).click()
    page.locator("#source-text textarea").fill(sentence)
    page.click("#translate-button")
    # this sentence's French (the box shows the opening's German, then perhaps the twenty's, until it lands)
    page.wait_for_function("(want) => document.querySelector('#translation textarea').value === want",
                           arg=translators["en-fr"].translate(sentence).text, timeout=60_000)
    page.wait_for_function(IDLE, timeout=30_000)
    page.wait_for_timeout(1500)
    assert page.locator("#translation textarea").input_value() == translators["en-fr"].translate(sentence).text


HOSTILE = [
    "<script>alert(1)</script> A man rides a bike.",
    "</script><img src=x onerror=alert(2)> two dogs",
    "\"'><svg onload=alert(3)> a girl ' \" ` <!-- -->",
    "<iframe srcdoc='<script>alert(4)</script>'></iframe> a cat",
]
HOSTILE_MARKS = ["bike", "dogs", "girl", "cat"]  # a word of each, to know its own drawing is the one on screen


def read_whole(page, frame, *marks: str) -> str:
    """bertviz's drawing as text, read whole once it holds every one of `marks` (for 10 s at most): a frame drawn
    again meanwhile is read once it is drawn."""
    from playwright.sync_api import Error as PlaywrightError

    drawn = ""
    for _ in range(50):
        try:
            drawn = " ".join(frame.locator("svg text").all_text_contents())
        except PlaywrightError:  # the frame was being drawn again as it was read
            drawn = ""
        if all(mark in drawn for mark in marks):
            break
        page.wait_for_timeout(200)
    return drawn


def test_hostile_text_through_the_page_runs_no_script(page):
    from playwright.sync_api import expect

    box = page.locator("#source-text textarea")
    open_view(page, "Attention", "bertviz")
    for text, mark in zip(HOSTILE, HOSTILE_MARKS):
        box.fill(text)
        click_translate(page)
        expect(page.locator("#translation textarea")).not_to_have_value("")
        # the view redraws after the translation has landed: wait for this text's drawing, not the last one's
        frame = page.frame_locator("#bertviz iframe")
        frame.locator("svg text", has_text=mark).first.wait_for(state="attached", timeout=30_000)
        drawn = read_whole(page, frame, mark, "<")  # "<": the opening sentence has "bike" too, no "<"
        if mark not in drawn or "<" not in drawn:  # known, not fixed: now and then the frame is drawn again from the
            # sentence before (notes of stops 61-62); the view opened again draws the newest, which this test reads
            open_view(page, "Attention", "Heatmaps")
            open_view(page, "Attention", "bertviz")
            drawn = read_whole(page, page.frame_locator("#bertviz iframe"), mark, "<")
        # the special pieces in words; "<", which the vocabulary spells in bytes, as its character: text, not parsed
        assert "end" in drawn and "<" in drawn and "0x" not in drawn
    open_view(page, "Attention", "Heatmaps")
    page.wait_for_selector("#attention-plot .heatmaplayer", timeout=30_000)
    shot(page, "hostile")
    assert page.dialogs == []  # no alert() ever ran
    assert translate_example(page, EXAMPLES[3])  # and the page still works


# -----------------------------------------------------------------------------
# How the numbers are made; the page opens translated; presentation mode; shared links


def test_the_page_opens_translated_and_the_inside_attention_views_are_drawn(page):
    """No click at all: the load event translated the first example; each inside-attention tab draws it when opened."""
    assert page.locator("#source-text textarea").input_value() == EXAMPLES[0]
    assert page.locator("#translation textarea").input_value()
    open_view(page, "Attention", "One head")
    page.wait_for_selector("#inside-plot .heatmaplayer", timeout=30_000)
    steps = page.locator("#inside-steps").inner_text()
    assert "softmax" in steps and "Equal to the Attention view's row to" in steps
    shot(page, "inside_one_head")
    open_view(page, "Attention", "Three families")
    page.wait_for_function("() => document.querySelectorAll('#families-plot .heatmaplayer image').length >= 6",
                           timeout=30_000)
    assert any(t.endswith(" pad") for t in page.locator("#families-plot .ytick text").all_text_contents())
    shot(page, "three_families")
    open_view(page, "Attention", "Rollout")
    page.wait_for_function("() => document.querySelectorAll('#rollout-plot .heatmaplayer image').length >= 4",
                           timeout=30_000)
    page.get_by_role("button", name="Download the rollout (JSON)").wait_for(state="visible", timeout=10_000)
    shot(page, "rollout")
    open_view(page, "Step by step")
    page.get_by_text("choose Beam search under Decoding", exact=False).wait_for(timeout=30_000)
    assert not page.dialogs


def assert_pieces_as_text(page, plot: str) -> None:
    """The figure's rows name the hostile pieces ("<", spelled in bytes by the vocabulary, escaped once for plotly),
    and the ticks drawn (plotly shows some of them) show no escape code and no byte code."""
    rows = page.evaluate("(s) => document.querySelector(s + ' .js-plotly-plot').data.flatMap(d => d.y || [])", plot)
    assert any(str(r).endswith(" &lt;") for r in rows)
    ticks = page.locator(f"{plot} .ytick text").all_text_contents()
    assert ticks and not any("&lt;" in t or "&amp;" in t or "0x" in t for t in ticks)


def test_new_views_draw_hostile_tokens_as_text_and_beam_search_as_a_tree(page):
    open_settings(page)
    page.get_by_test_id("Beam search-radio-label").click()
    translate_example(page, EXAMPLES[1])
    open_view(page, "Step by step")
    page.wait_for_selector("#beam-tree-plot .scatterlayer .trace", timeout=30_000)
    nodes = page.locator("#beam-tree-plot .textpoint").all_text_contents()
    assert "start" in nodes and "end" in nodes and len(nodes) > 10  # start, candidates and endings, drawn as text
    assert "end" in page.locator("#steps-tab").inner_text()  # the end mark, in words
    shot(page, "beam_search_tree")
    page.locator("#source-text textarea").fill(HOSTILE[1])
    click_translate(page)
    open_view(page, "Attention", "One head")
    page.locator("[data-testid='Encoder self-radio-label']:visible").click()  # One head's, not Heatmaps'
    page.wait_for_function("() => document.querySelector('#inside-plot .gtitle')?.textContent.includes('encoder')",
                           timeout=30_000)
    page.locator("#inside-query input").click()
    page.get_by_role("option").filter(has_text="<").first.click()  # '<' is spelled in bytes: shown as itself
    page.wait_for_function("() => document.querySelector('#inside-plot .gtitle')?.textContent.includes('<')",
                           timeout=30_000)  # the token drawn as text, not parsed as a tag
    assert "<" in page.locator("#inside-steps").inner_text()
    open_view(page, "Attention", "Three families")
    page.wait_for_selector("#families-plot .heatmaplayer", timeout=30_000)
    assert_pieces_as_text(page, "#families-plot")
    open_view(page, "Attention", "Rollout")
    page.wait_for_selector("#rollout-plot .heatmaplayer", timeout=30_000)
    assert_pieces_as_text(page, "#rollout-plot")
    open_view(page, "Step by step")  # the hostile sentence was decoded by beam search too
    page.wait_for_selector("#beam-tree-plot .scatterlayer .trace", timeout=30_000)
    assert "start" in page.locator("#beam-tree-plot .textpoint").all_text_contents()
    assert not page.dialogs  # no script from the text ever ran


def test_what_the_model_used_draws_when_opened_follows_the_chosen_token_and_draws_hostile_text_as_text(page):
    page.locator("#source-text textarea").fill(HOSTILE[1])
    click_translate(page)
    open_view(page, "Beyond attention", "What the model used")  # drawn now, for this translation
    summary = page.locator("#used-summary")
    summary.get_by_text("Deletion test", exact=False).wait_for(timeout=60_000)
    page.wait_for_selector("#used-attributions .heatmaplayer", timeout=30_000)
    page.wait_for_selector("#used-lens .heatmaplayer", timeout=30_000)
    ticks = lambda: page.locator("#used-attributions .xtick text").all_text_contents()
    assert any("<" in t for t in ticks()) and not any("0x" in t for t in ticks())  # '<' in bytes: shown as itself
    assert "Output piece 1" in summary.inner_text()
    before = (ticks(), page.locator("#used-deletion").inner_text())
    page.locator("#used-step input").click()
    page.get_by_role("option").nth(2).click()
    summary.get_by_text("Output piece 3", exact=False).wait_for(timeout=60_000)
    page.wait_for_function("n => document.querySelectorAll('#used-attributions .xtick text').length > n",
                           arg=len(before[0]))  # the prefix grew by two decoder inputs
    assert (ticks(), page.locator("#used-deletion").inner_text()) != before
    page.locator("#used-alternative input").click()
    page.get_by_role("option").nth(1).click()  # the step's best other token
    summary.get_by_text("Contrastive", exact=False).wait_for(timeout=60_000)
    assert page.locator("#used-summary script, #used-deletion script, #used-summary img").count() == 0
    steps = page.locator("#used-ig-steps input[type=number]")  # a step count typed in its box redraws
    steps.click()
    steps.press("Control+a")
    page.keyboard.type("128", delay=400)  # as a person types: the box changes at each digit, 1, 12, 128
    page.keyboard.press("Enter")
    summary.get_by_text("(128 steps)", exact=False).wait_for(timeout=60_000)
    shot(page, "what_the_model_used")
    assert not page.dialogs and not page.blocked


def rendered_px(page, selector: str) -> float:
    """How tall an element is drawn on the screen (presentation mode zooms the page, so CSS sizes stay the same)."""
    return page.evaluate("(s) => document.querySelector(s).getBoundingClientRect().height", selector)


TICK = "#steps-tab .js-plotly-plot .ytick text"  # a label of the Top-5 figure


def test_presentation_mode_enlarges_text_and_a_shared_link_restores_the_state(page, browser, server):
    from playwright.sync_api import expect

    open_view(page, "Step by step")
    page.wait_for_selector(TICK, timeout=30_000)
    normal = {s: rendered_px(page, s) for s in ("#translate-button", TICK)}
    open_settings(page)
    page.locator("#present-toggle input").check()
    page.wait_for_function("() => document.body.classList.contains('present')")
    settle(page)  # the figures measure their boxes again
    for selector, px in normal.items():
        assert rendered_px(page, selector) >= 1.3 * px, selector  # the page's text and the figures' text
    assert not page.evaluate(FITS)  # and every figure still fits its box
    assert not page.locator("#present-toggle").is_visible()  # the settings folded away: a bar leaves the mode
    page.get_by_role("button", name="Leave presentation mode").click()
    page.wait_for_function("() => !document.body.classList.contains('present')")
    assert rendered_px(page, "#translate-button") == normal["#translate-button"]

    page.locator("#source-text textarea").fill("Two dogs run along the beach.")
    page.get_by_test_id("Beam search-radio-label").click()
    beam = page.locator("input[aria-label='number input for Beam size']")
    beam.fill("3")
    beam.press("Enter")
    page.locator("#stutter-guard input").uncheck()  # the model alone
    page.locator("#present-toggle input").check()
    translation = click_translate(page)
    page.get_by_role("button", name="Link to this").click()  # the presentation bar's: the settings are folded
    link = page.locator("#share-link textarea")
    page.wait_for_function("el => el.value.startsWith('http')", arg=link.element_handle())
    url = link.input_value()
    assert "beam_size=3" in url and "present=1" in url and "strategy=beam" in url and "stutter_guard=0" in url

    shared = open_page(browser, url)  # a second visitor opens the link: same state, already translated
    try:
        expect(shared.locator("#source-text textarea")).to_have_value("Two dogs run along the beach.")
        expect(shared.locator("#translation textarea")).to_have_value(translation)
        shared.wait_for_function("() => document.body.classList.contains('present')")
        assert rendered_px(shared, "#translate-button") >= 1.3 * normal["#translate-button"]
        shared.get_by_role("button", name="Leave presentation mode").click()  # the settings come back
        open_settings(shared)
        assert shared.get_by_test_id("Beam search-radio-label").locator("input").is_checked()
        assert shared.locator("input[aria-label='number input for Beam size']").input_value() == "3"
        assert not shared.locator("#stutter-guard input").is_checked()
        open_view(shared, "Step by step")
        shared.wait_for_selector("#beam-tree-plot .scatterlayer .trace", timeout=30_000)
        assert not shared.dialogs and not shared.blocked
    finally:
        shared.context.close()

    phone = open_page(browser, url, (390, 844))  # the link opened on a phone: the phone's layout, not one zoomed line
    try:
        expect(phone.locator("#translation textarea")).to_have_value(translation)
        settle(phone)
        assert not phone.evaluate("() => document.body.classList.contains('present')")
        width = phone.evaluate("() => document.querySelector('#source-text textarea').getBoundingClientRect().width")
        assert width >= 250, width  # the sentence gets the phone's width (zoomed on one line: 30 px)
        open_settings(phone)  # the mode's toggle is where it is on a phone, still on
        assert phone.locator("#present-toggle input").is_checked()
        phone.set_viewport_size({"width": 1280, "height": 720})  # a wider window (a tablet turned): presented again
        phone.wait_for_function("() => document.body.classList.contains('present')")
    finally:
        phone.context.close()


def same_line(page, *selectors: str) -> bool:
    boxes = [page.locator(s).bounding_box() for s in selectors]
    return all(abs(b["y"] - boxes[0]["y"]) < 0.6 * boxes[0]["height"] for b in boxes)


def step_shown(page) -> int:
    """The Lesson step on screen, by its heading ("Step 3 of 10: ...", in any of the page's languages), once the
    Lesson built for this page shows one (a timer's "0.3s" beside it is not a step)."""
    shown = page.wait_for_function("() => document.querySelector('#lesson-where')?.innerText"
                                   ".match(/(\\d+) \\w+ 10\\b/)?.[1]", timeout=60_000)
    return int(shown.json_value())


def lesson_to(page, n: int, language: str = "en") -> None:
    """Next (or Back, to the step before), then wait for step n drawn and laid out (the page scrolls to it)."""
    where = i18n.Texts(language)("Step {number} of {steps}: {title}", number=n, steps=10, title="").strip()
    page.click("#lesson-next" if n > step_shown(page) else "#lesson-back")
    page.wait_for_function("(w) => document.querySelector('#lesson-where')?.textContent.includes(w)", arg=where,
                           timeout=60_000)
    settle(page)


@pytest.mark.parametrize("size", [(1280, 720), (1024, 768)], ids=["1280x720", "1024x768"])
def test_a_projector_shows_the_panel_on_one_line_the_whole_glance_and_each_lesson_step_whole(browser, server, size):
    """Presentation mode: the sentence, Translate and the translation on one line; the glance's "Next piece" inside
    the window; each Lesson step's question, Reveal and figure on screen together after Next."""
    name = f"{size[0]}x{size[1]}"
    page = open_page(browser, server + "?present=1", size)
    try:
        page.wait_for_function("() => document.body.classList.contains('present')")
        settle(page)
        assert same_line(page, "#source-text", "#translate-button", "#translation")
        side = page.locator(".glance-side").bounding_box()
        assert side["x"] + side["width"] <= size[0] and in_view(page, ".glance-side"), side
        shot(page, f"present_{name}_glance", full_page=False)
        open_view(page, "Lesson")
        settle(page)
        for n in range(2, 11):
            lesson_to(page, n)
            if page.locator("#lesson-plot").is_visible():
                come_into_view(page, ["#lesson-question", "#lesson-reveal", "#lesson-plot"])
                for selector in ("#lesson-question", "#lesson-reveal", "#lesson-plot"):
                    assert in_view(page, selector), (n, selector)
        page.click("#lesson-reveal")
        page.wait_for_function("() => document.querySelector('#lesson-answer')?.textContent.includes('Answer')")
        come_into_view(page, ["#lesson-answer", "#lesson-plot"])
        assert in_view(page, "#lesson-answer") and in_view(page, "#lesson-plot")
        shot(page, f"present_{name}_lesson10", full_page=False)
        assert not page.evaluate(FITS) and not page.dialogs
    finally:
        page.context.close()


def test_a_phone_shows_the_next_word_wide_questions_and_big_tap_targets(browser, server, translators):
    page = open_page(browser, server, (390, 844))
    try:
        page.locator(".glance-hint").wait_for(state="visible")  # the picture says it scrolls sideways
        scroller = page.locator(".glance-scroll")
        assert scroller.evaluate("e => e.scrollWidth > e.clientWidth")
        page.click(".glance-words button[data-step='2']")
        side = page.locator(".glance-side")
        side.scroll_into_view_if_needed()
        box = side.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390  # "Next piece", whole, under the words
        steps = translators["en-de"].translate(EXAMPLES[0]).steps
        assert page.locator(".glance-side .at.on .word").text_content() == lesson_piece(steps[2].token)
        for target in page.locator(".glance-words button, .overflow-menu > button").all():
            if target.is_visible():
                b = target.bounding_box()
                assert b["width"] >= 40 and b["height"] >= 40, (target.text_content(), b)
        shot(page, "phone_glance_next_word", full_page=False)
        open_view(page, "Lesson")
        settle(page)
        lesson_to(page, 2)
        question = page.locator("#lesson-question").bounding_box()
        assert question["width"] >= 0.8 * 390 - 40, question  # the question takes the width
        title = page.locator("#lesson-where")
        assert title.bounding_box()["width"] >= 0.8 * 390 - 40
        assert "Embeddings and positions" in title.text_content()
        shot(page, "phone_lesson_step_2", full_page=False)
        lesson_to(page, 3)
        lesson_to(page, 4)  # step 4 goes deeper into Attention: Heatmaps, a tab folded into the phone's menu
        page.locator("#lesson-deeper a[data-open='attention']").click()
        page.locator("#attention-plot .gtitle").first.wait_for(state="visible", timeout=30_000)  # found by its id
        assert "Heatmaps" in page.get_by_role("tab", selected=True).all_text_contents()
        assert not page.dialogs
    finally:
        page.context.close()


def test_a_minimal_pair_is_traced_in_three_clicks(page):
    """The sentence in the box: its group's tab, the view's tab (traced with the first change at once), another
    change from the menu: traced again."""
    open_view(page, "Beyond attention", "One word changed")
    page.locator("#patching-plot .gtitle").first.wait_for(state="visible", timeout=60_000)
    assert "the first run writes" in page.locator("#patching-pair").text_content()
    first = page.locator("#patching-pair").inner_html()
    page.locator("#patching-edit input").click()
    # another noun: a change the shipped models translate differently (not every change does: "is" → "was" may not)
    page.get_by_role("option").filter(has_text="another noun").first.click()
    page.wait_for_function("(before) => document.querySelector('#patching-pair').innerHTML !== before", arg=first,
                           timeout=60_000)
    assert "car" in page.locator("#patching-second textarea").input_value()
    settle(page)
    shot(page, "patching_noun")
    assert not page.dialogs and not page.blocked


def test_a_link_opens_the_view_it_names_and_the_share_link_names_the_open_view(browser, server):
    page = open_page(browser, server + "?view=rollout")
    try:
        page.locator("#rollout-plot .gtitle").first.wait_for(state="visible", timeout=30_000)  # drawn on opening
        assert page.get_by_role("tab", selected=True).all_text_contents() == ["Attention", "Rollout"]
        page.locator("#decoding").click()  # the settings fold out: the link button
        page.locator("#share-button").click()
        page.wait_for_function("() => document.querySelector('#share-link textarea')?.value.includes('view=rollout')")
    finally:
        page.context.close()
    page = open_page(browser, server + "?view=nothing")
    try:
        page.wait_for_function("() => document.querySelector('.notice')?.textContent.includes(\"view='nothing'\")")
        assert page.get_by_role("tab", selected=True).all_text_contents() == ["At a glance"]  # the page still opens
    finally:
        page.context.close()


def test_another_pair_translates_again(page, translators):
    page.evaluate(WATCH_EVENT)
    page.get_by_label("Language pair").click()
    page.get_by_role("option", name="English → French").click()
    page.wait_for_function("() => window.eventDone", timeout=60_000)
    want = translators["en-fr"].translate(EXAMPLES[0]).text
    page.wait_for_function("(want) => document.querySelector('#translation textarea').value === want", arg=want)
    settle(page)
    assert page.locator(".glance-side .at.on .word").text_content() == lesson_piece(
        translators["en-fr"].translate(EXAMPLES[0]).steps[0].token)


def test_the_model_at_a_glance_shows_a_chosen_words_step_and_its_boxes_open_their_views(page, translators):
    from playground.figures.glance import piece

    steps = translators["en-de"].translate(EXAMPLES[0]).steps  # what the page opened on
    page.click(".glance-words button[data-step='2']")
    assert page.locator(".glance-scroll .at.on").get_attribute("data-at") == "2"  # only that step shown
    assert page.locator(".glance-side .at.on").get_attribute("data-at") == "2"
    assert page.locator(".glance .at.on .word").text_content() == piece(steps[2].token)
    # an SVG box gets its click as the browser dispatches it (a click at its centre may land mid-layout)
    page.locator(".glance [data-focus*='kind=cross&layer=1']").dispatch_event("click")  # decoder layer 2's cross map
    page.wait_for_function(f"() => ({TITLE})('#attention-plot .gtitle').includes('layer 2, mean of heads')",
                           timeout=30_000)  # the part clicked, not layer 1
    assert "cross" in page.locator("#attention-plot .gtitle").text_content()
    assert page.get_by_role("tab", selected=True).all_text_contents() == ["Attention", "Heatmaps"]
    open_view(page, "At a glance")
    page.locator(".glance svg").first.wait_for(state="visible")
    page.locator(".glance [data-focus*='kind=encoder&layer=3']").dispatch_event("click")  # encoder layer 4's map
    page.wait_for_function(f"() => ({TITLE})('#attention-plot .gtitle').includes('layer 4, mean of heads')",
                           timeout=30_000)
    assert "encoder" in page.locator("#attention-plot .gtitle").text_content()
    open_view(page, "At a glance")
    page.locator(".glance svg").first.wait_for(state="visible")
    page.locator(".glance [data-open='steps']").first.dispatch_event("click")  # the output side: its step
    page.wait_for_function("() => document.querySelector('#steps-tab .gtitle')?.textContent?.startsWith('Step 3:')"
                           " || [...document.querySelectorAll('#steps-tab .gtitle')].some(t => t.textContent.startsWith('Step 3:'))",
                           timeout=30_000)
    open_view(page, "At a glance")  # "When was each piece decided?" opens Step by step's strip: a layer per piece
    page.get_by_text("When was each piece decided?").click()
    page.locator("#steps-decided .decided-strip li").first.wait_for(state="visible", timeout=30_000)
    assert page.locator("#steps-decided .decided-strip li").count() == len(steps)  # every piece, the end included
    assert page.get_by_role("tab", selected=True).all_text_contents() == ["Step by step"]
    assert not page.dialogs and not page.blocked


def test_a_text_of_several_sentences_lets_the_views_show_any_of_them(page):
    from playwright.sync_api import expect

    page.locator("#source-text textarea").fill("A dog runs. Two girls laugh in the park.")
    both = click_translate(page)
    menu = page.locator("#which-sentence")
    expect(menu).to_be_visible()
    assert "show sentence 1, “A dog runs.”" in page.locator(".notice").first.text_content()
    page.evaluate(WATCH_EVENT)
    page.locator("#which-sentence input").click()
    page.get_by_role("option", name="2. Two girls laugh in the park.", exact=True).click()
    page.wait_for_function("() => window.eventDone", timeout=60_000)
    # the outputs may land a moment after the status tracker hides: waited for, not read at once
    expect(page.locator(".notice").first).to_contain_text("show sentence 2, “Two girls laugh in the park.”")
    assert page.locator("#translation textarea").input_value() == both  # the box still holds both, in order
    expect(page.locator(".glance").first).to_contain_text("park")  # the glance reads the second sentence now
    open_settings(page)
    page.locator("#share-button").click()  # the link reopens the text with the second sentence in the views
    link = page.locator("#share-link textarea")
    page.wait_for_function("el => el.value.startsWith('http')", arg=link.element_handle())
    assert "sentence=2" in link.input_value()
    page.locator("#source-text textarea").fill("A cat sleeps.")
    click_translate(page)
    expect(menu).to_be_hidden()  # one sentence: nothing to choose
    assert not page.dialogs and not page.blocked and not page.errors


def lesson_step(page) -> str:
    return page.locator("#lesson-where").text_content().strip()


def walk_the_lesson(page, shots: tuple[int, ...] = ()) -> list[str]:
    """From step 1, Reveal then Next through all ten steps; the answers shown, in order."""
    answers = []
    for n in range(1, 11):
        page.wait_for_function("(n) => document.querySelector('#lesson-where')?.textContent.includes(`Step ${n} of 10`)",
                               arg=n, timeout=60_000)
        if page.locator("#lesson-reveal").is_visible():
            page.click("#lesson-reveal")
            page.wait_for_function("() => document.querySelector('#lesson-answer')?.textContent.includes('Answer')",
                                   timeout=60_000)
            answers.append(page.locator("#lesson-answer").text_content().strip())
        else:  # this step cannot apply to this model or sentence: it says why, in words
            answers.append(page.locator("#lesson-text").text_content().strip())
        settle(page)
        if n in shots:
            page.locator("#lesson-where").scroll_into_view_if_needed()
            page.evaluate("() => document.querySelector('#lesson-where').closest('.row').scrollIntoView()")
            shot(page, f"lesson_step_{n}", full_page=False)
        if n < 10:
            page.click("#lesson-next")
    return answers


def test_the_lesson_walks_ten_steps_reveals_each_answer_opens_at_a_step_and_downloads_its_notes(browser, server):
    ARTIFACTS.mkdir(exist_ok=True)
    page = open_page(browser, server, (1280, 720))
    try:
        open_view(page, "Lesson")
        answers = walk_the_lesson(page, shots=(3, 6, 9))
        assert all(a.startswith("Answer:") for a in answers) and len(set(answers)) == 10, answers
        page.click("#lesson-back")
        page.wait_for_function("() => document.querySelector('#lesson-where')?.textContent.includes('Step 9 of')")
        page.locator("body").click(position={"x": 5, "y": 5})  # the page, not a text box, has the keys
        page.keyboard.press("ArrowLeft")  # the arrow keys move too
        page.wait_for_function("() => document.querySelector('#lesson-where')?.textContent.includes('Step 8 of')")
        with page.expect_download(timeout=60_000) as download:  # one click: the notes are drawn, then downloaded
            page.click("#lesson-notes")
        notes = open(download.value.path(), encoding="utf-8").read()
        assert notes.count("<section>") == 10 and "Step 10: What attention does not tell you" in notes
        assert "click" not in re.sub(r"<script.*?</script>", "", notes, flags=re.S).lower()  # paper has no buttons
        open_settings(page)
        page.click("#share-button")  # the link carries the step
        page.wait_for_function("() => document.querySelector('#share-link textarea')?.value.includes('lesson=8')")
        assert not page.dialogs and not page.blocked
    finally:
        page.context.close()
    page = open_page(browser, server + "?lesson=7", (1280, 720))  # a link straight to step 7
    try:
        page.wait_for_function("() => document.querySelector('#lesson-where')?.textContent.includes('Step 7 of 10')",
                               timeout=60_000)
        assert page.get_by_role("tab", selected=True).all_text_contents() == ["Lesson"]
        assert "temperature 2" in page.locator("#lesson-question").text_content()
    finally:
        page.context.close()


def test_the_lesson_on_an_imported_model_says_plainly_which_step_cannot_apply(browser, with_imported):
    import app
    from conftest import serving

    translators, problems = app.load_translators(with_imported, "cpu")
    with serving(translators) as url:
        page = open_page(browser, url)
        try:
            page.get_by_label("Language pair").click()
            page.get_by_role("option", name="English → German (OPUS-MT)").click()
            page.locator("#source-text textarea").fill("a dog runs in the park")
            click_translate(page)
            open_view(page, "Lesson")
            said = walk_the_lesson(page)
            assert "keeps no snapshots of its training" in said[8]  # step 9: no timeline, said in words
            assert sum(a.startswith("Answer:") for a in said) >= 8 and not page.dialogs
        finally:
            page.context.close()


def test_on_a_phone_a_tap_on_each_tab_label_opens_its_own_view(browser, server):
    """At 390x844 the seven tabs wrap onto more lines (never gradio's overflow menu, whose first button covered the
    rest): the element under each label is that label's own tab, a tap opens its view, and every one keeps the tab
    role for a keyboard and a screen reader."""
    from playground import registry

    phone = open_page(browser, server, (390, 844))
    labels = [registry.GROUP_LABELS[e.group] if e.group else e.label
              for e in registry.VIEWS if e.inside is None]
    labels = list(dict.fromkeys(labels))
    assert len(labels) == 7
    top = phone.locator(".tabs").first
    for label in labels:
        tab = top.get_by_role("tab", name=label, exact=True).first
        assert tab.is_visible(), label
        tab.scroll_into_view_if_needed()
        under = phone.evaluate("""(e) => { const r = e.getBoundingClientRect();
            const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
            return hit === e || e.contains(hit); }""", tab.element_handle())
        assert under, f"something covers the tab {label!r}"
        assert tab.bounding_box()["height"] >= 40, label
        tab.click()
        phone.wait_for_function("(e) => e.getAttribute('aria-selected') === 'true'", arg=tab.element_handle(),
                                timeout=10_000)
        panel = phone.evaluate("(e) => document.getElementById(e.getAttribute('aria-controls'))?.checkVisibility()",
                               tab.element_handle())
        assert panel is not False, label
    phone.locator(".tabs").first.scroll_into_view_if_needed()
    shot(phone, "phone-tabs", full_page=False)
    assert not phone.errors, phone.errors
    phone.context.close()


def model_zip(folder, out):
    """`folder`'s files in a zip, as a teacher zips a model folder."""
    import zipfile

    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                z.write(f, str(f.relative_to(folder)))
    return out


def bring(page, archive) -> str:
    """Upload `archive` with the Model card's button; what the card then says."""
    from playwright.sync_api import expect

    open_view(page, "The model", "Model card")
    with page.expect_file_chooser() as chooser:
        page.click("#bring-model")
    chooser.value.set_files(str(archive))
    expect(page.locator("#brought")).not_to_contain_text("Your own model.", timeout=120_000)
    settle(page)
    return page.locator("#brought").inner_text()


@pytest.mark.parametrize("kind", ["recipe checkpoint", "OPUS-MT folder"])
def test_a_teacher_brings_a_model_and_every_view_opens_on_it(browser, server, tmp_path, request, kind):
    from conftest import tiny_marian

    if kind == "OPUS-MT folder":  # a tiny random one, as MarianMTModel.save_pretrained leaves it
        pytest.importorskip("transformers")
        folder = tmp_path / "model"
        folder.mkdir()
        tiny_marian(folder)
    else:  # what recipes/smoke.toml makes (its whole folder: the run's train/ and timeline/ too)
        folder = request.getfixturevalue("smoke_checkpoint")
    page = open_page(browser, server, (1440, 900))
    try:
        said = bring(page, model_zip(folder, tmp_path / "mine.zip"))
        assert said.startswith("Your model: mine is loaded"), said
        assert page.locator("#pair input").input_value() == "Your model: mine"
        for path in VIEWS:  # every view draws for it, and says nothing failed
            open_view(page, *path)
            settle(page)
            assert not page.locator(".tabitem .problem:visible").count(), (path, page.locator(".problem").all_inner_texts())
        assert not page.errors, page.errors[:5]
    finally:
        page.context.close()


def test_a_hostile_archive_is_refused_in_place_and_the_page_goes_on(browser, server, tmp_path):
    import zipfile

    with zipfile.ZipFile(tmp_path / "evil.zip", "w") as z:
        z.writestr("config.json", "{}")
        z.writestr("pytorch_model.bin", b"\x80\x04K\x01.")  # a pickle
    page = open_page(browser, server)
    try:
        said = bring(page, tmp_path / "evil.zip")
        assert said.startswith("Not loaded:") and "pickle" in said, said
        assert page.locator("#pair input").input_value() == "English → German"  # the page as it was
        assert not page.errors, page.errors[:5]
    finally:
        page.context.close()
