"""The page's tabs as components: the top level, each group's tabs, each view's tab, the two hidden numbers of each
top-level tab built for each visitor, and the signal (a gr.State that an event sets to a new number when the open tab
should draw itself: its change event draws the tab the user's session has open)."""
from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from playground import registry

from .context import TICKETS


@dataclass
class Tabs:
    top: gr.Tabs  # the top level of tabs
    groups: dict  # group key -> the gr.Tabs holding its views, for a group on the page
    group_tabs: dict  # group key -> its gr.Tab at the top level
    signal: gr.State  # set to a new number: the open tab draws itself
    items: dict  # key -> its gr.Tab on the page: each view's of the page, each top-level tab built for visitors
    built: dict  # top-level tab built for each visitor -> the hidden number set to 1 when it first opens: it is built
    drawn: dict  # ... -> the hidden number set to a new number when it should draw itself (once built)

    @property
    def components(self) -> set:
        """What selecting a view sets: the tabs."""
        return {self.top, *self.groups.values()}

    def selected(self, key: str) -> dict:
        """The tabs that show view `key`, selected by their ids (inside a group built for a visitor, its own event
        selects the view: playground/page.py)."""
        entry = registry.entry(registry.tab_of(key))
        out = {self.top: gr.Tabs(selected=entry.group or entry.key)}
        return out | ({self.groups[entry.group]: gr.Tabs(selected=entry.key)} if entry.group in self.groups else {})

    def wake(self, session, key: str) -> dict:
        """View `key` is open: its top-level tab, when it is built for each visitor, is built for this one (the first
        time) or told to draw itself."""
        unit = registry.top_tab(key)
        if unit not in self.built:
            return {}
        return {self.built[unit]: 1} if session.builds(unit) else {self.drawn[unit]: next(TICKETS)}

    def wire(self, page, event) -> None:
        """Every tab draws itself when selected, a group's tab the view open inside it, and the signal the tab that
        is open; event(triggers, handler, views) wires a handler to the inputs and outputs of the views it may draw.
        These draw the views on the page; a top-level tab built for each visitor is woken by its numbers (`wake`)."""
        on_page, wakers = page.on_page, {*self.built.values(), *self.drawn.values()}

        def views_of(*tabs: str) -> list:
            return [on_page[k] for tab in tabs for k in registry.tabs()[tab] if k in on_page]

        def drawer(key: str | None, group: str | None):
            return page.tab_drawer(key, group, on_page, wake=self.wake)

        for key in registry.tabs():
            if key in on_page:
                event([self.items[key].select], drawer(key, registry.entry(key).group), views_of(key))
        for group, tab in self.group_tabs.items():
            event([tab.select], drawer(None, group), views_of(*registry.members(group)), draws=wakers)
        for unit in self.built.keys() - self.group_tabs.keys():  # a view's top-level tab built for each visitor
            event([self.items[unit].select], drawer(unit, None), [], draws=wakers)
        event([self.signal.change], drawer(None, None), views_of(*registry.tabs()), draws=wakers)
