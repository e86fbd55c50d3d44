"""Transformer Playground: the Gradio page, assembled from one builder per view (views/). The work lives in transformer/."""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import warnings
import weakref
from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from transformer import CheckpointError, Translator, playground
from transformer.translator import resolve_device
from views.ablation import AblationView
from views.api import register as register_api
from views.attention import AttentionView
from views.beam_tree import BeamTreeView
from views.bertviz import BertvizView
from views.card import CardView
from views.common import ROOT, Context, friendly, restore_hint
from views.families import FamiliesView
from views.inside import InsideHeadView
from views.live import LiveView
from views.positional import PositionalView
from views.rollout import RolloutView
from views.schedule import ScheduleView
from views.steps import StepsView
from views.timeline import TimelineView
from views.translate import TranslatePanel

CSS = (ROOT / "assets" / "style.css").read_text(encoding="utf-8")


# -----------------------------------------------------------------------------
# Loading: every checkpoint under checkpoints/, once; problems are reported, not fatal


def load_translators(root: Path, device: str, int8: bool = False) -> tuple[dict[str, Translator], list[str]]:
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


# -----------------------------------------------------------------------------
# The page: the translate panel on top, one tab per view; a translation fills every view in one event


@dataclass
class Page:
    demo: gr.Blocks
    ctx: Context
    panel: TranslatePanel
    result: gr.State  # per user: the current playground.Result
    views: dict

    @friendly
    def show_translation(self, values: dict) -> dict:
        """Translate with the panel's settings and fill every view; values maps each input component to its value.
        A view that fails shows its own notice; the translation and the other views still arrive."""
        panel = self.panel
        pair = values[panel.pair]
        translator = self.ctx.translator(pair)
        result = playground.run(translator, pair, values[panel.text], panel.options(values))
        out = panel.fill(result, values) | {self.result: result}
        for view in self.views.values():
            if hasattr(view, "fill"):
                out |= view.guarded(lambda view=view: view.fill(result, values), translator)
        return out

    @friendly
    def choose_pair(self, values: dict) -> dict:
        """What a newly chosen checkpoint changes: model card, PE plots, head lists, training curves, each view
        on its own: one that fails says so in its tab, and the others are drawn."""
        pair = values[self.panel.pair]
        translator = self.ctx.translator(pair)
        out = {}
        for view in self.views.values():
            if hasattr(view, "on_pair"):
                out |= view.guarded(lambda view=view: view.on_pair(translator, pair, values), translator)
        return out

    @friendly
    def open(self, values: dict, request: gr.Request) -> dict:
        """Page load: apply a shared link's URL parameters, then show the pair and a translation already made."""
        panel = self.panel
        query = dict(request.query_params) if request is not None else {}
        values, problems = panel.from_query(values, query)
        out = {c: values[c] for c in [panel.pair, panel.text] + panel.decoding}
        out[panel.present] = query.get("present", "") in ("1", "true", "yes")
        try:
            out |= self.choose_pair(values)
            for component, value in self.show_translation(values).items():
                both = isinstance(value, dict) and isinstance(out.get(component), dict)
                out[component] = out[component] | value if both else value  # two gr.update()s: keep both
        except gr.Error as e:  # e.g. an empty text in the link: the page still opens, and says why
            problems.append(str(e.message))
        if problems:
            note = "The link's settings were not all usable: " + "; ".join(problems) + "."
            out[panel.notice] = " ".join(filter(None, [note, out.get(panel.notice, "")]))
        return out


def build_page(translators: dict[str, Translator], problems: list[str] | None = None,
               bertviz_offline: bool = True) -> Page:
    """The whole page; bertviz_offline=False loads bertviz's scripts from its CDN instead of inlining them."""
    ctx = Context(translators, Path(tempfile.mkdtemp(prefix="transformer-playground-")), bertviz_offline)
    weakref.finalize(ctx, shutil.rmtree, ctx.downloads, ignore_errors=True)  # at exit, or when the page goes
    with gr.Blocks(title="Transformer Playground", delete_cache=(3600, 3600)) as demo:
        gr.Markdown("# Transformer Playground\nA small encoder-decoder Transformer (Vaswani et al. 2017) trained on "
                    "Multi30k, and every view of how it works, read from forward hooks on its modules.")
        for problem in problems or []:
            gr.Markdown(f"**Checkpoint problem:** {problem}", elem_classes="problem")
        result = gr.State(None)
        panel = TranslatePanel(ctx)
        with gr.Tabs():
            views = {"steps": StepsView(), "attention": AttentionView(ctx)}
            with views["steps"].tab:
                views["beam_tree"] = BeamTreeView(ctx)
            with gr.Tab("Inside attention"), gr.Tabs():  # how the maps' numbers are made
                views |= {"inside": InsideHeadView(ctx), "families": FamiliesView(), "rollout": RolloutView(ctx)}
            views |= {"bertviz": BertvizView(ctx), "ablation": AblationView(ctx),
                      "positional": PositionalView(ctx, panel.pair)}
            with gr.Tab("Training"), gr.Tabs():  # how the model learns
                views |= {"schedule": ScheduleView(ctx, panel.pair), "timeline": TimelineView(ctx, panel.pair),
                          "live": LiveView()}
            views["card"] = CardView()
        page = Page(demo, ctx, panel, result, views)

        panel.wire()
        for view in views.values():
            if hasattr(view, "wire"):
                view.wire(result)
        inputs = set(panel.controls) | {c for v in views.values() for c in v.controls}
        filled = [v for v in views.values() if hasattr(v, "fill")]
        outputs = set(panel.outputs) | {result} | {c for v in filled for c in v.outputs + [v.problem]}
        for trigger in (panel.go.click, panel.text.submit):
            trigger(page.show_translation, inputs, outputs, api_visibility="private")
        per_pair = [v for v in views.values() if hasattr(v, "on_pair")]
        pair_inputs = {panel.pair} | {c for v in per_pair for c in v.pair_inputs}
        pair_outputs = {c for v in per_pair for c in v.pair_outputs + [v.problem]}
        panel.pair.change(page.choose_pair, pair_inputs, pair_outputs, api_visibility="private")
        if ctx.pairs:  # the page opens translated, with a shared link's settings when it has them
            opened = outputs | pair_outputs | {panel.pair, panel.text, panel.present} | set(panel.decoding)
            demo.load(page.open, inputs | pair_inputs, opened, api_visibility="private")
        register_api(ctx)
    return page


def build_demo(translators: dict[str, Translator], problems: list[str] | None = None,
               bertviz_offline: bool = True) -> gr.Blocks:
    return build_page(translators, problems, bertviz_offline).demo


# -----------------------------------------------------------------------------
# Serving


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Serve the Transformer Playground.")
    on_space = bool(os.environ.get("SPACE_ID"))  # a Hugging Face Space must bind every interface
    parser.add_argument("--checkpoints", type=Path, default=ROOT / "checkpoints")
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda (falls back to cpu with a warning)")
    parser.add_argument("--host", default="0.0.0.0" if on_space else "127.0.0.1")
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", 7860)))
    parser.add_argument("--share", action="store_true", help="also serve through a public gradio.live link")
    parser.add_argument("--int8", action="store_true",
                        help="dynamic int8 feed-forward layers and output projection (CPU only; faster on batches)")
    parser.add_argument("--bertviz-cdn", action="store_true",
                        help="load bertviz's scripts from its CDN (smaller pages) instead of the local copies")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        device = resolve_device(args.device)
    for w in caught:
        print(f"warning: {w.message}")
    if args.int8 and device.type != "cpu":
        print("warning: int8 runs on the CPU only; using the CPU")
        device = resolve_device("cpu")
    translators, problems = load_translators(args.checkpoints, str(device), int8=args.int8)
    for problem in problems:
        print(f"warning: {problem}")
    demo = build_demo(translators, problems, bertviz_offline=not args.bertviz_cdn)
    demo.queue(default_concurrency_limit=2)
    demo.launch(server_name=args.host, server_port=args.port, share=args.share, css=CSS,
                theme=gr.themes.Default(font=[gr.themes.Font("system-ui"), "sans-serif"]))


if __name__ == "__main__":
    main()
