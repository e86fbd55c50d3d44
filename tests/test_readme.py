"""The README is a front door: short, its two commands runnable, its results the checkpoints' own."""
from __future__ import annotations

import re

from conftest import ROOT, SHIPPED

README = (ROOT / "README.md").read_text(encoding="utf-8")
NAMES = {"en-de": "English → German", "en-fr": "English → French"}
COLUMNS = ["test2016_greedy", "tatoeba_test_greedy", "tatoeba_test_greedy_lower", "tatoeba_test_greedy_upper"]


def test_the_readme_is_at_most_250_lines_and_every_link_and_picture_it_names_exists():
    assert len(README.splitlines()) <= 250
    for target in re.findall(r"\]\(([^)#]+)\)", README):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), target
    for page in (ROOT / "docs").glob("*.md"):  # the docs' own pictures and links
        for target in re.findall(r"\]\(([^)#]+)\)", page.read_text(encoding="utf-8")):
            if not target.startswith("http"):
                assert (page.parent / target).exists(), (page.name, target)


def test_the_readme_results_are_the_shipped_checkpoints_scores():
    import json

    for pair, name in NAMES.items():
        test = json.loads((SHIPPED / pair / "metrics.json").read_text())["test"]
        row = next(line for line in README.splitlines() if line.startswith(f"| {name} |"))
        shown = [float(x) for x in re.findall(r"\d+\.\d+", row)]
        assert shown == [round(test[c]["bleu"], 2) for c in COLUMNS], pair


def test_the_readmes_test_command_is_what_ci_runs():
    assert "bash .ci/run" in README and "python -m pytest -q" in (ROOT / ".ci" / "run").read_text()


def test_every_file_and_folder_the_development_tree_names_exists():
    """docs/development.md's layout: each name at its depth (two spaces a level) under the folder above it."""
    doc = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    tree = doc.split("## Layout", 1)[1].split("```", 2)[1]
    folders: list[str] = []
    named = 0
    for line in tree.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if not line.strip() or indent >= 24:  # a blank line, or a description going on
            continue
        depth = indent // 2
        folders = folders[:depth]
        first = re.split(r" {2,}", line.strip())[0]
        for name in first.replace("<pair>", "en-de").split(", "):
            path = ROOT.joinpath(*folders, name)
            assert path.exists(), f"docs/development.md names {path.relative_to(ROOT)}, which does not exist"
            named += 1
        if first.endswith("/"):
            folders.append(first.replace("<pair>", "en-de"))
    assert named > 60  # the whole tree was read, not a line of it
