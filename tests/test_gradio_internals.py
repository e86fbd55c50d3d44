"""The page's reaches into Gradio's internals (playground/gradio_internals.py), each run against the installed
Gradio: a test here fails when Gradio changes under one of them. And none outside that module."""
from __future__ import annotations

import ast
import asyncio

import gradio as gr

from conftest import ROOT
from playground import gradio_internals
from playground.gradio_internals import LeanBlocks, as_on_the_page, component_id, has_login, label, plot_data


def test_no_module_of_the_page_but_one_reaches_into_gradio():
    """A private attribute (`x._y`, not the module's own `self._y`), a Gradio submodule imported, or a class
    swapped: only in playground/gradio_internals.py. (SQLAlchemy's `Row._mapping` is its public API.)"""
    found = []
    for path in sorted((ROOT / "playground").rglob("*.py")):
        if path.name == "gradio_internals.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Attribute):
                private = node.attr.startswith("_") and not node.attr.endswith("__") and node.attr != "_mapping"
                own = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
                if (private and not own) or node.attr == "__class__":
                    found.append(f"{where} {ast.unparse(node)}")
            elif isinstance(node, ast.Import | ast.ImportFrom):
                modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                found += [f"{where} import {m}" for m in modules if m.startswith("gradio.")]
    assert found == []


def test_the_reaches_read_what_the_installed_gradio_has():
    """What each reach reads: a component's id, a State's statefulness, a function's batch, inputs, outputs and
    the render it was made in, the running render's context; each there, of the kind read."""
    with gr.Blocks() as demo:
        box, state = gr.Textbox(), gr.State(1)
        box.change(lambda x: x, box, state)
    fn = next(iter(demo.fns.values()))
    assert isinstance(component_id(box), int) and component_id(box) != component_id(state)
    assert state.stateful and not box.stateful and isinstance(box.skip_api, bool)
    assert fn.batch is False and fn.inputs == [box] and fn.outputs == [state] and fn.rendered_in is None
    context = gradio_internals.gradio.context.LocalContext
    assert context.blocks_config.get(None) is None and context.renderable.get(None) is None  # outside a render
    assert label("Translate").key == "Translate" and plot_data("{}").type == "plotly"


def test_a_page_behind_a_login_is_told_apart():
    class App:
        auth, auth_dependency = None, None

    class Login(App):
        auth = [("a", "b")]

    class Sso(App):
        auth_dependency = staticmethod(lambda request: "a")

    assert not has_login({"app": App()}) and not has_login({})
    assert has_login({"app": Login()}) and has_login({"app": Sso()})


def test_a_renders_parts_are_made_interactive_inputs_and_go_out_of_the_api():
    """as_on_the_page at the end of a gr.render, run as Gradio runs it for a visitor's session (its own copy of the
    page's config in the LocalContext): the render's input with no interactive of its own is made interactive, one
    set by hand kept, an output left as it is; all out of the API; the page's own parts untouched."""
    from gradio.state_holder import SessionState

    made = {}
    with gr.Blocks() as demo:
        outside, number = gr.Textbox(), gr.Number(0)

        @gr.render(inputs=[number], triggers=[number.change])
        def parts(_):
            made["typed"], made["fixed"] = gr.Textbox(), gr.Textbox(interactive=False)
            made["shown"] = gr.Markdown()
            gr.Button().click(lambda a, b: a, [made["typed"], made["fixed"]], made["shown"])
            as_on_the_page()
    session = SessionState(demo)
    context = gradio_internals.gradio.context.LocalContext
    token = context.blocks_config.set(session.blocks_config)
    try:
        demo.default_config.renderables[0].apply(1)
    finally:
        context.blocks_config.reset(token)
    assert made["typed"].interactive is True and made["fixed"].interactive is False
    assert made["shown"].interactive is None
    assert all(c.skip_api for c in made.values()) and not outside.skip_api
    assert type(made["typed"]).__name__ == "Textbox" and type(made["typed"]).__module__ == gr.Textbox.__module__


def test_an_output_an_event_leaves_out_is_sent_as_gradio_sends_it_but_not_made_anew(monkeypatch):
    """LeanBlocks answers exactly as gradio does (a State left out: nothing; a component: "no change"; one named
    output; gr.skip(); an update of its props), without building a left-out component again."""
    from gradio.state_holder import SessionState

    made, init = [], gr.Slider.__init__

    def counted(self, *args, **kwargs):
        made.append(1)
        init(self, *args, **kwargs)

    monkeypatch.setattr(gr.Slider, "__init__", counted)
    with LeanBlocks() as demo:
        text, state, words, slider = gr.Textbox(), gr.State(1), gr.Markdown(), gr.Slider()
        gr.Button().click(lambda: None, None, [text, state, words, slider])
    fn = next(iter(demo.fns.values()))
    answers = [{text: "hi", state: 5}, {text: "hi"}, {slider: 3}, gr.skip(),
               {text: gr.update(visible=False), words: "**x**", state: 2, slider: gr.update(maximum=9)}]
    for answer in answers:
        ours, theirs = SessionState(demo), SessionState(demo)
        made.clear()
        got = asyncio.run(demo.postprocess_data(fn, dict(answer), ours))
        rebuilt = len(made)
        assert got == asyncio.run(gr.Blocks.postprocess_data(demo, fn, dict(answer), theirs))
        assert ours[state._id] == theirs[state._id]
        asked = answer.get(slider)
        assert rebuilt == (1 if isinstance(asked, dict) else 0)  # its new props: built with them, as gradio does
        if slider not in answer:
            assert len(made) > rebuilt  # gradio builds it for every answer that leaves it out


def test_the_gradio_the_app_pins_is_the_one_its_reaches_were_read_against():
    """A new Gradio in requirements.txt or the Space's README asks for every reach to be read again (CHECKED)."""
    import re

    pinned = re.search(r"^gradio==(\S+)", (ROOT / "requirements.txt").read_text(), re.M).group(1)
    space = re.search(r"^sdk_version: (\S+)", (ROOT / "README.md").read_text(), re.M).group(1)
    assert pinned == space == gradio_internals.CHECKED == gr.__version__
