"""The playground's page, one module per view: each builds its layout and owns its handlers.

Every view is a `playground.view.View` built inside a gr.Blocks context, inside its own tab (`self.tab`). `fill(result,
values)` returns the {component: value} updates that show a translation (values maps every component in
`controls` to what the page holds); `on_pair(translator, pair, values)` those for a newly chosen checkpoint
(reading `pair_inputs`, setting `pair_outputs`); `wire(result)` attaches the view's own events. The page calls
them when the view's tab is seen, once per translation and per pair, through `View.guarded`: a view that fails
says so in its own notice and the others go on. Handlers return dicts, never positional tuples, and can be
called directly in tests.
"""
from __future__ import annotations

import importlib

from playground import registry
from playground.view import View


def view_class(key: str) -> type[View]:
    """The class that builds view `key` (a key of playground.registry, where the views are listed): the View defined
    in this folder's module of the same name, playground/views/<key>.py."""
    module = importlib.import_module(f"{__name__}.{key}")
    found = [v for v in vars(module).values()
             if isinstance(v, type) and issubclass(v, View) and v.__module__ == module.__name__]
    assert len(found) == 1, f"playground/views/{key}.py defines one View, not {len(found)}"
    return found[0]


# each key of playground.registry -> the class that builds its view, in the registry's order
CLASSES = {entry.key: view_class(entry.key) for entry in registry.VIEWS}
