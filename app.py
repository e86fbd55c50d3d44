"""Transformer Playground: flags, loading the checkpoints, building the page (playground.page) and serving it.
The page's runtime lives in playground/runtime.py, its views in playground/views/, the model in transformer/."""
from __future__ import annotations

import argparse
import gc
import os
import warnings
from pathlib import Path

import torch

from playground.page import build_demo, build_page, launch_options  # noqa: F401 (the app's API for tools and tests)
from playground.runtime import EMPTY  # noqa: F401
from playground.context import ROOT
from playground.links import network_address
from playground.doubts import not_english
from playground.classroom.store import Store, default_url
from playground.view import restore_hint
from transformer import CheckpointError, Translator
from transformer.translator import resolve_device, sentences
from transformer.words import in_dictionary


def load_translators(root: Path, device: str, int8: bool = False) -> tuple[dict[str, Translator], list[str]]:
    """Every checkpoint under `root`, once; problems are reported (shown on the page), not fatal."""
    translators, problems = {}, []
    dirs = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    for path in dirs:
        try:
            translators[path.name] = Translator.load(path, device=device, int8=int8)
        except CheckpointError as e:
            problems.append(f"{e}. {restore_hint(path)}")
    if not dirs:
        problems.append(f"No checkpoint directories under {root}: train one with `python -m transformer train ...`.")
    return translators, problems


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Serve the Transformer Playground.")
    on_space = bool(os.environ.get("SPACE_ID"))  # a Hugging Face Space must bind every interface
    parser.add_argument("--checkpoints", type=Path, default=ROOT / "checkpoints")
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda (falls back to cpu with a warning)")
    parser.add_argument("--host", default="0.0.0.0" if on_space else "127.0.0.1")
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", 7860)))
    parser.add_argument("--share", action="store_true", help="also serve through a public gradio.live link")
    parser.add_argument("--public-url", default=os.environ.get("PUBLIC_URL"),
                        help="the address a class's phones open (behind a proxy or a balancer); by default, with "
                             "--host 0.0.0.0, this machine's address on its network")
    parser.add_argument("--trusted-proxy", action="append", default=[], metavar="ADDRESS",
                        help="a balancer in front of the app (repeatable): its X-Forwarded-For names the visitor, "
                             "whose address the class's join limits count (deploy/serve.py passes its own)")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL") or default_url(ROOT),
                        help="where classes are kept: a SQLite file by default (replicas on one machine share it), "
                             "postgresql+psycopg://USER:PASSWORD@HOST/DB when replicas span machines "
                             "(docs/classroom.md)")
    parser.add_argument("--int8", action="store_true",
                        help="dynamic int8 feed-forward layers and output projection (CPU only; faster on batches)")
    parser.add_argument("--threads", type=int, default=1,
                        help="intra-op threads for every request (the queue runs two at once; docs/many-users.md)")
    parser.add_argument("--bertviz-cdn", action="store_true",
                        help="load bertviz's scripts from its CDN (smaller pages) instead of the local copies")
    return parser.parse_args(argv)


def serving_device(requested: str) -> str:
    """The device to ask for. ZeroGPU lends a GPU only inside @spaces.GPU calls and may answer "CUDA" outside
    them too: there `auto` means the CPU (the model is tiny), so no page depends on a GPU quota."""
    return "cpu" if requested == "auto" and os.environ.get("SPACES_ZERO_GPU") else requested


def public_address(args: argparse.Namespace) -> tuple[str | None, str]:
    """The address other machines open (--public-url, or this machine's network address when the app listens on
    every interface; not on a Space, whose own address is the one its visitors have), and the line that says it."""
    if args.public_url:
        return args.public_url, f"The class opens: {args.public_url}"
    if args.host not in ("0.0.0.0", "::") or os.environ.get("SPACE_ID"):
        return None, "A class's phones cannot open it yet: start it with --host 0.0.0.0 to let them in"
    found = network_address(args.port)
    return found, (f"The class's phones on this network open: {found}" if found else
                   "No network address found on this machine: the class's phones need its address on their network")


def said_at_start(args: argparse.Namespace, class_line: str, share_url: str | None) -> list[str]:
    """What a teacher needs once the page answers, in place of gradio's own lines: the address to open on this
    machine, the one the class opens, and how to get a public link."""
    here = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    public = (f"A public link, for phones on another network (it lasts a week): {share_url}" if share_url else
              "No public link could be made (is this machine online?)" if args.share else
              "For phones on another network: python app.py --share gives a public link")
    return [f"Open it on this machine: http://{here}:{args.port}/", class_line, public]


def main() -> None:
    args = parse_args()
    torch.set_num_threads(max(1, args.threads))  # one core per request: two requests at once fill two cores
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        device = resolve_device(serving_device(args.device))
    for w in caught:
        print(f"warning: {w.message}")
    if args.int8 and device.type != "cpu":
        print("warning: int8 runs on the CPU only; using the CPU")
        device = resolve_device("cpu")
    translators, problems = load_translators(args.checkpoints, str(device), int8=args.int8)
    for problem in problems:
        print(f"warning: {problem}")
    public, class_line = public_address(args)
    store = Store(args.database_url)
    demo = build_demo(translators, problems, bertviz_offline=not args.bertviz_cdn, public_url=public, store=store,
                      trusted_proxies=frozenset(args.trusted_proxy))
    # What every first translation reads besides the model, loaded now rather than while a class waits for it: the
    # language identifier of the warnings (an LZMA-packed model, about 0.4 s), the sentence splitter and each target
    # language's dictionary of the "made up" warning (about 0.8 s for German)
    not_english("Loading the language identifier."), sentences("Loading the splitter. Two sentences.")
    for translator in translators.values():
        in_dictionary("loading", translator.words.language if translator.words else "")
    # The models and the page live as long as the server: out of the garbage collector's sight, so that its full
    # passes (triggered by every request's allocations) do not walk hundreds of thousands of objects each time
    gc.freeze()
    demo.queue(default_concurrency_limit=2)
    demo.launch(server_name=args.host, server_port=args.port, share=args.share, quiet=True, prevent_thread_lock=True,
                **launch_options(store))
    print("\n".join(said_at_start(args, class_line, demo.share_url)), flush=True)
    demo.block_thread()


if __name__ == "__main__":
    main()
