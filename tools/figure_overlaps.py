"""Text on text inside the page's figures: every view and every Lesson step at the four sizes a class meets.

    python tools/figure_overlaps.py [--sizes present 1280x720 1440x900 390x844] [--only TEXT] [--shots DIR]
                                    [--json out.json] [--language de]

Starts `python app.py` on this machine, opens the page in Debian's chromium (Playwright, never a downloaded
browser), opens every view (the registry's tabs) and walks the Lesson's ten steps, and on each screen checks every
visible plotly figure: no two of its texts (titles, tick labels, axis titles, legend entries, colour-bar ticks,
annotations) cover each other, and none is cut by the figure's edge. A text is compared as drawn: its box turned
with it (a tick label at -45° is a slanted box, not the upright box around it), 1 px of tolerance. Prints each
collision and the count per screen; exits 1 when any is found. --shots keeps each screen's screenshot and each visible
figure alone (a figure with a collision named so); --only checks the screens whose name holds one of its texts;
--language opens the page as a browser of that language does (German and French words are longer).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playground import registry  # noqa: E402
from playground.i18n import Texts  # noqa: E402
from tools.classroom import free_port, serve  # noqa: E402

BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--no-first-run"]
SIZES = {"present": (1280, 720, True), "1280x720": (1280, 720, False), "1440x900": (1440, 900, False),
         "390x844": (390, 844, False)}
# The page's own signal that it has settled (assets/page.js, tp.settled): no event running, no figure waiting to be
# laid out, and nothing on it changed for a moment; waited on instead of sleeping for a fixed time
SETTLED = "() => window.tp?.settled()"

# Each visible figure's texts as drawn (their boxes through the text's own transform), then every pair tested with
# the separating-axis test for two convex quadrilaterals, and every text against the figure's own box
COLLISIONS = """() => {
  const quad = (el) => {
    const b = el.getBBox(), m = el.getScreenCTM();
    if (!m || b.width < 1 || b.height < 1) return null;
    const at = (x, y) => ({x: m.a * x + m.c * y + m.e, y: m.b * x + m.d * y + m.f});
    return [at(b.x, b.y), at(b.x + b.width, b.y), at(b.x + b.width, b.y + b.height), at(b.x, b.y + b.height)];
  };
  const apart = (P, Q) => [P, Q].some(poly => poly.some((a, i) => {
    const b = poly[(i + 1) % 4], nx = b.y - a.y, ny = a.x - b.x, n = Math.hypot(nx, ny) || 1;
    const on = (R) => R.map(p => (p.x * nx + p.y * ny) / n);
    const p = on(P), q = on(Q);
    return Math.max(...p) - 1 <= Math.min(...q) || Math.max(...q) - 1 <= Math.min(...p);
  }));
  const found = [];
  document.querySelectorAll('.js-plotly-plot').forEach(plot => {
    delete plot.dataset.overlaps;
    if (!plot.checkVisibility()) return;
    const before = found.length;
    const where = plot.closest('[id]')?.id || 'a figure';
    const frame = plot.querySelector('.main-svg').getBoundingClientRect();
    const texts = [...plot.querySelectorAll('svg text')].filter(t => t.textContent.trim() && !t.closest('.hoverlayer')
      && t.checkVisibility({opacityProperty: true, visibilityProperty: true}))
      .map(t => [t.textContent.trim().slice(0, 40), quad(t)]).filter(([, q]) => q);
    texts.forEach(([text, q], i) => {
      if (q.some(p => p.x < frame.left - 1 || p.x > frame.right + 1 || p.y < frame.top - 1 || p.y > frame.bottom + 1))
        found.push([where, 'cut by the edge', text, '']);
      texts.slice(i + 1).forEach(([other, r]) => { if (!apart(q, r)) found.push([where, 'text on text', text, other]); });
    });
    if (found.length > before) plot.dataset.overlaps = 'yes';  // for its screenshot
  });
  return found;
}"""


def collisions(page, patience_ms: int = 2000) -> list:
    """The open screen's collisions once its figures have laid themselves out: looked at again every half second
    while some are found (a figure drawn again for its box lands a moment after the drawing before it)."""
    found = page.evaluate(COLLISIONS)
    for _ in range(patience_ms // 500):
        if not found:
            break
        page.wait_for_timeout(500)
        found = page.evaluate(COLLISIONS)
    return found


def screens(page, language: str = "en"):
    """(name, open it) of every view's tab, then the Lesson's ten steps (the tabs found by their labels in
    `language`)."""
    _ = Texts(language)

    def view(labels):
        def go():
            for level, label in enumerate(_(label) for label in labels):
                tab = page.get_by_role("tab", name=label, exact=True)
                beyond = page.locator(".overflow-dropdown:visible").get_by_role("button", name=label, exact=True)
                if level:  # a group's tabs come in once it is built for this page (its first opening)
                    tab.or_(page.locator(".overflow-dropdown").get_by_role("button", name=label, exact=True)).first \
                        .wait_for(state="attached", timeout=30_000)
                if tab.count() and tab.first.is_visible():
                    tab.first.click()
                elif beyond.count():  # a narrow screen's further line of tabs
                    beyond.first.click()
                else:  # presentation mode's zoom: gradio's "⋯" menu
                    menus = page.locator(".overflow-menu:visible > button")
                    (menus.last if level else menus.first).click()
                    page.locator(".overflow-dropdown:visible").get_by_role("button", name=label, exact=True).click()
        return go

    for e in registry.VIEWS:
        if e.inside is None:
            labels = (registry.GROUP_LABELS[e.group], e.label) if e.group else (e.label,)
            yield " / ".join(labels), view(labels)
    yield "Lesson step 1", view(("Lesson",))
    for n in range(2, 11):
        where = _("Step {number} of {steps}: {title}", number=n, steps=10, title="").split(":")[0]
        yield f"Lesson step {n}", lambda n=n, where=where: (page.click("#lesson-next"), page.wait_for_function(
            "(w) => document.querySelector('#lesson-where').textContent.includes(w)", arg=where, timeout=60_000))


def check(url: str, sizes: list[str], shots: Path | None, only: list[str] | None = None,
          language: str = "en") -> dict[str, list]:
    from playwright.sync_api import sync_playwright

    report = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=BROWSER_ARGS)
        for size in sizes:
            width, height, present = SIZES[size]
            page = browser.new_page(viewport={"width": width, "height": height}, locale=language)
            page.goto(url + ("?present=1" if present else ""))
            page.wait_for_selector(".glance svg", timeout=60_000)
            for name, go in screens(page, language):
                if only and not any(o in name for o in only) and not name.startswith("Lesson step"):
                    continue
                go()
                if only and not any(o in name for o in only):
                    continue  # a Lesson step walked past on the way to the one asked for
                page.wait_for_function(SETTLED, timeout=60_000)  # drawn and laid out (assets/page.js)
                found = collisions(page)
                report[f"{size}: {name}"] = found
                if shots:
                    stem = f"{size}_{name}".replace(" / ", "_").replace(" ", "_")
                    page.screenshot(path=str(shots / f"{stem}.png"))
                    figures = page.locator(".js-plotly-plot:visible")
                    for i in range(figures.count()):
                        bad = "_collides" if figures.nth(i).get_attribute("data-overlaps") else ""
                        figures.nth(i).screenshot(path=str(shots / f"{stem}_figure{i + 1}{bad}.png"))
            page.close()
        browser.close()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--shots", type=Path, help="a folder for each screen's screenshot")
    parser.add_argument("--json", type=Path, help="also write every collision here")
    parser.add_argument("--only", nargs="+", help="only the screens whose name holds one of these texts")
    parser.add_argument("--language", default="en", choices=["en", "de", "fr"], help="the browser's language")
    args = parser.parse_args()
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
    port = free_port()
    app = serve(port)
    try:
        report = check(f"http://127.0.0.1:{port}/", args.sizes, args.shots, args.only, args.language)
    finally:
        os.killpg(app.pid, signal.SIGTERM)
        app.wait(timeout=60)
    for screen, found in report.items():
        for where, kind, text, other in found:
            print(f"{screen}: #{where}: {kind}: {text!r}" + (f" / {other!r}" if other else ""))
    bad = {s: len(f) for s, f in report.items() if f}
    print(f"{sum(bad.values())} collisions on {len(bad)} of {len(report)} screens")
    for screen, n in bad.items():
        print(f"  {n:3d}  {screen}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
