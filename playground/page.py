"""The page, assembled from the registry: the translate panel on top, one tab per view (views inside groups), and
every event wired to the runtime's handlers."""
from __future__ import annotations

import functools
import shutil
import tempfile
import weakref
from pathlib import Path

import gradio as gr

from playground import registry
from playground.bertviz_view import script_files
from transformer import Translator

from .handlers import listen
from .runtime import CHECK_JS, TRANSLATE_JS, Page
from .views.api import register as register_api
from .context import ROOT, Caches, Context
from .panel import TranslatePanel
from .tabs import Tabs
from .views import CLASSES

SCRIPT = ROOT / "assets" / "page.js"
STYLE = ROOT / "assets" / "style.css"


def launch_options() -> dict:
    """What `launch` takes besides the address: the page's style and its script (one static file, sent once and
    cached by the browser), and its theme."""
    return dict(css=STYLE.read_text(encoding="utf-8"), head=f'<script src="gradio_api/file={SCRIPT}"></script>',
                theme=gr.themes.Default(font=[gr.themes.Font("system-ui"), "sans-serif"]))


def build_page(translators: dict[str, Translator], problems: list[str] | None = None,
               bertviz_offline: bool = True, cache_size: int = 32) -> Page:
    """The whole page; bertviz_offline=False loads bertviz's scripts from its CDN instead of the app's copies.
    cache_size: translations kept for every user (with their hooked passes; see docs/many-users.md)."""
    scripts = "cdn"
    gr.set_static_paths([str(SCRIPT)] + ([str(p) for p in script_files()] if bertviz_offline else []))
    if bertviz_offline:  # jQuery, d3 and the shim: static files of the app, sent once, cached by the browser
        scripts = [f"gradio_api/file={p}" for p in script_files()]
    ctx = Context(translators, Path(tempfile.mkdtemp(prefix="transformer-playground-")), scripts,
                  caches=Caches.sized(cache_size))
    weakref.finalize(ctx, shutil.rmtree, ctx.downloads, ignore_errors=True)  # at exit, or when the page goes
    with gr.Blocks(title="Transformer Playground", delete_cache=(3600, 3600)) as demo:
        # Which view is open, as ordinary inputs that the tabs' select handlers set: the open tab's key (created
        # first: an event's js finds it first), and each group's view open inside it
        open_tab = gr.Textbox(registry.FIRST, visible=False, elem_id="open-tab")
        group_open = {g.key: gr.Textbox(registry.members(g.key)[0], visible=False) for g in registry.GROUPS}
        gr.HTML("<div id=\"masthead\"><h1>Transformer Playground</h1><p>Type an English "
                "sentence and watch a small Transformer translate it: where it looks, how sure it is, and how it "
                "learned.</p></div>", apply_default_css=False)
        for problem in problems or []:
            gr.Markdown(f"**Checkpoint problem:** {problem}", elem_classes="problem")
        result = gr.State(None)
        # clicked by tp.translated when the open tab changed during a translation: gradio has no conditional .then
        redraw = gr.Button("Redraw the open tab", visible="hidden", elem_id="redraw-open")
        panel = TranslatePanel(ctx)
        views, group_tabs, group_tab = {}, {}, {}
        with gr.Tabs() as top:
            for entry in registry.VIEWS:  # in the registry's order; a group's tab where its first view comes
                if entry.group is None:
                    if entry.inside is None:
                        views[entry.key] = CLASSES[entry.key](entry, ctx, panel)
                    else:
                        with views[entry.inside].tab:
                            views[entry.key] = CLASSES[entry.key](entry, ctx, panel)
                elif entry.group not in group_tabs:
                    group = entry.group
                    with gr.Tab(registry.GROUP_LABELS[group], id=group, elem_id=f"{group}-group") as tab, \
                            gr.Tabs() as inner:
                        for key in registry.members(group):
                            views[key] = CLASSES[key](registry.entry(key), ctx, panel)
                    group_tabs[group], group_tab[group] = inner, tab
        tabs = Tabs(top, group_tabs, open_tab, group_open)
        page = Page(demo, ctx, panel, result, tabs, views)

        panel.wire(open_tab)
        for view in views.values():
            view.wire(result)
        every = list(views.values())
        inputs = set(panel.controls) | {c for v in every for c in v.reads} | {result, open_tab}
        outputs = {c for v in every for c in v.draws} | set(panel.outputs) | {result}
        drawn = outputs - set(panel.outputs) - {result}
        # A click on Translate, Enter or another pair: one event; after an example is picked, a new sample seed or
        # the comparison, the same (gr.on takes a component's events, not what follows another event)
        triggers = (functools.partial(gr.on, [panel.go.click, panel.text.submit, panel.pair.input]),
                    panel.picked.then, panel.reseeded.then, panel.compared.then)
        for trigger in triggers:
            translated = listen(trigger, page.show_translation, inputs, outputs, js=TRANSLATE_JS,
                                trigger_mode="always_last")  # a click while one runs is kept: it runs next
            translated.then(None, open_tab, js=CHECK_JS)  # in the browser: no second event unless the tab changed
        listen(redraw.click, page.redraw_open, inputs, drawn, show_progress="hidden",
               trigger_mode="always_last")  # a click while one is pending still runs, after it: the newest wins
        for link in (link for view in every for link in view.links):  # a glance box, the Lesson's "go deeper"
            listen(link.open, page.show_part, inputs, drawn | tabs.components, show_progress="hidden",
                   trigger_mode="always_last")

        def on_select(tab: gr.Tab, handler, keys: list[str], reads: set, says: set) -> None:
            """tab's select event: it reads and sets what the views it may draw read and set, and says which view is
            open (one event per select: a js-only event beside it cost a class 5 % on translating)."""
            shown = [views[k] for key in keys for k in registry.tabs()[key]]
            listen(tab.select, handler, {open_tab, panel.pair, result} | reads | {c for v in shown for c in v.reads},
                   {c for v in shown for c in v.draws} | says)

        for key in registry.tabs():
            group = registry.entry(key).group
            on_select(views[key].tab, page.opener(key, group), [key], set(),
                      {open_tab} | ({group_open[group]} if group else set()))
        for group, tab in group_tab.items():  # a group's tab: the view open in it
            on_select(tab, page.opener(None, group), registry.members(group), {group_open[group]},
                      {open_tab, group_open[group]})
        if ctx.pairs:  # the page opens translated, with a shared link's settings when it has them
            # It draws the tab that opens first; a link's other view asks for its drawing once the page is open
            # (tp.translated): every output is a cost to each visitor, even one the event leaves as it is
            first = [views[k] for k in registry.tabs()[registry.FIRST]]
            lesson = views["lesson"].number
            reads = set(panel.controls) | {c for v in first for c in v.reads} | {result, open_tab, lesson}
            opened = ({c for v in first for c in v.draws} | set(panel.outputs) | set(panel.decoding)
                      | {result, panel.pair, panel.text, panel.present, lesson} | tabs.components)
            loaded = listen(demo.load, page.open, reads, opened, js=TRANSLATE_JS,
                            concurrency_limit=4)  # served from the caches: a class opening at once waits little
            loaded.then(None, open_tab, js=CHECK_JS)
        register_api(ctx)
    return page


def build_demo(translators: dict[str, Translator], problems: list[str] | None = None,
               bertviz_offline: bool = True) -> gr.Blocks:
    return build_page(translators, problems, bertviz_offline).demo
