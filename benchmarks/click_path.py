"""The modules of this project one Translate click passes, in the order they are first entered, and how often the
path comes back into each (an entry: a call from another module). Run in-process on the shipped checkpoints, the
click as the page's event runs it (Page.show_translation), after one warm-up click on another sentence.

    python benchmarks/click_path.py [--text "A dog runs in the park."]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

import app  # noqa: E402
from transformer import Translator  # noqa: E402

OURS = ("transformer", "playground")


def path_of(call) -> list[tuple[str, int]]:
    """(module, entries) of our modules in the order call() first enters them."""
    order: dict[str, int] = {}
    stack: list[str] = []

    def profile(frame, event, arg):
        name = frame.f_globals.get("__name__", "")
        if event == "call":
            ours = name.split(".")[0] in OURS
            if ours and (not stack or stack[-1] != name):
                order[name] = order.get(name, 0) + 1
            stack.append(name)
        elif event == "return" and stack:
            stack.pop()

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return list(order.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text", default="A dog runs in the park.")
    args = parser.parse_args()
    torch.set_num_threads(1)
    translators = {p: Translator.load(ROOT / "checkpoints" / p, device="cpu") for p in ("en-de", "en-fr")}
    page = app.build_page(translators)
    values = {c: getattr(c, "value", None) for c in page.demo.blocks.values()}
    page.show_translation(values | {page.panel.text: "Two girls play."})  # imports and first calls, out of the way
    path = path_of(lambda: page.show_translation(values | {page.panel.text: args.text}))
    for module, entries in path:
        print(f"{entries:3d}  {module}")
    print(f"{len(path)} modules, {sum(n for _, n in path)} entries")


if __name__ == "__main__":
    main()
