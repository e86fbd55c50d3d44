"""The registry of views: every link in the page and the docs names a view that exists, and the page builds every
view it declares, each in the tab it says."""
from __future__ import annotations

import re

import pytest

from playground import context, lesson, registry
from playground.figures import glance
from playground.context import ROOT
from playground.view import View
from playground.views import CLASSES
from playground.explanations import EXPLAIN


def test_every_view_has_a_class_a_place_and_its_words():
    assert list(CLASSES) == list(registry.BY_KEY)  # one class per view, in the registry's order
    for entry in registry.VIEWS:
        assert issubclass(CLASSES[entry.key], View), entry.key
        assert entry.group is None or entry.group in registry.GROUP_LABELS, entry.key
        assert entry.inside is None or registry.entry(entry.inside).inside is None, entry.key
    assert len(registry.BY_KEY) == len(registry.VIEWS)  # keys are unique
    assert set(EXPLAIN) <= set(registry.BY_KEY)  # no explanation of a view that is gone
    assert all(registry.members(g.key) for g in registry.GROUPS)  # no empty group


def test_paths_and_titles():
    assert registry.title("families") == "Attention: Three families"
    assert registry.tab_of("beam_tree") == "steps" and registry.tab_of("families") == "families"
    assert registry.tabs()["steps"] == ["steps", "beam_tree"] and "beam_tree" not in registry.tabs()
    with pytest.raises(KeyError, match="no view 'Heatmaps'"):
        registry.entry("Heatmaps")  # a label is not a key


def test_every_link_of_the_glance_names_a_view():
    assert set(glance.OPENS.values()) <= set(registry.BY_KEY)


def test_every_go_deeper_of_the_lesson_names_a_view(translator):
    made = [lesson.step(translator, context.run(translator, "tiny", "a b c d e"), n) for n in range(1, lesson.STEPS + 1)]
    assert all(step.deeper in registry.BY_KEY for step in made), [step.deeper for step in made]


def test_docs_views_lists_every_view_by_its_title_and_key():
    rows = re.findall(r"^\| (.+?) \(`([a-z_]+)`\) \|", (ROOT / "docs" / "views.md").read_text(encoding="utf-8"), re.M)
    assert sorted(key for _, key in rows) == sorted(registry.BY_KEY)
    assert all(title == registry.title(key) for title, key in rows), rows
