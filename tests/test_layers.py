"""The three layers: the library (transformer/) imports no page code, no two modules import each other, the page's
parts import one another one way only, and no function of the page is longer than fifty lines."""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

PAGE = ("playground", "gradio", "plotly", "bertviz", "app")


def imports_of(path, modules: dict) -> set[str]:
    """The absolute module names a file imports (relative imports resolved), at any depth of the file;
    "from package import module" counts as importing the module only."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    package = package.removesuffix(".__init__")
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            name = ".".join(base + ([node.module] if node.module else []))
            submodules = {f"{name}.{alias.name}" for alias in node.names} & set(modules)
            found |= submodules if len(submodules) == len(node.names) else {name} | submodules
    return found


def our_modules() -> dict[str, object]:
    files = [p for folder in ("transformer", "playground") for p in (ROOT / folder).rglob("*.py")]
    return {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p for p in files}


def test_the_library_imports_no_page_code_anywhere_in_its_files():
    for name, path in our_modules().items():
        if name.split(".")[0] != "transformer":
            continue
        bad = sorted(m for m in imports_of(path, {}) if m.split(".")[0] in PAGE)
        assert not bad, f"{name} imports {bad}"


def test_other_engines_are_imported_only_by_the_interop_package():
    for name, path in our_modules().items():
        if name.split(".")[0] == "transformer" and not name.startswith("transformer.interop"):
            bad = sorted(m for m in imports_of(path, {}) if m.split(".")[0] in ("transformers", "ctranslate2"))
            assert not bad, f"{name} imports {bad}"


def test_importing_the_whole_library_loads_no_page_package():
    code = ("import sys, pkgutil, importlib, transformer\n"
            "for m in pkgutil.walk_packages(transformer.__path__, 'transformer.'):\n"
            "    if not m.name.endswith(('__main__', 'ct2_engine')): importlib.import_module(m.name)\n"
            f"print(sorted(p for p in {PAGE!r} if p in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stderr


def circle(graph: dict[str, list[str]]) -> str:
    """An import circle of `graph` (name -> the names it imports), written "a -> b -> a"; "" when there is none."""
    state: dict[str, str] = {}  # "open" while on the current path, "done" after

    def visit(node: str, path: list[str]) -> str:
        state[node] = "open"
        for nxt in graph.get(node, []):
            if state.get(nxt) == "open":
                return " -> ".join(path[path.index(nxt):] + [nxt])
            found = visit(nxt, path + [nxt]) if nxt not in state else ""
            if found:
                return found
        state[node] = "done"
        return ""

    for name in graph:
        if name not in state and (found := visit(name, [name])):
            return found
    return ""


def test_no_import_circles():
    modules = our_modules()
    graph = {name: sorted(m for m in imports_of(path, modules) if m in modules and m != name)
             for name, path in modules.items()}
    assert not circle(graph), "import circle: " + circle(graph)


def test_the_pages_parts_import_one_another_one_way_only():
    """A subpackage of playground (views, figures, classroom) counts as one part: a view's module that imports the
    panel, which imports a views module, climbs back up though no two modules import each other."""
    def part(name: str) -> str:  # playground.views.attention -> playground.views
        return ".".join(name.split(".")[:2])

    modules = {name: path for name, path in our_modules().items() if name.startswith("playground.")}
    graph: dict[str, list[str]] = {}
    for name, path in modules.items():
        graph.setdefault(part(name), []).extend(part(m) for m in imports_of(path, modules)
                                                if m in modules and part(m) != part(name))
    assert {"playground.views", "playground.panel", "playground.page"} <= graph.keys()
    assert not circle(graph), "an import climbs back up: " + circle(graph)


def test_no_function_of_the_page_is_longer_than_fifty_lines():
    long = [f"{path.relative_to(ROOT)}: {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for path in sorted((ROOT / "playground").rglob("*.py"))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 50]
    assert not long, "; ".join(long)


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is in requirements-dev.txt")
def test_ruff_finds_no_undefined_names_or_unused_imports():
    out = subprocess.run(["ruff", "check", "--select", "F", "--output-format", "concise", "."], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-3000:]
