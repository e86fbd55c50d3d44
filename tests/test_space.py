"""The Space upload, offline: what it would send, and the README front matter the Hub reads."""
from __future__ import annotations

import subprocess
import sys

import yaml

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import space  # noqa: E402


def test_front_matter_is_valid_yaml_naming_the_pinned_gradio_and_the_app():
    readme = space.space_readme()
    assert readme.startswith("---\n")
    meta = yaml.safe_load(readme.split("---\n")[1])
    pinned = next(line.split("==")[1].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()
                  if line.startswith("gradio=="))
    assert meta["sdk"] == "gradio" and meta["sdk_version"] == pinned
    assert (ROOT / meta["app_file"]).is_file() and meta["app_file"] == "app.py"
    ours = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count("\n---\n") == 1 and readme.count("sdk:") == 1  # one front matter: the Space's
    assert readme.endswith(ours.split("\n---\n", 1)[1].lstrip("\n"))  # our README below it, less its own


def test_dry_run_lists_the_app_and_checkpoints_with_sizes_and_leaves_out_tests_ci_and_ignored_files():
    out = subprocess.run([sys.executable, "tools/space.py", "--repo", "someone/playground", "--dry-run"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120, check=True).stdout.splitlines()
    listed = dict((line.split()[1], int(line.split()[0].replace(",", ""))) for line in out[:-1])
    assert {"app.py", "requirements.txt", "README.md", "assets/bertviz/shim.js"} <= set(listed)
    assert any(name.startswith("checkpoints/") and name.endswith("model.safetensors") for name in listed)
    assert not [n for n in listed if n.startswith(("tests/", ".ci/", "tools/", "data/")) or "__pycache__" in n]
    assert listed["app.py"] == (ROOT / "app.py").stat().st_size
    assert out[-1].split()[0].replace(",", "") == str(sum(listed.values())) and "someone/playground" in out[-1]
