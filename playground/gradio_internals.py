"""Every reach into Gradio's internals, behind one door: a private attribute read, a method overridden, a class
swapped, a context read. Each says why the page needs it and rests on Gradio as it was when checked (CHECKED);
tests/test_gradio_internals.py runs each against the installed Gradio and fails when one of them changes under it.
Everything else in playground/ uses Gradio's public API only."""
from __future__ import annotations

import copy
import functools

import gradio as gr
import gradio.context
from gradio.blocks import Block
from gradio.components import Component
from gradio.components.api_component import Api
from gradio.components.plot import PlotData
from gradio.i18n import I18nData

CHECKED = "6.31.0"  # the Gradio version every reach below was read against

__all__ = ["Block", "CHECKED", "LeanBlocks", "as_on_the_page", "component_id", "has_login", "label", "plot_data",
           "without_api_schemas"]


def component_id(block: Block) -> int:
    """A component's id (`_id`): what Gradio keys a component's value and its events by, the same in every answer.
    A view's parts built for each visitor are told apart by it (View.parts)."""
    return block._id


def label(msgid: str) -> I18nData:
    """A label the browser shows in the visitor's language: gr.I18n's key object, made before the page's gr.I18n
    exists (the labels are gathered as the page is built: playground/i18n.py)."""
    return I18nData(msgid)


def plot_data(plot: str) -> PlotData:
    """What a gr.Plot sends for a plotly figure already turned into JSON (once, for every user who is sent it:
    view.serialized), in place of a figure Gradio would serialize again for each."""
    return PlotData(type="plotly", plot=plot)


def has_login(scope) -> bool:
    """True for an ASGI request to a Gradio app behind a login (`auth`, `auth_dependency` on the FastAPI app Gradio
    puts in the scope): its page is written for each visitor, never kept (page.SamePage)."""
    app = scope.get("app")
    return getattr(app, "auth", None) is not None or getattr(app, "auth_dependency", None) is not None


class LeanBlocks(gr.Blocks):
    """gr.Blocks whose events leave an output they do not name as it is, at no cost (Blocks.postprocess_data
    overridden). Gradio otherwise makes such an output's component anew (with its config) for every answer, only
    to send "no change": the page's load event lists 55 outputs and a group's tab 87, and a handler returns the few
    it changes (docs/many-users.md)."""

    async def postprocess_data(self, block_fn, predictions, state):
        if not isinstance(predictions, dict) or block_fn.batch or len(block_fn.outputs) < 2:
            return await super().postprocess_data(block_fn, predictions, state)
        skipped = predictions == gr.skip()  # nothing to send at all
        named = set() if skipped else {getattr(c, "_id", None) for c in predictions}
        sent = [c for c in block_fn.outputs if c._id in named]
        if not skipped and (not sent or len(sent) != len(predictions) or len(sent) == len(block_fn.outputs)):
            return await super().postprocess_data(block_fn, predictions, state)  # all of them, or not by component
        drawn = iter([])
        if sent:  # gradio's own postprocessing, on an event that sets only these (one output: its value alone)
            one = len(sent) == 1
            drawn = iter(await super().postprocess_data(named_only(block_fn, sent), next(iter(predictions.values()))
                                                        if one else predictions, state))
        # what gradio sends for an output left out: nothing for a State, "no change" for the rest
        return [next(drawn) if c._id in named else None if c.stateful else {"__type__": "update"}
                for c in block_fn.outputs]


def named_only(block_fn, outputs: list):
    """A copy of an event's function (Gradio's BlockFunction) that sets only `outputs`."""
    fn = copy.copy(block_fn)
    fn.outputs = outputs
    return fn


def without_api_schemas(blocks) -> None:
    """The page's own components (of `blocks`) left out of the API (its events are private: only the named
    endpoints of playground/api.py are the API). Gradio otherwise writes three JSON schemas of every component into
    the page's config and computes them again for every visitor's session (a download button's is 5 kB): a class
    of 30 opened the page about 8 % slower with them (docs/many-users.md). Gradio reads `skip_api` from the
    component's class, so each component's class is swapped for a subclass that says so."""
    for block in blocks:
        if isinstance(block, Component) and not isinstance(block, Api) and not block.skip_api:
            block.__class__ = private(type(block))


@functools.cache
def private(component: type) -> type:
    """`component`'s class, but out of the API: the same name and module, so that gradio's browser side sees the
    very same component (its type and class id)."""
    return type(component.__name__, (component,), {"skip_api": property(lambda self: True),
                                                   "__module__": component.__module__})


def as_on_the_page() -> None:
    """Called at the end of a gr.render's function: the parts it made, as the page's own are. An event's input is
    made interactive (Gradio's browser decides that for the first page's parts, not for a render's: it reads
    `interactive` from the config, None there meaning static), and the parts go out of the API. Gradio keeps what
    the running render made in its LocalContext (the render's blocks config and the render itself)."""
    config, render = gradio.context.LocalContext.blocks_config.get(), gradio.context.LocalContext.renderable.get()
    made = [b for b in config.blocks.values() if getattr(b, "rendered_in", None) is render]
    inputs = {c._id for fn in config.fns.values() if fn.rendered_in is render for c in fn.inputs}
    for c in made:
        if c._id in inputs and getattr(c, "interactive", False) is None:
            c.interactive = True
    without_api_schemas(made)
