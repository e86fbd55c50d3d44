"""The page's tabs as components: the top level, each group's tabs, and the hidden inputs that say which view is
open (the open tab's key, set by each tab's select handler, and each group's view open inside it)."""
from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from playground import registry


@dataclass
class Tabs:
    top: gr.Tabs  # the top level of tabs
    groups: dict  # group key -> the gr.Tabs holding its views
    open: gr.Textbox  # hidden: the open view's key
    group_open: dict  # group key -> a hidden Textbox: the view open inside that group

    @property
    def components(self) -> set:
        """What selecting a view sets: the tabs, and the inputs that say which is open."""
        return {self.top, *self.groups.values(), self.open, *self.group_open.values()}

    def selected(self, key: str) -> dict:
        """The tabs that show view `key`, selected by their ids, and the inputs that say it is open."""
        entry = registry.entry(registry.tab_of(key))
        out = {self.top: gr.Tabs(selected=entry.group or entry.key)} | self.says(entry.key)
        return out | ({self.groups[entry.group]: gr.Tabs(selected=entry.key)} if entry.group else {})

    def says(self, tab: str) -> dict:
        """The inputs that say tab `tab` is open: the open tab's, and its group's when it sits in one."""
        group = registry.entry(tab).group
        return {self.open: tab} | ({self.group_open[group]: tab} if group else {})
