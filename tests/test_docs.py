"""docs/api.md runs as written: its Python blocks in order, from the repository's root, on the shipped checkpoint,
and its endpoints' block against the running app."""
from __future__ import annotations

import re

import pytest

from conftest import ROOT

BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "api.md").read_text(encoding="utf-8"), re.S)


def test_the_endpoints_block_runs_against_the_app(server):
    endpoints = BLOCKS[0]
    assert 'Client("http://127.0.0.1:7860/")' in endpoints
    seen: dict = {}
    exec(compile(endpoints.replace("http://127.0.0.1:7860/", server), "docs/api.md (endpoints)", "exec"), seen)
    assert seen["text"] and seen["details"]["translation"] == seen["text"]
    assert seen["maps"]["source_tokens"] and seen["shares"]["scores"]


@pytest.mark.slow  # the shipped checkpoint, and every analysis the blocks show
def test_the_python_blocks_run_in_order_from_the_root(monkeypatch, capsys):
    """Every name a block uses is made by a block before it (the library, from the root, no package installed)."""
    assert len(BLOCKS) >= 4
    monkeypatch.chdir(ROOT)
    seen: dict = {}
    for i, block in enumerate(BLOCKS[1:], start=1):
        try:
            exec(compile(block, f"docs/api.md (block {i + 1})", "exec"), seen)
        except Exception as e:  # which block, and its line, said by the traceback's file name
            pytest.fail(f"docs/api.md's Python block {i + 1} does not run: {type(e).__name__}: {e}")
    assert seen["out"].text and seen["mine"].translate("A dog runs.").text
    assert "torch.Size" in capsys.readouterr().out  # the last block's hook printed the probabilities' shape
