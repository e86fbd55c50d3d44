"""The page's tabs as components: the top level, each group's tabs, and the signal (a gr.State that an event sets to a
new number when the open tab should draw itself: its change event draws the tab the user's session has open)."""
from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from playground import registry


@dataclass
class Tabs:
    top: gr.Tabs  # the top level of tabs
    groups: dict  # group key -> the gr.Tabs holding its views
    group_tabs: dict  # group key -> its gr.Tab at the top level
    signal: gr.State  # set to a new number: the open tab draws itself

    @property
    def components(self) -> set:
        """What selecting a view sets: the tabs."""
        return {self.top, *self.groups.values()}

    def selected(self, key: str) -> dict:
        """The tabs that show view `key`, selected by their ids."""
        entry = registry.entry(registry.tab_of(key))
        out = {self.top: gr.Tabs(selected=entry.group or entry.key)}
        return out | ({self.groups[entry.group]: gr.Tabs(selected=entry.key)} if entry.group else {})

    def wire(self, page, event) -> None:
        """Every view's tab draws itself when selected, a group's tab the view open inside it, and the signal the
        tab that is open; event(triggers, handler, views) wires a handler to the inputs and outputs of the views it
        may draw."""
        for key in registry.tabs():
            event([page.views[key].tab.select], page.opener(key, registry.entry(key).group),
                  [page.views[k] for k in registry.tabs()[key]])
        event([self.signal.change], page.opener(), list(page.views.values()))
        for group, tab in self.group_tabs.items():
            event([tab.select], page.opener(None, group),
                  [page.views[k] for key in registry.members(group) for k in registry.tabs()[key]])
