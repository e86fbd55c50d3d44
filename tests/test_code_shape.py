"""The page's code read at a glance: its parts import one another one way only, and no function is longer than a
screen (docs/development.md)."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "playground"
LONGEST = 50  # lines


def part(module: str) -> str:
    """The part of the page a module belongs to: its module, or its subpackage (playground.views.attention -> views)."""
    return module.split(".")[1]


def imported(path: Path) -> set[str]:
    """The playground modules (and subpackages) that the file at `path` imports."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            found |= {target} | {f"{target}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {name for name in found if name.count(".") >= 1 and name.startswith("playground.")
            and ((ROOT / name.replace(".", "/")).with_suffix(".py").is_file() or (ROOT / name.replace(".", "/")).is_dir())}


def test_the_pages_parts_import_one_another_one_way_only():
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        if module.count(".") >= 1 and not module.endswith("playground.__init__"):
            graph.setdefault(part(module), set()).update(part(t) for t in imported(path) if part(t) != part(module))
    assert {"views", "panel", "page", "figures"} <= graph.keys()  # the walk found the page's parts
    climbing, done = [], set()

    def walk(name: str, path: list[str]):  # depth first: a part met again on the path is a cycle
        if name in path:
            climbing.append(" -> ".join(path[path.index(name):] + [name]))
        elif name not in done:
            for below in sorted(graph.get(name, ())):
                walk(below, path + [name])
            done.add(name)

    for name in sorted(graph):
        walk(name, [])
    assert not climbing, f"an import climbs back up: {climbing[0]}"


def test_no_function_of_the_page_is_longer_than_a_screen():
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= LONGEST:
                long.append(f"{path.relative_to(ROOT)}: {node.name} ({node.end_lineno - node.lineno + 1} lines)")
    assert not long, "longer than a screen: " + "; ".join(long)
