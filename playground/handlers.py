"""How a handler is wired and how its answer reaches the page: figures serialized once, bad input said in words,
bugs logged."""
from __future__ import annotations

import functools
import inspect
import logging

import gradio as gr
import plotly.graph_objects as go

from transformer.errors import InputError

log = logging.getLogger("transformer-playground")


def friendly(fn):
    """Every handler's way to the page. Its figures are sent as the JSON the page receives (serialized); bad input
    (InputError, raised on purpose) becomes its plain message in the page (gr.Error), never a traceback; anything
    else is a bug: logged with its traceback on the server and reported in one sentence. Works on generators
    (streamed updates) too."""
    def failed(e: Exception) -> gr.Error:
        if isinstance(e, gr.Error):
            return e
        if isinstance(e, InputError):  # the user's input: said in the page, no traceback in the server's log
            return gr.Error(str(e), print_exception=False)
        log.exception("%s failed", fn.__qualname__)  # keep the server up, say so in words
        return gr.Error(f"Something went wrong ({type(e).__name__}); please try other settings.")

    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def streamed(*args, **kwargs):
            try:
                for update in fn(*args, **kwargs):
                    yield serialized(update)
            except Exception as e:
                raise failed(e) from None
        return streamed

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return serialized(fn(*args, **kwargs))
        except Exception as e:
            raise failed(e) from None
    return wrapper


def serialized(updates):
    """Updates (a dict of them, or one value) with every plotly figure turned into the JSON the page receives, once:
    a drawn view that many users are sent is serialized one time, not once per user."""
    if isinstance(updates, dict):
        return {c: serialized(u) for c, u in updates.items()}
    return gr.components.plot.PlotData(type="plotly", plot=updates.to_json()) if isinstance(updates, go.Figure) else updates


def copied(updates: dict) -> dict:
    """Cached updates for one more user: gr.update dicts copied (gradio may change them), figures shared."""
    return {c: dict(u) if isinstance(u, dict) else u for c, u in updates.items()}


def shared(cache, key: tuple, make) -> dict:
    """Updates made and serialized once for everyone (a SharedCache keeps successes only), copied for each user."""
    return copied(cache.get(key, lambda: serialized(make())))


def beside(drawn, value):
    """A focus's plain value where drawing already set an update (a menu's new choices): both, the value winning."""
    plain = not isinstance(value, dict) and not hasattr(value, "to_dict")  # not an update, not a figure
    return drawn | {"value": value} if isinstance(drawn, dict) and drawn.get("__type__") == "update" and plain else value


def listen(trigger, handler, inputs: set, outputs: set, **kwargs):
    """Wire `handler(values, request)` to `trigger`: gradio passes a set of inputs as one dict, ordered by creation
    (the open tab, created first, is the first value an event's js sees), and the request by its annotation."""
    @functools.wraps(handler)  # the handler's own signature, which gradio reads (the request, a link's event data)
    def sent(*args):
        return handler(*args) or gr.skip()  # nothing to send: gradio still needs an update per output
    return trigger(sent, inputs, outputs, api_visibility="private", **kwargs)
