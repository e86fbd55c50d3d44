"""The page's languages: one gettext catalogue per language (playground/locale/LANG/LC_MESSAGES/playground.po, read
with Babel), the page's labels through Gradio's I18n built from it, and the language of a request.

- `_l("Translate")` marks a label of the page: the browser shows it in the page's language (gr.I18n); `N_("...")` a
  text in a table, translated where it is shown. `pybabel extract` finds both (docs/translating.md); the English
  text is the key.
- `language_of(request)`: the language a visitor chose in the page (the `tp-language` cookie, which "?lang=de" sets),
  else the browser's (Accept-Language), else English.
- `LanguageChoice`: the middleware that lets the chosen language win over the browser's in Gradio's own choice too.
"""
from __future__ import annotations

import functools
import io
import json
import re
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal, format_percent
from babel.support import NullTranslations, Translations

LANGUAGES = {"en": "English", "de": "Deutsch", "fr": "Français"}  # each in its own language: the page's choice
DEFAULT = "en"
COOKIE = "tp-language"
LANGUAGE = "language"  # a view's values[LANGUAGE]: the language of the session it draws for
LOCALE = Path(__file__).resolve().parent / "locale"
DOMAIN = "playground"


def po_file(language: str) -> Path:
    return LOCALE / language / "LC_MESSAGES" / f"{DOMAIN}.po"


@functools.cache
def read(language: str):
    """One language's catalogue (babel's Catalog)."""
    with po_file(language).open("rb") as f:
        return read_po(f, locale=language, domain=DOMAIN)


@functools.cache
def catalogue(language: str) -> dict[str, str]:
    """msgid -> msgstr of one language: the translated, reviewed entries (neither empty nor fuzzy)."""
    if language == DEFAULT:
        return {}
    return {m.id: m.string for m in read(language) if m.id and isinstance(m.id, str) and m.string and not m.fuzzy}


@functools.cache
def translations(language: str) -> NullTranslations:
    """One language's gettext translations (plurals by the catalogue's own rule), made from its .po in memory:
    nothing to compile. Untranslated and fuzzy entries fall back to the English."""
    if language not in LANGUAGES or language == DEFAULT:
        return NullTranslations()
    compiled = io.BytesIO()
    write_mo(compiled, read(language), use_fuzzy=False)
    compiled.seek(0)
    return Translations(compiled, domain=DOMAIN)


class Texts:
    """The texts the server writes, in one language: `_("{n} pieces", n=3)`, `_.plural("{n} piece", "{n}
    pieces", n)`, numbers as the language writes them (`_.number(0.5)`: "0.50", "0,50"). `pybabel extract` finds
    `_(...)` and `.plural(...)` (docs/translating.md); the English text is the key."""

    def __init__(self, language: str = DEFAULT):
        self.language = language if language in LANGUAGES else DEFAULT

    def __call__(self, msgid: str, **values) -> str:
        text = translations(self.language).gettext(msgid)
        return text.format(**values) if values else text

    def plural(self, singular: str, plural: str, n: int, **values) -> str:
        return translations(self.language).ngettext(singular, plural, n).format(n=n, **values)

    def number(self, x: float, digits: int = 2) -> str:
        """x with `digits` decimals and the language's separators: 1,234.50 / 1.234,50 / 1 234,50."""
        return format_decimal(x, format="#,##0" + ("." + "0" * digits if digits else ""), locale=self.language)

    def percent(self, x: float) -> str:
        """A share as a percentage, as the language writes it: 42 % in German and French, 42% in English."""
        return format_percent(x, locale=self.language)

    def quoted(self, text: str) -> str:
        """`text` in the language's quotation marks, nothing between them and the words: “dog”, „Hund“, « chien »
        (French's spaces do not break)."""
        opening, closing = QUOTES[self.language]
        return f"{opening}{text.strip()}{closing}"


QUOTES = {"en": ("“", "”"), "de": ("„", "“"), "fr": ("«\u00a0", "\u00a0»")}
ENGLISH = Texts(DEFAULT)


# the page's labels in each language, filled as the page is built (_l): what the browser needs and nothing more (the
# page's config carries them to every visitor; the texts the server writes stay on the server)
LABELS: dict[str, dict[str, str]] = {language: {} for language in LANGUAGES}


@functools.cache
def page_i18n():
    """Gradio's I18n (gr.I18n) of the page's labels: the very dicts _l fills, so that the page's config, made at
    launch, holds every label the page was built with. English shows its keys as they are."""
    import gradio as gr

    return gr.I18n(**LABELS)


def _l(msgid: str):
    """A label of the page, shown in the visitor's language by the browser."""
    from .gradio_internals import label

    for language, labels in LABELS.items():
        if language != DEFAULT:
            labels[msgid] = gettext(language, msgid)
    return label(msgid)


def N_(msgid: str) -> str:
    """A text to translate where it is shown, not here (a name in a table): marked for the catalogue only."""
    return msgid


def gettext(language: str, msgid: str) -> str:
    """`msgid` in `language` (English where the catalogue has no translation)."""
    return catalogue(language).get(msgid, msgid) if language in LANGUAGES else msgid


def chosen(value: str | None) -> str | None:
    """One of LANGUAGES from a cookie's or a link's value ("de", "de-AT", "fr_CA"), or None."""
    code = re.split(r"[-_]", value or "", maxsplit=1)[0].lower()
    return code if code in LANGUAGES else None


def from_browser(accept_language: str | None) -> str | None:
    """The first of the browser's languages (Accept-Language, by its weights) that the page speaks."""
    weighted = []
    for i, part in enumerate((accept_language or "").split(",")):
        tag, _, q = part.strip().partition(";q=")
        try:
            weighted.append((-float(q or 1), i, Locale.parse(tag.strip(), sep="-").language))
        except (ValueError, UnknownLocaleError):
            continue
    return next((code for *_, code in sorted(weighted) if code in LANGUAGES), None)


def language_of(request) -> str:
    """The language of a request (a gr.Request, a starlette Request, or None): the page's choice, else the
    browser's, else English."""
    if request is None:
        return DEFAULT
    cookies = getattr(request, "cookies", None) or {}
    headers = getattr(request, "headers", None) or {}
    return chosen(cookies.get(COOKIE)) or from_browser(headers.get("accept-language")) or DEFAULT


# -----------------------------------------------------------------------------
# The chosen language in the browser: Gradio picks its labels' language from the browser's (navigator.language) as
# the page starts. The page's HTML tells it the visitor's choice first, and "?lang=de" makes that choice (a cookie,
# a year): the page then opens in that language on this browser until another is chosen.

YEAR_S = 365 * 24 * 3600


def told(language: str) -> bytes:
    """The script, first in the page's head, that gives Gradio the chosen language as the browser's."""
    code = json.dumps(language)
    return (f"<script>(function(){{var l={code};try{{Object.defineProperty(navigator,'language',{{get:function()"
            f"{{return l}}}});Object.defineProperty(navigator,'languages',{{get:function(){{return [l]}}}})}}"
            f"catch(e){{}}}})();</script>").encode()


def asks_for_the_page(scope) -> bool:
    """True for an ASGI request of the page's HTML (GET /), which the page's middlewares handle."""
    return scope["type"] == "http" and scope["method"] == "GET" and scope["path"].rstrip("/") in ("", "/")


class LanguageChoice:
    """ASGI middleware for the page's HTML (GET /): "?lang=xx" sets the visitor's choice (the cookie), and a choice
    made is told to Gradio before its scripts run. Everything else passes untouched."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if not asks_for_the_page(scope):
            return await self.app(scope, receive, send)
        from starlette.requests import Request

        request = Request(scope)
        asked = chosen(request.query_params.get("lang"))
        language = asked or chosen(request.cookies.get(COOKIE))
        if language is None:
            return await self.app(scope, receive, send)
        started: dict = {}

        async def sent(message):
            if message["type"] == "http.response.start":
                started.update(message)
                return
            if message["type"] == "http.response.body" and started:
                body, more = message.get("body", b""), message.get("more_body", False)
                if more:  # a streamed page: not ours to change; pass it on as it is
                    await send(started)
                    started.clear()
                    return await send(message)
                html = "text/html" in dict(started.get("headers", [])).get(b"content-type", b"").decode()
                if html:
                    body = body.replace(b"<head>", b"<head>" + told(language), 1)
                headers = [(k, v) for k, v in started.get("headers", []) if k.lower() != b"content-length"]
                headers.append((b"content-length", str(len(body)).encode()))
                if asked:
                    headers.append((b"set-cookie", f"{COOKIE}={asked}; Path=/; Max-Age={YEAR_S}; "
                                                   f"SameSite=Lax".encode()))
                await send(started | {"headers": headers})
                started.clear()
                return await send({"type": "http.response.body", "body": body, "more_body": False})
            return await send(message)

        return await self.app(scope, receive, sent)
