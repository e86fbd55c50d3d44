"""The page's languages: the catalogues against the code, the language of a request, the middleware that carries a
visitor's choice, and the real page in German and French in Chromium."""
from __future__ import annotations

import re
import shutil

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from conftest import CHROMIUM, ROOT
from playground import i18n
from playground.i18n import COOKIE, LANGUAGES, LanguageChoice, language_of

# as docs/translating.md extracts them: a label (_l), a text the server writes (_, and .plural's two), a name in a
# table (N_), a tab's label (Entry, Group)
KEYWORDS = {"_l": None, "_": None, "N_": None, "plural": (1, 2), "Entry": (2,), "Group": (2,)}


def marked() -> set:
    """Every text the code marks for the catalogue, found as `pybabel extract` finds them (a plural as the tuple of
    its two English forms)."""
    found = extract_from_dir(ROOT, method_map=[("playground/**.py", "python"),
                                               ("assets/explanations.json", "playground.explanations:extract")],
                             keywords=KEYWORDS)
    return {message for _, _, message, _, _ in found if message}


def test_no_text_is_marked_inside_an_f_string_where_the_extraction_cannot_see_it():
    """Python 3.11 reads an f-string as one token: a _("...") inside it would never reach the catalogue."""
    import tokenize

    call = re.compile(r"(?<![\w.])(_|_l|N_)\(['\"]|\.plural\(['\"]")
    hidden, plurals = [], []
    for path in (ROOT / "playground").rglob("*.py"):
        with path.open("rb") as f:
            hidden += [f"{path.name}:{t.start[0]}" for t in tokenize.tokenize(f.readline)
                       if t.type == tokenize.STRING and re.match(r"[rbuRBU]*[fF]", t.string) and call.search(t.string)]
        text = path.read_text(encoding="utf-8")  # and a Texts called as it is made, which no keyword names
        plurals += re.findall(r'_\.plural\(\s*"((?:[^"\\]|\\.)*)"', text) if path.name != "i18n.py" else []
        hidden += [f"{path.name}: {m.group(0)}" for m in re.finditer(r"Texts\([^()]*(\([^()]*\))?[^()]*\)\(", text)]
    assert not hidden, hidden
    # a bare _ inside a call's arguments makes the extraction take a plural for a singular: every one found whole
    found = [m[0] for m in marked() if isinstance(m, tuple)]
    assert plurals and all(any(f.startswith(p) for f in found) for p in plurals), plurals


def translated(message) -> bool:
    return all(message.string) if isinstance(message.string, tuple) else bool(message.string)


def po(language: str):
    with i18n.po_file(language).open("rb") as f:
        return read_po(f)


def test_every_marked_text_has_a_reviewed_german_and_french_translation_and_none_is_left_over():
    texts = marked()
    assert len(texts) > 200 and {"Translate", "At a glance", "English → German", "Pieces"} <= texts
    assert ("**{n} piece**: {listed}.", "**{n} pieces**: {listed}.") in texts  # a plural, with its two forms
    with (i18n.LOCALE / "playground.pot").open("rb") as f:
        assert {m.id for m in read_po(f) if m.id} == texts, "the template is stale: run the extraction again"
    for language in ("de", "fr"):
        catalogue = po(language)
        entries = {m.id: m for m in catalogue if m.id}
        assert set(entries) == texts, f"{language}: missing {texts - set(entries)}, left over {set(entries) - texts}"
        assert not [m.id for m in entries.values() if not translated(m) or m.fuzzy], f"{language}: untranslated"
        assert len(i18n.catalogue(language)) == len([t for t in texts if isinstance(t, str)])


def tags(text: str) -> list[str]:
    return re.findall(r"</?[a-z0-9]+", text)


@pytest.mark.parametrize("language", ["de", "fr"])
def test_translations_keep_the_markup_the_arrows_and_the_notation_of_the_english(language):
    for message in po(language):
        if not message.id:
            continue
        english = message.id[-1] if isinstance(message.id, tuple) else message.id
        for string in message.string if isinstance(message.string, tuple) else [message.string]:
            assert tags(string) == tags(english), english  # the same HTML, in the same order
            assert sorted(re.findall(r"{\w+}", string)) == sorted(re.findall(r"{\w+}", english)), english
            for kept in ("→", "▶", "◀", "(.zip)", "(JSON)", "d_model", "Top-k", "Top-p", "…", "**", "√", "×"):
                assert english.count(kept) == string.count(kept), (kept, english, string)
            assert re.findall(r"\d+", english) == re.findall(r"\d+", string), english


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_every_explanation_rendered_as_markdown_has_only_the_tags_it_writes(language):
    """Each view's words (plain words, then how it works and references, folded), rendered as Gradio's Markdown reads
    them (HTML let through): every tag is one Markdown makes or one the words write as a tag; a start or end token
    written in the text ("<s>", "</s>") stays text, never HTML's struck-through text."""
    from html.parser import HTMLParser

    from markdown_it import MarkdownIt

    from playground.explanations import EXPLAIN, WRITTEN_TAGS, explained

    class Tags(HTMLParser):
        def __init__(self):
            super().__init__()
            self.found = set()

        def handle_starttag(self, tag, attrs):
            self.found.add(tag)

    markdown = MarkdownIt("commonmark", {"html": True})
    made = {"p", "code", "em", "strong", "a", "ul", "ol", "li", "pre", "blockquote", "hr", "h1", "h2", "h3"}
    _ = i18n.Texts(language)
    for key, entry in EXPLAIN.items():
        tags = Tags()
        tags.feed(markdown.render(explained(entry, _=_) if entry.get("plain") else explained(entry, plain="", _=_)))
        assert tags.found <= made | set(WRITTEN_TAGS), (key, tags.found - made - set(WRITTEN_TAGS))
    written = explained({"plain": "", "how": "At the first step the decoder reads <s>; it stops at </s>. x<sub>i</sub>"})
    tags = Tags()
    tags.feed(markdown.render(written))
    assert "s" not in tags.found and "sub" in tags.found


def test_gettext_translates_what_the_catalogue_has_and_leaves_the_rest_english():
    assert i18n.gettext("de", "Translate") == "Übersetzen" and i18n.gettext("fr", "Translate") == "Traduire"
    assert i18n.gettext("en", "Translate") == "Translate" and i18n.gettext("xx", "Translate") == "Translate"
    assert i18n.gettext("de", "a text no one marked") == "a text no one marked"


def test_texts_fill_in_numbers_plurals_and_quotes_as_each_language_writes_them():
    en, de, fr = i18n.Texts("en"), i18n.Texts("de"), i18n.Texts("fr")
    assert [t.number(1234.5) for t in (en, de, fr)] == ["1,234.50", "1.234,50", "1\u202f234,50"]
    assert [t.percent(0.42) for t in (en, de, fr)] == ["42%", "42\xa0%", "42\xa0%"]
    assert [t.quoted("Hund") for t in (en, de, fr)] == ["“Hund”", "„Hund“", "«\u00a0Hund\u00a0»"]
    assert en.quoted(" My sister likes pizza.\n") == "“My sister likes pizza.”"  # no space inside the marks
    one, many = "**{n} piece**: {listed}.", "**{n} pieces**: {listed}."
    assert en.plural(one, many, 1, listed="x") == "**1 piece**: x." and en.plural(one, many, 3, listed="x") == "**3 pieces**: x."
    assert de.plural(one, many, 1, listed="x") == "**1 Wortstück**: x." and de.plural(one, many, 2, listed="x").startswith("**2 Wortstücke")
    assert fr.plural(one, many, 0, listed="x").startswith("**0 morceau**") and fr.plural(one, many, 2, listed="x").startswith("**2 morceaux")
    assert de("Step {number} of {steps}: {title}", number=3, steps=10, title="Ein Kopf") == "Schritt 3 von 10: Ein Kopf"
    assert i18n.Texts("xx")("Yes") == "Yes"  # a language the page does not speak: English


class Asked:
    """A request's cookies and headers, as gr.Request and starlette's Request give them."""

    def __init__(self, cookie: str | None = None, accept: str | None = None):
        self.cookies = {COOKIE: cookie} if cookie is not None else {}
        self.headers = {"accept-language": accept} if accept is not None else {}


def test_the_language_of_a_request_is_the_pages_choice_then_the_browsers_then_english():
    assert language_of(None) == "en" and language_of(Asked()) == "en"
    assert language_of(Asked(accept="de-DE,de;q=0.9,en;q=0.8")) == "de"
    assert language_of(Asked(accept="es-ES,es;q=0.9,fr;q=0.5,de;q=0.4")) == "fr"  # the first the page speaks
    assert language_of(Asked(accept="en;q=0.2, fr-CA;q=0.7")) == "fr"  # by weight, not by order
    assert language_of(Asked(accept="xx-YY,;q=abc,*")) == "en"  # nonsense: English
    assert language_of(Asked(cookie="fr", accept="de-DE")) == "fr"  # the page's choice wins
    assert language_of(Asked(cookie="de-AT")) == "de"
    assert language_of(Asked(cookie="<script>", accept="de")) == "de"  # a cookie that names no language: ignored


def choosing_app() -> TestClient:
    async def page(request):
        return HTMLResponse("<!doctype html><html><head><title>t</title></head><body>page</body></html>")

    async def config(request):
        return JSONResponse({"head": "<head>"})

    app = Starlette(routes=[Route("/", page), Route("/config", config)], middleware=[Middleware(LanguageChoice)])
    return TestClient(app)


def test_a_link_with_lang_sets_the_choice_and_the_page_tells_gradio_before_its_scripts():
    client = choosing_app()
    plain = client.get("/")
    assert "navigator" not in plain.text and COOKIE not in plain.headers.get("set-cookie", "")  # nothing chosen
    chosen = client.get("/?lang=fr&text=A+dog")
    assert chosen.status_code == 200 and f"{COOKIE}=fr" in chosen.headers["set-cookie"]
    assert chosen.text.index("navigator") < chosen.text.index("<title>") and '"fr"' in chosen.text
    assert int(chosen.headers["content-length"]) == len(chosen.content)
    again = client.get("/")  # the cookie kept: the page opens in French again
    assert '"fr"' in again.text and "set-cookie" not in again.headers
    assert client.get("/config").json() == {"head": "<head>"}  # anything but the page's HTML passes untouched
    odd = client.get("/?lang=<script>alert(1)</script>")  # not a language of the page: the choice stands
    assert '"fr"' in odd.text and "alert" not in odd.text


def test_the_page_links_every_language_and_gradio_gets_the_catalogue(translators):
    import app

    config = app.build_demo(translators).get_config_file()
    options = app.launch_options()
    labels = options["i18n"].translations_dict
    assert set(labels) == set(LANGUAGES) and labels["de"]["Translate"] == "Übersetzen"
    assert labels["fr"]["At a glance"] == "En un coup d’œil" and not labels["en"]  # English: the keys as they are
    lesson_text = "Into how many pieces will the model cut your sentence, counting the end mark?"
    assert lesson_text in i18n.catalogue("de") and lesson_text not in labels["de"]  # what the server writes stays
    masthead = next(c for c in config["components"] if "masthead" in str(c["props"].get("value", "")))
    for code in LANGUAGES:
        assert f'href="?lang={code}"' in masthead["props"]["value"]


# -----------------------------------------------------------------------------
# The real page in Chromium, with the browser's language set


VISIBLE_TEXT = r"""() => {
    const seen = el => el.offsetParent !== null && getComputedStyle(el).visibility !== 'hidden';
    const parts = ['#masthead p', '#panel label span', '#panel button', '#panel-extras button',
                   '#panel-extras label span', '#panel-extras input:not([type=radio]):not([type=checkbox])',
                   '[role=tab]', '#examples input',
                   '#source-text textarea'];
    const out = [];
    for (const el of document.querySelectorAll(parts.join(','))) {
        if (!seen(el)) continue;
        const text = (el.value !== undefined && el.tagName !== 'BUTTON' ? el.value || el.placeholder : el.innerText);
        const shown = (text || '').replace(/[▼▲◀]\s*$/, '').trim();  // an accordion's arrow is no word
        if (shown) out.push(shown);
    }
    return {texts: out, lang: document.documentElement.lang};
}"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="needs Debian's chromium (.ci/run installs it)")
@pytest.mark.parametrize("locale,language", [("de-DE", "de"), ("fr-FR", "fr")])
def test_in_german_and_french_no_english_label_is_left_on_the_panel_and_the_tabs(browser, server, locale, language):
    """The browser's language alone: every label, button, tab and placeholder of the panel and the tab bars is in
    the page's language; a text still equal to its English one fails, unless the language writes it the same (a
    name: bertviz, d_model, Rollout...)."""
    english = marked()
    same = {m for m in english if i18n.gettext(language, m) == m}
    samples = {"A man in a blue shirt is riding a bike down the street."}  # the example sentences stay English
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 720})
    page = context.new_page()
    try:
        page.goto(server)
        page.wait_for_function("() => document.querySelector('#translation textarea')?.value.length > 0",
                               timeout=60_000)
        page.click("#decoding button")  # the folded settings open: their labels too
        page.wait_for_function("() => window.tp?.settled()")
        seen = page.evaluate(VISIBLE_TEXT)
        assert seen["lang"] == language
        texts = set(seen["texts"])
        assert len(texts) > 20
        left = {t for t in texts if t in english and t not in same}
        assert not left, f"still English in {locale}: {sorted(left)}"
        assert i18n.gettext(language, "Translate") in texts and i18n.gettext(language, "At a glance") in texts
        translated = [re.sub(r"<[^>]+>", "\n", i18n.gettext(language, m)) for m in english
                      if isinstance(m, str)]  # the words of each
        unknown = {t for t in texts - samples if re.search(r"[a-z]{3}", t)
                   and not any(t in words.split("\n") for words in translated)}
        assert not unknown, f"texts that are not the catalogue's: {sorted(unknown)}"
    finally:
        context.close()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="needs Debian's chromium (.ci/run installs it)")
def test_a_language_chosen_in_the_page_stays_after_a_reload_and_keeps_the_address(browser, server):
    context = browser.new_context(locale="de-DE", viewport={"width": 1280, "height": 720})
    page = context.new_page()
    ready = "() => document.querySelector('#translation textarea')?.value.length > 0"
    try:
        page.goto(server + "?text=A+dog+runs.")
        page.wait_for_function(ready, timeout=60_000)
        assert page.evaluate("document.documentElement.lang") == "de"
        assert page.locator("#translate-button").inner_text() == "Übersetzen"
        page.click('#languages a[hreflang="fr"]')
        page.wait_for_url(re.compile(r"lang=fr"))
        page.wait_for_function(ready, timeout=60_000)
        assert "text=A+dog+runs." in page.url  # the rest of the address kept
        assert page.locator("#translate-button").inner_text() == "Traduire"
        assert page.locator("#source-text textarea").input_value() == "A dog runs."
        page.goto(server)  # a reload without ?lang: the choice stays on this browser
        page.wait_for_function(ready, timeout=60_000)
        assert page.evaluate("document.documentElement.lang") == "fr"
        assert page.locator("#translate-button").inner_text() == "Traduire"
    finally:
        context.close()


LEAF_TEXTS = r"""(scope) => [...document.querySelectorAll(scope)].flatMap(root => [...root.querySelectorAll('*')])
    .filter(e => e.checkVisibility() && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
    .map(e => [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join(' ').trim())
    .filter(t => /[a-zA-Z]{3}/.test(t))"""


def lesson_step(page) -> dict:
    return {part: page.inner_text(f"#lesson-{part}").strip() for part in ("where", "text", "question")}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="needs Debian's chromium (.ci/run installs it)")
@pytest.mark.parametrize("locale,language", [("de-DE", "de"), ("fr-FR", "fr")])
def test_in_german_and_french_the_lesson_and_the_class_pages_say_nothing_in_english(browser, server, locale,
                                                                                    language):
    """The Lesson's step and its answer differ from the English page's, part by part; on the projector and a phone
    in a class, no visible text is an English text of the catalogue that the language writes otherwise."""
    from test_browser import open_page

    english_texts = {m for m in marked() if isinstance(m, str) and "{" not in m and i18n.gettext(language, m) != m}
    pages = {lang: open_page(browser, server, (1280, 720), locale=loc) for lang, loc in (("en", "en-US"),
                                                                                          (language, locale))}
    try:
        steps = {}
        for lang, page in pages.items():
            page.click("#lesson-tab-button")
            where = i18n.Texts(lang)("Step {number} of {steps}: {title}", number=1, steps=10, title="")
            page.wait_for_function("(w) => document.querySelector('#lesson-where')?.innerText.includes(w) && "
                                   "document.querySelector('#lesson-question')?.innerText.includes('?')",
                                   arg=where.strip(), timeout=30_000)
            steps[lang] = lesson_step(page)
            page.click("#lesson-reveal")
            said = i18n.gettext(lang, "Answer:")
            page.wait_for_function("(s) => document.querySelector('#lesson-answer')?.innerText.includes(s)",
                                   arg=said, timeout=30_000)
            steps[lang]["answer"] = page.inner_text("#lesson-answer").strip()
        for part, english in steps["en"].items():
            assert english and steps[language][part] and steps[language][part] != english, part
        teacher = pages[language]
        teacher.click("#class-entry button >> nth=0")
        teacher.click("#class-start")
        teacher.wait_for_selector("#class-card .join-link a", timeout=20_000)
        link = teacher.inner_text("#class-card .join-link a")
        phone = open_page(browser, link, (390, 844), locale=locale)
        phone.wait_for_selector("#class-student", state="visible", timeout=20_000)
        teacher.click("#lesson-ask")
        phone.wait_for_selector(".question[data-state=open] button.choice", timeout=30_000)
        teacher.click("#class-students button >> nth=0")
        teacher.wait_for_function("() => document.querySelectorAll('#class-roster li').length === 1", timeout=20_000)
        seen = {"projector": teacher.evaluate(LEAF_TEXTS, "#class-teacher, #class-said, #lesson-step, #lesson-poll, "
                                                         "#class-wall-fold"),
                "phone": phone.evaluate(LEAF_TEXTS, "#class-student, #class-question, #class-said")}
        for where, texts in seen.items():
            assert len(texts) > 4, (where, texts)
            left = [t for t in texts if t in english_texts]
            assert not left, f"still English on the {where} in {locale}: {left}"
        phone.context.close()
        teacher.click("#class-end")
    finally:
        for page in pages.values():
            page.context.close()


ENGLISH_WORDS = re.compile(r"\b(the|of|and|layer|layers|head|heads|step|query|key|keys|values|share|piece|pieces|"
                           r"sentence|written|mean|every|chosen|learning|training)\b")


def shown_texts(figure) -> list[str]:
    """Every text a figure shows or says on hover, with the sentence's own pieces and plotly's fields taken out:
    a plotly figure's titles, axis and subplot titles, legend names, tick texts and hover templates; an HTML
    figure's text between its tags and its titles."""
    if isinstance(figure, str):
        found = re.findall(r">([^<>]+)<", figure) + re.findall(r'(?:title|aria-label)="([^"]*)"', figure)
    else:
        found = []

        def walk(value, key=""):
            if isinstance(value, dict):
                for k, v in value.items():
                    walk(v, k)
            elif isinstance(value, (list, tuple)):
                for v in value:
                    walk(v, key)
            elif isinstance(value, str) and key in {"text", "name", "hovertemplate", "ticktext"}:
                found.append(value)
        walk(figure.to_plotly_json()["layout"])
        walk([{k: v for k, v in trace.items() if k in {"name", "hovertemplate"}}
              for trace in figure.to_plotly_json()["data"]])
    return [re.sub(r"%\{[^}]*\}", "", text) for text in found]


@pytest.mark.parametrize("language", ["de", "fr"])
def test_every_figure_speaks_the_pages_language(translator, language):
    """The figures of every view and of the Lesson, drawn in German and French: no English word left in their titles,
    axes, legends and hover texts (the tiny model's sentence is made of letters, none of them a word)."""
    from playground import context
    from playground.figures import attributions, beam_tree, cache, commitment, glance, maps, positional, schedule
    from playground.figures.steps import step_detail, step_probabilities
    from playground.i18n import Texts
    from playground.views.rollout import rollout_figure, rollout_maps
    from transformer.decoding import DecodeOptions
    from transformer.interpret import analyses

    _ = Texts(language)
    result = context.run(translator, "tiny", "a b c d e f g")
    searched = context.run(translator, "tiny", result.text, DecodeOptions(strategy="beam", beam_size=3)).translation
    pe, steps = translator.model.positional.pe.cpu(), result.translation.steps
    figures = {f"attention {mode}": maps.attention_figure(result, "cross", 0, "average" if mode == "single" else "0",
                                                          mode, _) for mode in ("single", "heads", "all")}
    figures |= {
        "families": maps.families_figure(result, _), "glance": glance.figure(result, _=_),
        "steps": step_probabilities(steps, _=_), "step": step_detail(steps[0], result.maps.cross[:, :, 0].mean(1),
                                                                     result.maps.source_tokens, 0, _),
        "decided": commitment.strip(analyses.commitment(translator, result.text, result.translation), _),
        "beam": beam_tree.beam_tree(searched.beam_tree, translator.tokenizer.pieces, _),
        "pe": positional.pe_matrix(pe, _=_), "curves": positional.pe_curves(pe, [0, 1], _=_),
        "similarity": positional.pe_similarity(pe, _=_),
        "inputs": positional.embedding_inputs(result.inspection.source_embedded, result.inspection.source_input,
                                              result.maps.source_tokens, "", _),
        "noam": schedule.noam_curves([(512, 4000)], _=_), "training": schedule.training_curves(translator.metrics, _=_),
        "cache": cache.cache_figure(result.cache, 1, _), "cache sizes": cache.size_table(result.cache, 1, _),
        "rollout": rollout_figure(rollout_maps(result), _),
    }
    expl = attributions.explanation(translator, result, 1, ig_steps=4)
    figures |= {"used": attributions.attribution_figure(expl, _), "shares": attributions.source_share_figure(expl, _)}
    left = {name: [t for t in shown_texts(fig) if ENGLISH_WORDS.search(t)] for name, fig in figures.items()}
    assert not {name: texts for name, texts in left.items() if texts}
    english = shown_texts(glance.figure(result))  # the check finds English where there is English
    assert any(ENGLISH_WORDS.search(t) for t in english)


def test_no_menu_the_server_redraws_starts_with_translated_labels(translators):
    """A menu (Dropdown) built with translated labels (gr.I18n) and given new choices by the server keeps showing the
    old translation, and the browser sends that text back as the chosen value, which the menu refuses ("Mittelwert
    is not in the list of choices"). A menu the views redraw is written in the page's language by the server."""
    import gradio as gr
    from gradio.i18n import I18nData

    import app

    page = app.build_page(translators)
    redrawn = {c for view in page.views.values() for c in view.draws if isinstance(c, gr.Dropdown)}
    assert len(redrawn) > 5
    assert not [(m.label, c) for m in redrawn for c in m.choices if isinstance(c[0], I18nData)]


def test_the_model_cards_headline_and_a_views_refusal_in_the_pages_language(translator):
    import gradio as gr
    from starlette.requests import Request

    from playground.i18n import Texts
    from playground.views.card import model_card
    from playground.views.common import need
    from playground.view import to_page

    english, german = model_card(translator, "en-de"), model_card(translator, "en-de", _=Texts("de"))
    assert english.startswith("### EN-DE checkpoint") and "**What it knows:**" in english and "Running on" in english
    assert german.startswith("### Modell EN-DE") and "**Was es kann:**" in german and "Läuft auf" in german
    assert "What it knows" not in german and "Running on" not in german and "Test scores" not in german
    refused = to_page(lambda result, request: need(result))  # a view's handler, before any translation
    browser = gr.Request(Request({"type": "http", "headers": [(b"accept-language", b"fr-FR,fr;q=0.9")]}))
    with pytest.raises(gr.Error) as said:
        refused(None, browser)
    assert said.value.message == "traduis d’abord une phrase"


def test_an_error_carries_its_message_and_values_and_is_written_in_its_readers_language():
    """An error with values (its message id and what fills it) is written in the reader's language where it is
    shown, never looked up already formatted (which no catalogue holds); str() stays the English."""
    from playground.i18n import Texts
    from playground.view import to_page
    from transformer.errors import InputError

    error = InputError("use at most {n} symbols", n=12)
    assert str(error) == "use at most 12 symbols" and error.said() == str(error)
    assert error.said(Texts("de")) == "verwende höchstens 12 Zeichen"
    assert error.said(Texts("fr")) == "utilise au plus 12 symboles"

    import gradio as gr
    from starlette.requests import Request

    german = gr.Request(Request({"type": "http", "method": "GET", "path": "/", "query_string": b"",
                                 "headers": [(b"accept-language", b"de-DE")]}))

    @to_page
    def handler(request: gr.Request):
        raise error
    with pytest.raises(gr.Error) as shown:
        handler(german)
    assert shown.value.message == "verwende höchstens 12 Zeichen"
