"""The page's layout, assembled from the registry: the translate panel on top, one tab per view (views inside
groups); each event wired to the runtime's handlers (playground/runtime.py) with only the inputs it reads and the
outputs it may set."""
from __future__ import annotations

import asyncio
import collections
import functools
import shutil
import tempfile
import weakref
from pathlib import Path
from urllib.parse import parse_qsl

import gradio as gr
from starlette.middleware import Middleware

from playground import links, registry
from playground.bertviz_view import script_files
from transformer import Translator, archive

from .view import listen
from .gradio_internals import LeanBlocks, as_on_the_page, has_login, without_api_schemas
from .runtime import Page
from .api import register as register_api
from .context import ROOT, Caches, Context
from .panel import TranslatePanel
from .classroom.panel import ClassPanel
from .classroom.passes import PagePass
from .classroom.store import Store, default_url
from .uploads import Uploads
from .i18n import LANGUAGES, LanguageChoice, _l, asks_for_the_page, page_i18n
from .tabs import Tabs
from .views import CLASSES

SCRIPT = ROOT / "assets" / "page.js"
STYLE = ROOT / "assets" / "style.css"


def launch_options(store: Store | None = None) -> dict:
    """What `launch` takes besides the address: the page's style and its script (one static file, sent once and
    cached by the browser), its theme, the largest upload (a model brought: transformer.archive's limit), and its
    languages: the labels' translations and the visitor's choice (playground/i18n.py). With the page's `store`, the
    page's HTML gives each browser a pass that its class joins show (playground/classroom/passes.py)."""
    passed = [Middleware(PagePass, secret=store.browser_secret())] if store is not None else []
    return dict(css=STYLE.read_text(encoding="utf-8"), head=f'<script src="gradio_api/file={SCRIPT}"></script>',
                theme=gr.themes.Default(font=[gr.themes.Font("system-ui"), "sans-serif"]),
                max_file_size=archive.MAX_ARCHIVE, i18n=page_i18n(),
                app_kwargs={"middleware": [Middleware(LanguageChoice), *passed, Middleware(SamePage)]})


class SamePage:
    """ASGI middleware: the page's HTML (GET /) as Gradio wrote it for the first visitor at an address, sent as it is
    to the next. Gradio otherwise copies and rewrites the page's whole config for every visitor (28 ms each on a
    laptop's CPU: docs/many-users.md). The HTML is the same for every visitor at one address, so it is kept per what
    Gradio writes the page's addresses from (the URL's scheme, host and root path, the Host and X-Forwarded headers),
    for a few addresses at most; visitors who ask while it is first made wait for it. A Gradio deep link or page
    (?deep_link=, ?page=), a server with a login, and an answer that sets a cookie or comes in parts pass untouched."""

    KEPT = 8  # addresses

    def __init__(self, app):
        self.app, self.pages, self.making = app, collections.OrderedDict(), {}

    async def __call__(self, scope, receive, send):
        asked = {k for k, _ in parse_qsl(scope.get("query_string", b"").decode("latin-1"))}
        if not asks_for_the_page(scope) or asked & {"deep_link", "page"} or has_login(scope):
            return await self.app(scope, receive, send)
        address = (scope.get("scheme"), tuple(scope.get("server") or ()), scope.get("root_path", ""), scope["path"],
                   tuple((k, v) for k, v in scope["headers"] if k == b"host" or k.startswith(b"x-forwarded")))
        making = self.making.get(address)
        if making is not None:  # a class opening at once: the first visitor's page is being made, the rest wait
            await making.wait()
        if address in self.pages:
            self.pages.move_to_end(address)
            start, body = self.pages[address]
            await send(dict(start))
            return await send({"type": "http.response.body", "body": body, "more_body": False})
        if making is not None:  # that page was not kept: this one is made for this visitor
            return await self.app(scope, receive, send)
        started: dict = {}

        async def kept(message):
            if message["type"] == "http.response.start":
                started.update(message)
            elif message["type"] == "http.response.body" and message.get("more_body"):
                started.clear()  # a page sent in parts: not kept
            elif (message["type"] == "http.response.body" and started.get("status") == 200
                  and not any(k.lower() == b"set-cookie" for k, _ in started.get("headers", []))):
                self.pages[address] = (dict(started), message.get("body", b""))
                while len(self.pages) > self.KEPT:
                    self.pages.popitem(last=False)
            await send(message)

        self.making[address] = made = asyncio.Event()
        try:
            return await self.app(scope, receive, kept)
        finally:
            del self.making[address]
            made.set()


def build_page(translators: dict[str, Translator], problems: list[str] | None = None,
               bertviz_offline: bool = True, cache_size: int = 32, public_url: str | None = None,
               store: Store | None = None, trusted_proxies: frozenset[str] = frozenset()) -> Page:
    """The whole page, top to bottom; bertviz_offline=False loads bertviz's scripts from its CDN instead of the app's
    copies. cache_size: translations kept for every user (with their hooked passes; see docs/many-users.md).
    public_url: the address other machines open, for links made on this machine's loopback (links.shared_address).
    store: where classes are kept (playground/classroom/store.py); by default a SQLite file in a new temporary folder.
    trusted_proxies: balancers whose X-Forwarded-For names the visitor (the class's limits per address)."""
    ctx = context_for(translators, bertviz_offline, cache_size, public_url)
    store = store or Store(default_url(Path(tempfile.mkdtemp(prefix="transformer-playground-classes-"))))
    with LeanBlocks(title="Transformer Playground", delete_cache=(3600, 3600)) as demo:
        gr.HTML(f'<div id="masthead">{MASTHEAD}<nav id="languages">{LANGUAGE_LINKS}</nav></div>',
                apply_default_css=False)
        for problem in problems or []:
            gr.Markdown(f"**Checkpoint problem:** {problem}", elem_classes="problem")
        result = gr.State(None)  # per user: the current translation
        signal = gr.State(0)  # set by an event to a new number: the open tab draws itself
        classes = ClassPanel(ctx, store, trusted_proxies)
        classes.question_controls()  # a phone's question: first on the page
        panel = TranslatePanel(ctx, classes.entry_controls, classes.present_controls)
        classes.build()
        views, tabs = view_tabs(ctx, panel, signal)
        classes.wall_controls()  # the projector's wall, under the views
        page = Page(demo, ctx, panel, result, tabs, views, classroom=classes, loaders=[classes.on_load],
                    places=[classes.place])
        wire(page, classes)
        register_api(ctx)
    without_api_schemas(demo.blocks.values())
    page.views = with_copies(page)
    classes.build_off_page()
    return page


# the page's languages as links ("?lang=de": the choice stays on this browser, playground/i18n.py), each in its own
# language; the page's own is marked by the style (html[lang])
LANGUAGE_LINKS = " · ".join(f'<a href="?lang={code}" hreflang="{code}" lang="{code}">{name}</a>'
                            for code, name in LANGUAGES.items())
MASTHEAD = _l("<h1>Transformer Playground</h1><p>Type an English sentence and watch a small Transformer translate it: "
              "where it looks, how sure it is, and how it learned.</p>")


def context_for(translators: dict[str, Translator], bertviz_offline: bool, cache_size: int,
                public_url: str | None) -> Context:
    """The server's state for one page: its checkpoints, caches, and folders for downloads and brought models
    (removed at exit); bertviz's scripts as static files of the app, or from its CDN."""
    scripts = "cdn"
    gr.set_static_paths([str(SCRIPT)] + ([str(p) for p in script_files()] if bertviz_offline else []))
    if bertviz_offline:  # jQuery, d3 and the shim: static files of the app, sent once, cached by the browser
        scripts = [f"gradio_api/file={p}" for p in script_files()]
    models = Path(tempfile.mkdtemp(prefix="transformer-playground-models-"))  # models teachers bring
    ctx = Context(translators, Path(tempfile.mkdtemp(prefix="transformer-playground-")), scripts,
                  caches=Caches.sized(cache_size), public_url=public_url, uploads=Uploads(models))
    for folder in (ctx.downloads, models):  # at exit, or when the page goes
        weakref.finalize(ctx, shutil.rmtree, folder, ignore_errors=True)
    return ctx


def view_tabs(ctx: Context, panel: TranslatePanel, signal: gr.State) -> tuple[dict, Tabs]:
    """Every view's tab, in the registry's order: a group's tab where its first view comes, with its views' tabs
    inside; a view drawn inside another's tab under it. Every tab is a tab on a phone, on as many lines as the tabs
    take. A top-level tab whose views are all built on opening (View.built_on_opening) is built for each visitor who
    opens it (`built_for_visitors`), woken by two hidden numbers made after the tabs; the others' views are built here.
    Hidden numbers, not gr.States: gradio's browser sets a State that an event leaves out to nothing, which fires
    its change event and built a group again for a visitor who had it."""
    views, groups, group_tabs, items, built, drawn, for_visitors = {}, {}, {}, {}, {}, {}, []

    def build_here(key: str):
        entry = registry.entry(key)
        views[key] = CLASSES[key](entry, ctx, panel)
        items[key] = views[key].tab
        for inside in registry.tabs()[key][1:]:
            with items[key]:
                views[inside] = CLASSES[inside](registry.entry(inside), ctx, panel)

    with gr.Tabs(overflow_behavior="wrap") as top:
        for unit, keys in registry.top_tabs().items():
            group = registry.entry(keys[0]).group
            label = registry.GROUP_LABELS[group] if group else registry.entry(unit).label
            if all(CLASSES[k].built_on_opening for k in keys):
                items[unit] = gr.Tab(_l(label), id=unit, elem_id=f"{unit}-group" if group else f"{unit}-tab")
                group_tabs |= {group: items[unit]} if group else {}
                for_visitors.append(unit)
            elif group:
                with gr.Tab(_l(label), id=group, elem_id=f"{group}-group") as group_tabs[group], \
                        gr.Tabs(overflow_behavior="wrap") as groups[group]:
                    for key in registry.members(group):
                        build_here(key)
            else:
                build_here(unit)
    for unit in for_visitors:  # side by side, so that one form holds them all (gradio wraps each run of inputs in one)
        built[unit], drawn[unit] = gr.Number(0, visible=False), gr.Number(0, visible=False)
    return views, Tabs(top, groups, group_tabs, signal, items, built, drawn)


def with_copies(page: Page) -> dict:
    """The page's views, with a copy off the page of each view built for visitors (for tools and tests), in the
    registry's order."""
    with gr.Blocks():  # not the page's
        copies = {key: CLASSES[key](registry.entry(key), page.ctx, page.panel)
                  for unit in page.tabs.built for key in registry.top_tabs()[unit]}
    return {key: page.views.get(key) or copies[key] for key in registry.BY_KEY}


def built_for_visitors(page: Page, event) -> None:
    """Each top-level tab whose views are built for each visitor who opens it (most visitors open few): its `built`
    state, set when it first opens, builds them once (gr.render), and they draw themselves as they come in, then
    whenever its `drawn` state changes (Tabs.wire)."""
    for unit, built in page.tabs.built.items():
        def build(opened: bool, request: gr.Request, unit=unit):
            if opened:
                build_tab(page, event, unit, page.sessions.of(request))
        with page.tabs.items[unit]:
            gr.render(inputs=[built], triggers=[built.change])(build)


def build_tab(page: Page, event, unit: str, session) -> None:
    """Top-level tab `unit`'s views for one visitor (inside its gr.render): a group's tabs with a view in each (the
    one the visitor opens, selected), or the tab's views; their own events, and those that draw them. Gradio's
    browser takes one render's events on a component outside it, not two renders' (a later render's replace an
    earlier's), so each tab listens to its own `drawn` state, never to the page's signal."""
    keys, group = registry.top_tabs()[unit], None if unit in registry.BY_KEY else unit
    views, inner = {}, None
    if group is None:  # one view's tab (and those drawn inside it)
        views = {k: CLASSES[k](registry.entry(k), page.ctx, page.panel, page.tabs.items[unit] if k == unit else None)
                 for k in keys}
    else:
        with gr.Tabs(overflow_behavior="wrap", selected=session.group_tab.get(group, keys[0])) as inner:
            for key in registry.members(group):
                entry = registry.entry(key)
                with gr.Tab(_l(entry.label), id=key, elem_id=f"{key}-tab") as tab:
                    views |= {k: CLASSES[k](registry.entry(k), page.ctx, page.panel, tab if k == key else None)
                              for k in registry.tabs()[key]}
    for view in views.values():
        view.starting_from(session)
        view.wire(page.result)
    links.wire_links(page, event, views.values())
    if "card" in views:  # a model brought: opened, chosen, and the sentence translated with it
        card = views["card"]
        brought = event([card.bring.upload], page.bringer(card), page.first, page.panel.controls + [card.bring],
                        page.translated | {page.panel.pair, card.brought}, concurrency_limit=1, concurrency_id="bring")
        page.classroom.teaching.share_after(brought, event)
    page.classroom.questions.wire_views(views, event, session)
    shown = list(views.values())
    draw = page.tab_drawer(None if group else unit, group, views, select=inner)
    tabs = [inner] if inner is not None else []
    # one queue for every visitor's drawing of this tab, as for a tab on the page: an event made in a render is its
    # own concurrency group otherwise, and a class opening the tab at once drew it on as many threads as visitors
    queue = dict(concurrency_id=f"draw {unit}")
    event(page.demo.load, draw, shown, draws=tabs, **queue)  # drawn once built: gradio runs a render's load events
    event([page.tabs.drawn[unit].change], draw, shown, draws=tabs, **queue)  # after it
    for key in registry.members(group) if group else []:
        event([views[key].tab.select], page.tab_drawer(key, group, views), [views[k] for k in registry.tabs()[key]],
              **queue)
    as_on_the_page()


def wire(page: Page, classes: ClassPanel) -> None:
    """Every event of the page. `event(triggers, handler, views, reads, draws)` wires a handler to the inputs the
    views in `shown` read (with the pair, the user's translation and `reads`) and the outputs they draw (and
    `draws`); a click while it runs is kept and runs next (always_last)."""
    demo, ctx, panel, result, tabs = page.demo, page.ctx, page.panel, page.result, page.tabs

    def event(trigger, handler, shown: list, reads=(), draws=(), **kwargs):
        trigger = functools.partial(gr.on, trigger) if isinstance(trigger, list) else trigger
        inputs = {panel.pair, result} | {c for v in shown for c in v.reads} | set(reads)
        outputs = {c for v in shown for c in v.draws} | set(draws)
        return listen(trigger, handler, inputs, outputs, **kwargs | {"trigger_mode": "always_last"})

    panel.wire()
    for view in page.on_page.values():
        view.wire(result)
    first = page.first
    # Translate or Enter; another pair; after an example is picked, a new sample seed, the comparison or a wall's
    # "Show in every view", the same (gr.on takes a component's events, not what follows another event). It draws
    # the first tab and signals any other open tab. Only Translate and Enter are a user's own: a class's phone
    # sends after those. A class at once is translated together.
    translated, together = page.translated, dict(concurrency_limit=16, concurrency_id="translate")
    asked = event([panel.go.click, panel.text.submit], page.show_translation, first, panel.controls, translated,
                  **together)
    demo.unload(page.forget_models)  # the models it brought (the Model card's, built for each visitor: build_tab)
    classes.wire(page, event, translated_by_user=[asked])
    for trigger in ([panel.pair.input], panel.picked.then, panel.reseeded.then, panel.compared.then,
                    classes.opened_sentence.then):
        event(trigger, page.show_translation, first, panel.controls, translated, **together)
    # another sentence of the text chosen in the menu under the translation: the views show it
    event([panel.which.input], page.show_sentence, first, panel.controls + [panel.which], translated, **together)
    tabs.wire(page, event)
    built_for_visitors(page, event)
    links.wire(page, event)
    if ctx.pairs:  # the page opens translated, with a shared link's settings when it has them
        event(demo.load, page.load, first, set(panel.controls) | {classes.member, classes.teacher},
              set(panel.outputs) | set(panel.decoding) | {result, panel.pair, panel.text, panel.present}
              | tabs.components | {tabs.signal} | classes.opening,
              concurrency_limit=4)  # served from the caches: a class opening at once waits little


def build_demo(translators: dict[str, Translator], problems: list[str] | None = None,
               bertviz_offline: bool = True, public_url: str | None = None, store: Store | None = None,
               trusted_proxies: frozenset[str] = frozenset()) -> gr.Blocks:
    return build_page(translators, problems, bertviz_offline, public_url=public_url, store=store,
                      trusted_proxies=trusted_proxies).demo
