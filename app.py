"""Transformer Playground: the Gradio UI. Layout and wiring only; the work lives in transformer/."""
from __future__ import annotations

import argparse
import functools
import html
import json
import os
import tempfile
import warnings
from pathlib import Path

import gradio as gr

from transformer import CheckpointError, Translator, playground, plots
from transformer.bertviz_view import bertviz_document, iframe
from transformer.capture import parse_head
from transformer.translator import resolve_device

ROOT = Path(__file__).resolve().parent
PAIR_NAMES = {"en-de": "English → German", "en-fr": "English → French"}
EXAMPLES = json.loads((ROOT / "assets" / "examples.json").read_text(encoding="utf-8"))
CSS = (ROOT / "assets" / "style.css").read_text(encoding="utf-8")
EXPLAIN = json.loads((ROOT / "assets" / "explanations.json").read_text(encoding="utf-8"))


# -----------------------------------------------------------------------------
# Loading: every checkpoint under checkpoints/, once; problems are reported, not fatal


def load_translators(root: Path, device: str, int8: bool = False) -> tuple[dict[str, Translator], list[str]]:
    translators, problems = {}, []
    dirs = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    for path in dirs:
        try:
            translators[path.name] = Translator.load(path, device=device, int8=int8)
        except CheckpointError as e:
            problems.append(f"{e}. Restore it with `git checkout -- {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}` "
                            f"or retrain it with `python -m transformer train --data-dir ../shared/data/multi30k "
                            f"--pair {path.name} --out {path}`.")
    if not dirs:
        problems.append(f"No checkpoint directories under {root}: train one with `python -m transformer train ...`.")
    return translators, problems


def friendly(fn):
    """Bad input becomes a plain message in the page (gr.Error), never a traceback."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except (ValueError, KeyError) as e:
            raise gr.Error(str(e).strip("'\"")) from None
        except Exception as e:  # anything else: say so in words, keep the server up
            raise gr.Error(f"Something went wrong ({type(e).__name__}); please try other settings.") from None
    return wrapper


def build_demo(translators: dict[str, Translator], problems: list[str] | None = None,
               bertviz_offline: bool = True) -> gr.Blocks:
    """The whole page; bertviz_offline=False loads bertviz's scripts from its CDN instead of inlining them."""
    problems = problems or []
    downloads = Path(tempfile.mkdtemp(prefix="transformer-playground-"))  # attention JSON files, pruned hourly
    pairs = [p for p in PAIR_NAMES if p in translators] + [p for p in translators if p not in PAIR_NAMES]

    def tr(pair: str) -> Translator:
        if pair not in translators:
            raise ValueError(f"unknown language pair {pair!r}; available: {', '.join(pairs) or 'none'}")
        return translators[pair]

    def options(strategy, temperature, top_k, top_p, seed, beam_size, length_penalty, max_len) -> dict:
        return dict(temperature=temperature, top_k=top_k, top_p=top_p, seed=seed, beam_size=beam_size,
                    length_penalty=length_penalty, max_len=max_len or None)

    # -- API endpoints (gradio_client) -----------------------------------------------------------

    def heads_off(spec: str) -> list[tuple[str, int, int]]:
        return [parse_head(h.strip()) for h in spec.split(",") if h.strip()]

    @friendly
    def translate_api(text: str, pair: str = pairs[0] if pairs else "en-de", strategy: str = "greedy",
                      temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0, seed: int = 0,
                      beam_size: int = 4, length_penalty: float = 1.0, max_len: int = 0,
                      ablate: str = "") -> tuple[str, dict]:
        """Translate `text`; returns the translation and its tokens and per-step probabilities.
        `ablate` lists heads to switch off, e.g. "cross:0:1,encoder:2:3"."""
        out = tr(pair).translate(text, strategy, ablate=heads_off(ablate),
                                 **options(strategy, temperature, top_k, top_p, seed, beam_size, length_penalty, max_len))
        return out.text, {"source_tokens": out.source_tokens, "target_tokens": out.target_tokens,
                          "truncated": out.truncated,
                          "steps": [{"token": s.token, "prob": s.prob, "alternatives": s.alternatives} for s in out.steps]}

    @friendly
    def attention_api(text: str, pair: str = pairs[0] if pairs else "en-de", translation: str = "",
                      ablate: str = "") -> dict:
        """Attention maps (L, H, query, key) of `text` and its greedy translation (or the one given),
        with the heads in `ablate` switched off."""
        t, off = tr(pair), heads_off(ablate)
        return playground.attention_payload(t.attention(text, translation or t.translate(text, ablate=off), ablate=off))

    # -- UI handlers -----------------------------------------------------------------------------

    def strategy_controls(strategy):
        sampling, beam = strategy == "sample", strategy == "beam"
        return [gr.update(visible=sampling)] * 5 + [gr.update(visible=beam)] * 2

    @friendly
    def translate_all(pair, text, strategy, temperature, top_k, top_p, seed, n_samples, beam_size, length_penalty,
                      max_len, kind, layer, head, mode, bertviz_view):
        opts = options(strategy, temperature, top_k, top_p, seed, beam_size, length_penalty, max_len)
        result = playground.run(tr(pair), pair, text, strategy, **opts)
        notice = ("The text was longer than the model's positions and was cut to fit." if result.translation.truncated
                  else "")
        samples = ""
        if strategy == "sample" and n_samples > 1:
            more = tr(pair).translate_batch([text] * int(n_samples), "sample", **opts)
            samples = cards([(f"sample {i + 1}", s.text) for i, s in enumerate(more)])
        steps = result.translation.steps
        return (
            result.translation.text, notice, samples, result,
            plots.step_probabilities(steps), gr.update(maximum=max(len(steps) - 1, 0), value=0),
            playground.step_view(result, 0),
            playground.attention_figure(result, kind, int(layer), head, mode),
            gr.update(value=str(playground.write_attention_json(result, downloads)), visible=True),
            iframe(bertviz_document(result.maps, bertviz_view, bertviz_offline)),
            inputs_figure(result),
            gr.update(value=[]), "",
        )

    def cards(items: list[tuple[str, str]]) -> str:
        return '<div class="cards">' + "".join(
            f'<div class="card"><div class="card-title">{html.escape(t)}</div><div>{html.escape(x)}</div></div>'
            for t, x in items) + "</div>"

    @friendly
    def compare(pair, text, temperature, top_k, top_p, seed, beam_size, length_penalty, max_len):
        t = tr(pair)
        opts = options("", temperature, top_k, top_p, seed, beam_size, length_penalty, max_len)
        return cards([(f"{name}", t.translate(text, s, **opts).text) for name, s in
                      (("greedy", "greedy"), (f"sample (T={temperature:g}, seed {int(seed)})", "sample"),
                       (f"beam search (k={int(beam_size)})", "beam"))])

    @friendly
    def redraw_attention(result, kind, layer, head, mode):
        if result is None:
            raise ValueError("translate a sentence first")
        layer = min(int(layer), getattr(result.maps, kind).size(0) - 1)
        return playground.attention_figure(result, kind, layer, head, mode)

    @friendly
    def redraw_step(result, index):
        if result is None:
            raise ValueError("translate a sentence first")
        return playground.step_view(result, int(index))

    @friendly
    def redraw_bertviz(result, view):
        if result is None:
            return ""
        return iframe(bertviz_document(result.maps, view, bertviz_offline))

    def inputs_figure(result):
        ins = result.inspection
        return plots.embedding_inputs(ins.source_embedded, ins.source_input, result.maps.source_tokens,
                                      "What the encoder's first layer received (read by a hook on the PE module)")

    @friendly
    def run_ablation(pair, result, heads):
        if result is None:
            raise ValueError("translate a sentence first")
        if not heads:
            raise ValueError("tick at least one head to switch off")
        _, diff = playground.ablate(tr(pair), result, heads)
        return diff

    @friendly
    def pair_views(pair):
        t = tr(pair)
        pe = t.model.positional.pe.cpu()
        cfg, tcfg = t.cfg, t.metrics.get("train_config", {})
        dims = [0, 1, 8, 9, min(40, cfg.d_model - 2), min(41, cfg.d_model - 1)]
        return (playground.model_card(t, pair), plots.pe_matrix(pe), plots.pe_curves(pe, dims),
                gr.update(choices=list(range(cfg.d_model)), value=dims), plots.pe_similarity(pe),
                plots.training_curves(t.metrics),
                gr.update(choices=playground.head_choices(t), value=[]),
                gr.update(choices=list(range(max(cfg.n_encoder_layers, cfg.n_decoder_layers))), value=0),
                gr.update(choices=["average"] + [str(h) for h in range(cfg.n_heads)], value="average"),
                [(512, 4000, 1.0, "the paper (base)"),
                 (cfg.d_model, tcfg.get("warmup", 4000), tcfg.get("lr_scale", 1.0), "this checkpoint")])

    @friendly
    def pe_dims(pair, dims):
        return plots.pe_curves(tr(pair).model.positional.pe.cpu(), [int(d) for d in dims][:12])

    def add_curve(curves, d_model, warmup):
        new = (int(d_model), int(warmup), 1.0)
        curves = list(curves or [])
        if new not in [tuple(c[:3]) for c in curves]:
            curves.append(new)
        return curves, plots.noam_curves(curves)

    # -- layout -------------------------------------------------------------------------------------

    with gr.Blocks(title="Transformer Playground", delete_cache=(3600, 3600)) as demo:
        gr.Markdown("# Transformer Playground\nA small encoder-decoder Transformer (Vaswani et al. 2017) trained on "
                    "Multi30k, and every view of how it works, read from forward hooks on its modules.")
        for problem in problems:
            gr.Markdown(f"**Checkpoint problem:** {problem}", elem_classes="problem")
        result = gr.State(None)
        curves = gr.State([])
        with gr.Row():
            pair = gr.Dropdown([(PAIR_NAMES.get(p, p), p) for p in pairs], value=pairs[0] if pairs else None,
                               label="Language pair", scale=1)
            text = gr.Textbox(label="English text", value=EXAMPLES[0], lines=2, max_length=20000, scale=4,
                              elem_id="source-text")
        gr.Examples(EXAMPLES, inputs=text, label="Examples")
        with gr.Row():
            strategy = gr.Radio([("Greedy", "greedy"), ("Random sampling", "sample"), ("Beam search", "beam")],
                                value="greedy", label="Decoding")
            max_len = gr.Slider(0, 200, value=0, step=1, label="Max length (0: automatic)")
        with gr.Row():
            temperature = gr.Slider(0, 3, value=1.0, step=0.05, label="Temperature (0: greedy)", visible=False)
            top_k = gr.Slider(0, 100, value=0, step=1, label="Top-k (0: off)", visible=False)
            top_p = gr.Slider(0.05, 1, value=1.0, step=0.05, label="Top-p (1: off)", visible=False)
            seed = gr.Number(0, precision=0, minimum=0, label="Seed", visible=False)
            n_samples = gr.Slider(1, 8, value=3, step=1, label="Samples side by side", visible=False)
            beam_size = gr.Slider(1, 16, value=4, step=1, label="Beam size", visible=False)
            length_penalty = gr.Slider(0, 2, value=1.0, step=0.1, label="Length penalty", visible=False)
        with gr.Row():
            go_button = gr.Button("Translate", variant="primary", elem_id="translate-button")
            compare_button = gr.Button("Compare greedy, sampling and beam search")
        translation = gr.Textbox(label="Translation", interactive=False, elem_id="translation")
        notice = gr.Markdown(elem_classes="notice")
        samples = gr.HTML()
        comparison = gr.HTML()

        with gr.Tabs():
            with gr.Tab("Step by step"):
                gr.Markdown(EXPLAIN["steps"])
                step_probs = gr.Plot(label="Top-5 at every step")
                step_index = gr.Slider(0, 1, value=0, step=1, label="Step")
                step_detail = gr.Plot(label="One step")
            with gr.Tab("Attention"):
                gr.Markdown(EXPLAIN["attention"])
                with gr.Row():
                    kind = gr.Radio([("Encoder self", "encoder"), ("Decoder self (masked)", "decoder"),
                                     ("Cross", "cross")], value="cross", label="Attention")
                    mode = gr.Radio([("One head", "single"), ("All heads of a layer", "heads"),
                                     ("All layers x heads", "all")], value="single", label="Show")
                    layer = gr.Dropdown([0], value=0, label="Layer")
                    head = gr.Dropdown(["average"], value="average", label="Head")
                attention_plot = gr.Plot(label="Attention", elem_id="attention-plot")
                attention_json = gr.DownloadButton("Download the maps (JSON)", visible=False)
            with gr.Tab("bertviz"):
                gr.Markdown(EXPLAIN["bertviz"])
                bertviz_view = gr.Radio([("Head view", "head"), ("Model view", "model")], value="head", label="View")
                bertviz_html = gr.HTML(elem_id="bertviz")
            with gr.Tab("Head ablation"):
                gr.Markdown(EXPLAIN["ablation"])
                heads = gr.CheckboxGroup([], label="Heads to switch off (kind:layer:head)", elem_id="ablation-heads")
                ablate_button = gr.Button("Translate without these heads", elem_id="ablate-button")
                ablation = gr.HTML(elem_id="ablation")
            with gr.Tab("Positional encoding"):
                gr.Markdown(EXPLAIN["positional"])
                pe_plot = gr.Plot()
                dims = gr.Dropdown([], multiselect=True, label="Dimensions to plot")
                pe_curve_plot = gr.Plot()
                pe_sim_plot = gr.Plot()
                inputs_plot = gr.Plot()
            with gr.Tab("Learning rate"):
                gr.Markdown(EXPLAIN["schedule"])
                with gr.Row():
                    d_model = gr.Slider(64, 1024, value=512, step=32, label="d_model")
                    warmup = gr.Slider(100, 16000, value=4000, step=100, label="warmup steps")
                    add = gr.Button("Add this curve")
                    clear = gr.Button("Clear")
                noam_plot = gr.Plot()
                training_plot = gr.Plot()
            with gr.Tab("Model card"):
                card = gr.Markdown()

        # -- wiring ---------------------------------------------------------------------------------
        sampling_controls = [temperature, top_k, top_p, seed, n_samples, beam_size, length_penalty]
        strategy.change(strategy_controls, strategy, sampling_controls, api_visibility="private")
        decode_inputs = [temperature, top_k, top_p, seed, beam_size, length_penalty, max_len]
        all_outputs = [translation, notice, samples, result, step_probs, step_index, step_detail, attention_plot,
                       attention_json, bertviz_html, inputs_plot, heads, ablation]
        go_inputs = [pair, text, strategy, temperature, top_k, top_p, seed, n_samples, beam_size, length_penalty,
                     max_len, kind, layer, head, mode, bertviz_view]
        go_button.click(translate_all, go_inputs, all_outputs, api_visibility="private")
        text.submit(translate_all, go_inputs, all_outputs, api_visibility="private")
        compare_button.click(compare, [pair, text] + decode_inputs, comparison, api_visibility="private")
        for control in (kind, layer, head, mode):
            control.change(redraw_attention, [result, kind, layer, head, mode], attention_plot, api_visibility="private")
        step_index.change(redraw_step, [result, step_index], step_detail, api_visibility="private")
        bertviz_view.change(redraw_bertviz, [result, bertviz_view], bertviz_html, api_visibility="private")
        ablate_button.click(run_ablation, [pair, result, heads], ablation, api_visibility="private")
        dims.input(pe_dims, [pair, dims], pe_curve_plot, api_visibility="private")
        add.click(add_curve, [curves, d_model, warmup], [curves, noam_plot], api_visibility="private")
        clear.click(lambda: ([], plots.noam_curves([])), None, [curves, noam_plot], api_visibility="private")
        pair_outputs = [card, pe_plot, pe_curve_plot, dims, pe_sim_plot, training_plot, heads, layer, head, curves]
        pair.change(pair_views, pair, pair_outputs, api_visibility="private").then(
            lambda c: plots.noam_curves(c), curves, noam_plot, api_visibility="private")
        if pairs:
            demo.load(pair_views, pair, pair_outputs, api_visibility="private").then(
                lambda c: plots.noam_curves(c), curves, noam_plot, api_visibility="private")
        gr.api(translate_api, api_name="translate")
        gr.api(attention_api, api_name="attention")
    return demo


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
