"""The top of the page: language pair, text, decoding settings, the translation and the three-way comparison."""
from __future__ import annotations

import dataclasses
import html
import json
from dataclasses import replace

import gradio as gr

from transformer.decoding import MAX_BEAM, DecodeOptions

from playground.results import MAX_SENTENCES

from .common import ROOT, Context, cards, friendly

EXAMPLES = json.loads((ROOT / "assets" / "examples.json").read_text(encoding="utf-8"))
QUERY_FIELDS = tuple(f.name for f in dataclasses.fields(DecodeOptions))  # the URL names of the decoding controls

# Builds the shareable link in the browser, from the page's own address (right behind any proxy), offline too.
SHARE_JS = """(pair, text, present, ...decoding) => {
    const url = new URL(window.location.href);
    url.search = ""; url.hash = "";
    const fields = FIELDS;
    url.searchParams.set("pair", pair);
    url.searchParams.set("text", text);
    fields.forEach((name, i) => url.searchParams.set(name, decoding[i]));
    if (present) url.searchParams.set("present", "1");
    return url.toString();
}""".replace("FIELDS", json.dumps(QUERY_FIELDS))
PRESENT_JS = "(on) => { document.body.classList.toggle('present', Boolean(on)); }"


class TranslatePanel:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        pairs = ctx.pairs
        with gr.Row():
            self.pair = gr.Dropdown([(ctx.label(p), p) for p in pairs], value=pairs[0] if pairs else None,
                                    label="Language pair", scale=1, min_width=220)  # a phone: on its own line, whole
            # one line that grows: Enter translates, Shift+Enter starts a new line (Gradio submits on Enter only
            # in a one-line box)
            self.text = gr.Textbox(label="English text", value=EXAMPLES[0], lines=1, max_lines=4, max_length=20000,
                                   placeholder="Type an English sentence. Enter translates; Shift+Enter starts a new line.",
                                   scale=4, elem_id="source-text")
        self.examples = gr.Examples(EXAMPLES, inputs=self.text, examples_per_page=len(EXAMPLES),
                                    label="Examples (a click translates): picture captions and everyday sentences")
        with gr.Row():
            self.strategy = gr.Radio([("Greedy", "greedy"), ("Random sampling", "sample"), ("Beam search", "beam")],
                                     value="greedy", label="Decoding")
            self.max_len = gr.Slider(0, 200, value=0, step=1, label="Max length (0: automatic)")
        with gr.Row():
            self.temperature = gr.Slider(0, 3, value=1.0, step=0.05, label="Temperature (0: greedy)", visible=False)
            self.top_k = gr.Slider(0, 100, value=0, step=1, label="Top-k (0: off)", visible=False)
            self.top_p = gr.Slider(0.05, 1, value=1.0, step=0.05, label="Top-p (1: off)", visible=False)
            self.seed = gr.Number(0, precision=0, minimum=0, label="Seed", visible=False)
            self.n_samples = gr.Slider(1, 8, value=3, step=1, label="Samples side by side", visible=False)
            self.beam_size = gr.Slider(1, MAX_BEAM, value=4, step=1, label="Beam size", visible=False)
            self.length_penalty = gr.Slider(0, 2, value=1.0, step=0.1, label="Length penalty", visible=False)
        with gr.Row():
            self.go = gr.Button("Translate", variant="primary", elem_id="translate-button")
            self.new_sample = gr.Button("New sample (next seed)", visible=False, elem_id="new-sample")
            self.compare_button = gr.Button("Compare greedy, sampling and beam search")
        with gr.Row():
            self.present = gr.Checkbox(False, label="Presentation mode (larger text and figures, for a projector)",
                                       elem_id="present-toggle")
            self.share = gr.Button("Link to this sentence and these settings", elem_id="share-button")
        self.link = gr.Textbox(label="Shareable link: opens this pair, sentence and decoding, already translated",
                               interactive=False, buttons=["copy"], elem_id="share-link")
        self.translation = gr.Textbox(label="Translation", interactive=False, elem_id="translation")
        self.notice = gr.Markdown(elem_classes="notice")
        self.samples = gr.HTML()
        self.comparison = gr.HTML()

    @property
    def decoding(self) -> list:
        """The decoding controls, in the order of DecodeOptions' fields (max length 0: automatic)."""
        return [self.strategy, self.temperature, self.top_k, self.top_p, self.seed, self.beam_size,
                self.length_penalty, self.max_len]

    @property
    def controls(self) -> list:
        return [self.pair, self.text, self.n_samples] + self.decoding

    @property
    def outputs(self) -> list:
        return [self.translation, self.notice, self.samples]

    def options(self, values: dict):
        return DecodeOptions(*(values[c] for c in self.decoding))

    def fill(self, result, values: dict) -> dict:
        """The translation, notices when the source was cut or lies far from what the model knows, and more samples
        side by side when asked for."""
        translator = self.ctx.translator(result.pair)
        notices = ["The text was longer than the model's positions and was cut to fit."] if result.translation.truncated else []
        notice = html.escape(" ".join(notices + [translator.unfamiliar(result.text)]).strip())
        samples = ""
        n = int(values[self.n_samples] or 1)
        if result.options.strategy == "sample":  # the box is sample 1; the others are drawn from the next seed
            seed = result.options.seed
            more = translator.translate_batch([result.text] * (n - 1), replace(result.options, seed=seed + 1)) if n > 1 else []
            names = [f"sample 1 of {n} (seed {seed}): the translation above"] + [f"sample {i}" for i in range(2, n + 1)]
            samples = cards(list(zip(names, [result.translation.text] + [s.text for s in more])))
        return {self.translation: result.translation.text, self.notice: notice, self.samples: samples}

    def joined(self, translator, result, parts: list[str], filled: dict) -> dict:
        """With several sentences, the box holds each one's translation (the first's is `result`'s), joined, and the
        notice says so; at most MAX_SENTENCES of them. Nothing to change for one sentence."""
        if len(parts) < 2:
            return {}
        kept = parts[:MAX_SENTENCES]
        rest = translator.translate_batch(kept[1:], result.options)
        left = f"; the {len(parts) - len(kept)} after the first {len(kept)} were left out" if len(parts) > len(kept) else ""
        note = (f"Translated as {len(parts)} sentences, one at a time (the model learned single sentences){left}; "
                "the views below show the first.")
        return {self.translation: " ".join([result.translation.text] + [t.text for t in rest]),
                self.notice: " ".join(filter(None, [note, filled.get(self.notice, "")]))}

    def from_query(self, values: dict, query: dict[str, str]) -> tuple[dict, list[str]]:
        """The controls' values with a shared link's URL parameters applied; each bad one is left out and named,
        and every other one is kept."""
        values, problems = dict(values), []
        pair = query.get("pair")
        if pair is not None:
            if pair in self.ctx.pairs:
                values[self.pair] = pair
            else:
                problems.append(f"pair {pair!r} is not loaded here")
        if "text" in query:
            values[self.text] = query["text"][: self.text.max_length]
        for name, control in zip(QUERY_FIELDS, self.decoding):
            if name not in query:
                continue
            raw = query[name]
            try:
                value = raw if name == "strategy" else float(raw)
                DecodeOptions(*(value if c is control else values[c] for c in self.decoding))  # checks this one
                values[control] = value
            except ValueError as e:
                problems.append(f"{name}={raw!r} was left out ({e})" if "could not convert" not in str(e)
                                else f"{name}={raw!r} is not a number")
        return values, problems

    def strategy_controls(self, strategy: str) -> dict:
        sampling, beam = strategy == "sample", strategy == "beam"
        return ({c: gr.update(visible=sampling) for c in (self.temperature, self.top_k, self.top_p, self.seed,
                                                            self.n_samples, self.new_sample)}
                | {c: gr.update(visible=beam) for c in (self.beam_size, self.length_penalty)})

    @friendly
    def compare(self, pair, text, *decoding) -> dict:
        """The same sentence with greedy decoding, the sampling settings and the beam settings."""
        t, opts = self.ctx.translator(pair), DecodeOptions(*decoding)
        rows = [("greedy", "greedy"), (f"sample (T={opts.temperature:g}, seed {opts.seed})", "sample"),
                (f"beam search (k={opts.beam_size})", "beam")]
        return {self.comparison: cards([(name, t.translate(text, replace(opts, strategy=s)).text) for name, s in rows])}

    def wire(self) -> None:
        self.strategy.change(self.strategy_controls, self.strategy,
                             [self.temperature, self.top_k, self.top_p, self.seed, self.n_samples, self.new_sample,
                              self.beam_size, self.length_penalty], api_visibility="private")
        # the page translates after each of these (app.py), so the Translation box is always the sentence's
        self.compared = self.compare_button.click(self.compare, [self.pair, self.text] + self.decoding, self.comparison,
                                                  api_visibility="private")
        self.reseeded = self.new_sample.click(lambda seed: int(seed or 0) + 1, self.seed, self.seed, queue=False,
                                              api_visibility="private")
        self.share.click(None, [self.pair, self.text, self.present] + self.decoding, self.link, js=SHARE_JS)
        self.present.change(None, self.present, None, js=PRESENT_JS)
