"""Every view of the page, declared once: its key, where its tab sits and its label (its class: playground.views).

The tabs, the share links (?view=key), the Lesson's and the glance's "go deeper" links, the page's wiring and
docs/views.md all read this table. A view's explanation is its key's entry in assets/explanations.json (when it has
one). A link names a view by its key.
No gradio here: the figures that write links import this module too.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class Group:
    """A top-level tab that holds several views, each in a tab of its own (the top level fits one line)."""

    key: str
    label: str


@dataclass(frozen=True)
class Entry:
    key: str  # the view's name everywhere: tab id, link, share link, docs
    label: str  # its tab's label (or its heading, when it lives inside another view's tab)
    group: str | None = None  # the Group it sits in; None: a tab of the top level
    inside: str | None = None  # drawn inside another view's tab, under it (no tab of its own)


GROUPS = (
    Group("looks", "Attention"),  # where the model looks, and how those numbers are made
    Group("beyond", "Beyond attention"),  # what it uses, and what it needs
    Group("training", "Training"),  # how it learns
    Group("model", "The model"),  # what it is made of, and other models beside it
)

VIEWS = (
    Entry("glance", "At a glance"),  # the tab that opens first
    Entry("lesson", "Lesson"),
    Entry("steps", "Step by step"),
    Entry("beam_tree", "Beam search as a tree", inside="steps"),
    Entry("attention", "Heatmaps", group="looks"),
    Entry("inside", "One head", group="looks"),
    Entry("cache", "What the decoder keeps", group="looks"),
    Entry("families", "Three families", group="looks"),
    Entry("rollout", "Rollout", group="looks"),
    Entry("bertviz", "bertviz", group="looks"),
    Entry("used", "What the model used", group="beyond"),
    Entry("ablation", "Head ablation", group="beyond"),
    Entry("patching", "One word changed", group="beyond"),
    Entry("schedule", "Learning rate", group="training"),
    Entry("timeline", "How it learned", group="training"),
    Entry("live", "Train a tiny one", group="training"),
    Entry("positional", "Positional encoding", group="model"),
    Entry("compare", "Compare models", group="model"),
    Entry("card", "Model card", group="model"),
)

FIRST = VIEWS[0].key  # what the page shows under the panel when it opens
BY_KEY = {entry.key: entry for entry in VIEWS}
GROUP_LABELS = {group.key: group.label for group in GROUPS}


def entry(key: str) -> Entry:
    if key not in BY_KEY:
        raise KeyError(f"no view {key!r}; the views are {', '.join(BY_KEY)}")
    return BY_KEY[key]


def tab_of(key: str) -> str:
    """The view whose tab shows `key` (itself, or the view it is drawn inside)."""
    return entry(key).inside or key


def open_tab(key: str | None) -> str:
    """The tab that shows view `key` (as a link names it, maybe empty or unknown): its tab, or the
    first."""
    return tab_of(key) if key in BY_KEY else FIRST


def title(key: str) -> str:
    """A view's name in words: "Attention: Three families", or "Step by step" at the top level."""
    e = entry(key)
    return f"{GROUP_LABELS[e.group]}: {e.label}" if e.group else e.label


@functools.cache
def tabs() -> dict[str, list[str]]:
    """Each tab's key -> the views drawn in it (its own first, then those inside it); one table, read by every
    draw (callers do not change it)."""
    return {e.key: [e.key] + [v.key for v in VIEWS if v.inside == e.key] for e in VIEWS if e.inside is None}


def top_tab(key: str) -> str:
    """The top-level tab that shows view `key`: its group's, or its own (or that of the view it is drawn inside)."""
    e = entry(tab_of(key))
    return e.group or e.key


@functools.cache
def top_tabs() -> dict[str, list[str]]:
    """Each top-level tab (a group's key, or a view's) -> every view drawn under it, in the registry's order."""
    out: dict[str, list[str]] = {}
    for e in VIEWS:
        out.setdefault(top_tab(e.key), []).append(e.key)
    return out


def members(group: str) -> list[str]:
    """The views in a group's tabs, the first one open by default."""
    return [e.key for e in VIEWS if e.group == group]
