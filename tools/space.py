"""Put the app on a Hugging Face Space: python tools/space.py --repo USER/NAME [--dry-run]

The Hub refuses a `git push` of binary files that are not stored through Xet/LFS (the checkpoints, the
screenshots), so the repository is sent through `huggingface_hub`'s upload, which stores them as the Hub wants.
What is sent: the files git tracks, less the tests, the CI script and the developers' tools; the Space's README
is ours with the front matter the Hub reads (SDK, its version, the app file) put on top.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LEFT_OUT = ("tests/", ".ci/", "tools/", "data/", "resume/", "deploy/", "benchmarks/", ".gitignore", ".dockerignore",
            "requirements-dev.txt", "README.md")  # README: written anew; the rest: not the app (recipes, run state)


def pinned_gradio(requirements: Path = ROOT / "requirements.txt") -> str:
    """The gradio version requirements.txt pins: the Space must run the one the tests ran."""
    match = re.search(r"^gradio==([\w.]+)", requirements.read_text(encoding="utf-8"), re.MULTILINE)
    if match is None:
        raise ValueError(f"{requirements} does not pin gradio (gradio==X.Y.Z)")
    return match.group(1)


def front_matter(title: str = "Transformer Playground") -> str:
    """The YAML block a Space's README starts with (https://huggingface.co/docs/hub/spaces-config-reference)."""
    return (f"---\ntitle: {title}\nemoji: 🔤\ncolorFrom: blue\ncolorTo: indigo\nsdk: gradio\n"
            f"sdk_version: {pinned_gradio()}\npython_version: \"3.11\"\napp_file: app.py\npinned: false\n"
            "short_description: Watch a small Transformer translate, through hooks on its modules\n---\n\n")


def space_readme() -> str:
    """Our README under the Space's front matter: its own front matter (the one GitHub shows as a table) taken out,
    so that the Space's README has one, which the Hub reads."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return front_matter() + re.sub(r"\A---\n.*?\n---\n+", "", readme, count=1, flags=re.S)


def files_to_send(root: Path = ROOT) -> list[Path]:
    """What git tracks under root, less LEFT_OUT; what git ignores is never tracked, so never sent."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    names = [n for n in listed.decode("utf-8").split("\0") if n]
    return [root / n for n in names if not n.startswith(LEFT_OUT) and (root / n).is_file()]


def plan(root: Path = ROOT) -> list[tuple[str, int]]:
    """(path in the Space, bytes) of every file an upload sends, the generated README first."""
    return [("README.md", len(space_readme().encode("utf-8")))] + [
        (str(p.relative_to(root)), p.stat().st_size) for p in files_to_send(root)]


def upload(repo: str, private: bool = False, token: str | None = None) -> str:
    """Create the Space (Gradio SDK) if needed and send the files; returns its URL."""
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    url = api.create_repo(repo, repo_type="space", space_sdk="gradio", private=private, exist_ok=True)
    api.upload_folder(folder_path=str(ROOT), repo_id=repo, repo_type="space",
                      allow_patterns=[str(p.relative_to(ROOT)) for p in files_to_send()],
                      commit_message="Transformer Playground: upload")
    api.upload_file(path_or_fileobj=space_readme().encode("utf-8"), path_in_repo="README.md", repo_id=repo,
                    repo_type="space", commit_message="README with the Space's front matter")
    return str(url)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python tools/space.py",
                                     description="create a Hugging Face Space (Gradio SDK) and upload the app to it")
    parser.add_argument("--repo", required=True, help="USER/NAME of the Space")
    parser.add_argument("--dry-run", action="store_true", help="list every file it would send, with its size")
    parser.add_argument("--private", action="store_true")
    args = parser.parse_args(argv)
    if not args.dry_run:
        print(upload(args.repo, args.private))
        return 0
    files = plan()
    for name, size in files:
        print(f"{size:>10,}  {name}")
    total = sum(s for _, s in files)
    print(f"{total:>10,}  bytes in {len(files)} files to {args.repo} ({total / 2**20:.1f} MiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
