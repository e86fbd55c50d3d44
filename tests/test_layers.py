"""The three layers: the library (transformer/) imports no page code, and no two modules import each other."""
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


def test_no_import_circles():
    modules = our_modules()
    graph = {name: sorted(m for m in imports_of(path, modules) if m in modules and m != name)
             for name, path in modules.items()}
    state: dict[str, str] = {}  # "open" while on the current path, "done" after

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for nxt in graph[node]:
            if state.get(nxt) == "open":
                raise AssertionError("import circle: " + " -> ".join(path[path.index(nxt):] + [nxt]))
            if nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for name in graph:
        if name not in state:
            visit(name, [name])


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is in requirements-dev.txt")
def test_ruff_finds_no_undefined_names_or_unused_imports():
    out = subprocess.run(["ruff", "check", "--select", "F", "--output-format", "concise", "."], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-3000:]
