"""The top of the page: language pair, text, decoding settings, the translation and the three-way comparison; the
warnings under a translation and the unsure words come from playground.doubts."""
from __future__ import annotations

import html
import json
from dataclasses import replace

import gradio as gr

from transformer.decoding import MAX_BEAM, DecodeOptions
from transformer.translator import MAX_SENTENCES

from playground.context import ROOT, Context
from playground.doubts import CUT, marked, warnings_under
from playground.view import to_page
from playground.views.common import cards
from playground.i18n import DEFAULT, LANGUAGE, Texts, _l

EXAMPLES = json.loads((ROOT / "assets" / "examples.json").read_text(encoding="utf-8"))
PICK = _l("Pick an example sentence")  # the menu's first line: choosing a sentence translates it at once
PRESENT_JS = "(on) => tp.present(on)"  # in the browser (assets/page.js): presentation mode on or off


def shortened(text: str, most: int = 80) -> str:
    """`text`, or its first `most` - 1 characters and an ellipsis."""
    return text if len(text) <= most else text[: most - 1] + "…"


class TranslatePanel:
    def __init__(self, ctx: Context, extras=None, present_extras=None):
        """extras, present_extras: build more controls in the row under the panel, and in presentation mode's bar
        (the class's: playground/classroom/panel.py)."""
        self.ctx = ctx
        pairs = ctx.pairs
        # One compact block, so that the first screen also holds the model at a glance: the sentence, the button and
        # the translation on one line (each on its own on a phone), the examples as a menu, the settings folded.
        with gr.Row(equal_height=True, elem_id="panel"):
            self.pair = gr.Dropdown(ctx.menu(), value=pairs[0] if pairs else None,
                                    label=_l("Language pair"), scale=1, min_width=230,
                                    elem_id="pair")  # a phone: its own line
            # one line that grows: Enter translates, Shift+Enter starts a new line (Gradio submits on Enter only
            # in a one-line box)
            self.text = gr.Textbox(label=_l("English text"), value=EXAMPLES[0], lines=1, max_lines=4, max_length=20000,
                                   placeholder=_l("Type an English sentence. Enter translates; Shift+Enter starts "
                                                  "a new line."),
                                   scale=4, min_width=240, elem_id="source-text")
            self.go = gr.Button(_l("Translate"), variant="primary", scale=0, min_width=110, elem_id="translate-button")
            self.translation = gr.Textbox(label=_l("Translation"), interactive=False, scale=4, min_width=240,
                                          elem_id="translation")
        with gr.Row(elem_id="panel-extras"):
            self.examples = gr.Dropdown([(PICK, "")] + EXAMPLES, value="", show_label=False, container=False, scale=1,
                                        min_width=240, elem_id="examples")
            with gr.Column(scale=1, min_width=240), gr.Accordion(_l("Decoding, presentation mode, link"), open=False,
                                                               elem_id="decoding"):
                self.settings()
            if extras:
                extras()
        self.link = gr.Textbox(label=_l("Shareable link: opens this pair, sentence and decoding, already translated"),
                               interactive=False, buttons=["copy"], visible=False, elem_id="share-link")
        # in presentation mode the settings are folded away: these two (shown only then, under the panel) make the link
        # and leave it
        with gr.Row(elem_id="present-bar"):
            self.present_share = gr.Button(_l("Link to this"), size="sm", scale=0, min_width=90)
            self.present_leave = gr.Button(_l("Leave presentation mode"), size="sm", scale=0, min_width=90)
            if present_extras:
                present_extras()
        with gr.Column(elem_id="panel-out"):  # nothing to say: no room taken
            self.unsure = gr.HTML(elem_id="unsure")  # the translation with the pieces the model was unsure of marked
            self.notice = gr.Markdown(elem_classes="notice")
            # a text of several sentences: which one the views show (the first until another is chosen)
            self.which = gr.Dropdown([("1", 0)], value=0, label=_l("The views below show"), visible=False,
                                     interactive=True, elem_id="which-sentence")
            self.samples = gr.HTML()
            self.comparison = gr.HTML()

    def settings(self) -> None:
        """The folded settings: decoding, the three-way comparison, presentation mode and the link."""
        with gr.Row():  # one row, wrapped to the fold's width: one form (each row of inputs is one more component)
            self.strategy = gr.Radio([(_l("Greedy"), "greedy"), (_l("Random sampling"), "sample"),
                                      (_l("Beam search"), "beam")],
                                     value="greedy", label=_l("Decoding"))
            self.max_len = gr.Slider(0, 200, value=0, step=1, label=_l("Max length (0: automatic)"))
            # on: a word, or a piece inside one, at most twice in a row (a single letter three times), a phrase of two
            # or three words once; off shows the model's own stutters ("Görs·ev·ev·ev", "zu spät zu spät")
            self.stutter_guard = gr.Checkbox(
                True, label=_l("Stutter guard: a word, or a piece inside one, at most twice in a row; a phrase once"),
                elem_id="stutter-guard")  # a line of its own (assets/style.css)
            self.temperature = gr.Slider(0, 3, value=1.0, step=0.05, label=_l("Temperature (0: greedy)"), visible=False)
            self.top_k = gr.Slider(0, 100, value=0, step=1, label=_l("Top-k (0: off)"), visible=False)
            self.top_p = gr.Slider(0.05, 1, value=1.0, step=0.05, label=_l("Top-p (1: off)"), visible=False)
            self.seed = gr.Number(0, precision=0, minimum=0, label=_l("Seed"), visible=False)
            self.n_samples = gr.Slider(1, 8, value=3, step=1, label=_l("Samples side by side"), visible=False)
            self.beam_size = gr.Slider(1, MAX_BEAM, value=4, step=1, label=_l("Beam size"), visible=False)
            self.length_penalty = gr.Slider(0, 2, value=1.0, step=0.1, label=_l("Length penalty"), visible=False)
        with gr.Row():
            self.new_sample = gr.Button(_l("New sample (next seed)"), visible=False, elem_id="new-sample")
            self.compare_button = gr.Button(_l("Compare greedy, sampling and beam search"))
        with gr.Row():
            self.present = gr.Checkbox(False, label=_l("Presentation mode (larger, for a projector)"),
                                       elem_id="present-toggle")
            self.share = gr.Button(_l("Link to this sentence and these settings"), elem_id="share-button")
    @property
    def decoding(self) -> list:
        """The decoding controls, in the order of DecodeOptions' fields (max length 0: automatic)."""
        return [self.strategy, self.temperature, self.top_k, self.top_p, self.seed, self.beam_size,
                self.length_penalty, self.max_len, self.stutter_guard]

    @property
    def controls(self) -> list:
        return [self.pair, self.text, self.n_samples] + self.decoding

    @property
    def outputs(self) -> list:
        return [self.translation, self.unsure, self.notice, self.samples, self.which]

    def sentence_menu(self, parts: list[str], which: int, shown: bool = True) -> dict:
        """The menu of the text's sentences (at most MAX_SENTENCES), `which` chosen; shown for two or more."""
        kept = parts[:MAX_SENTENCES]
        choices = [(f"{i + 1}. {shortened(part)}", i) for i, part in enumerate(kept)]
        return {self.which: gr.update(choices=choices, value=which, visible=shown and len(kept) > 1)}

    def options(self, values: dict):
        return DecodeOptions(*(values[c] for c in self.decoding))

    def fill(self, result, values: dict) -> dict:
        """The translation, notices when the source was cut, lies far from what the model knows, is not English, or
        has a number or a name the translation changed, a word it left in English or made up or an article that
        does not fit its noun, and more samples side by side when asked for."""
        translator, _ = self.ctx.translator(result.pair), Texts(values.get(LANGUAGE, DEFAULT))
        notices = [_(CUT)] if result.translation.truncated else []
        notices += warnings_under(translator, result.text, result.translation, _)
        notice = html.escape(" ".join(notices).strip())
        samples = ""
        n = int(values[self.n_samples] or 1)
        if result.options.strategy == "sample":  # the box is sample 1; the others are drawn from the next seed
            seed = result.options.seed
            more = translator.translate_batch([result.text] * (n - 1), replace(result.options, seed=seed + 1)) if n > 1 else []
            names = [f"sample 1 of {n} (seed {seed}): the translation above"] + [f"sample {i}" for i in range(2, n + 1)]
            samples = cards(list(zip(names, [result.translation.text] + [s.text for s in more])))
        return {self.translation: result.translation.text, self.unsure: marked([result.translation], _),
                self.notice: notice, self.samples: samples}

    def joined(self, translator, result, parts: list[str], which: int = 0, language: str = DEFAULT) -> dict:
        """With several sentences, the box holds each one's translation (sentence `which`'s is `result`'s, the one
        the views show), joined, and the notice says so, with what the checks found in every sentence (each kind
        said once); at most MAX_SENTENCES of them. Nothing to change for one sentence."""
        if len(parts) < 2:
            return {}
        kept = parts[:MAX_SENTENCES]
        others = translator.translate_batch(kept[:which] + kept[which + 1:], result.options)
        every = others[:which] + [result.translation] + others[which:]
        _ = Texts(language)
        left = (_("; the {n} after the first {kept} were left out", n=len(parts) - len(kept), kept=len(kept))
                if len(parts) > len(kept) else "")
        note = _("Translated as {n} sentences, one at a time (the model learned single sentences){left}; the views "
                 "below show sentence {which}, {sentence} (choose another just below).", n=len(parts), left=left,
                 which=which + 1, sentence=_.quoted(shortened(result.text)))
        cut = [_(CUT)] if any(t.truncated for t in every) else []
        notice = html.escape(" ".join([note] + cut + warnings_under(translator, kept, every, _)))
        return {self.translation: " ".join(t.text for t in every), self.unsure: marked(every, _), self.notice: notice}

    def strategy_controls(self, strategy: str) -> dict:
        sampling, beam = strategy == "sample", strategy == "beam"
        return ({c: gr.update(visible=sampling) for c in (self.temperature, self.top_k, self.top_p, self.seed,
                                                            self.n_samples, self.new_sample)}
                | {c: gr.update(visible=beam) for c in (self.beam_size, self.length_penalty)})

    @to_page
    def compare(self, pair, text, *decoding) -> dict:
        """The same sentence with greedy decoding, the sampling settings and the beam settings."""
        t, opts = self.ctx.translator(pair), DecodeOptions(*decoding)
        rows = [("greedy", "greedy"), (f"sample (T={opts.temperature:g}, seed {opts.seed})", "sample"),
                (f"beam search (k={opts.beam_size})", "beam")]
        said = (f'<p class="cards-for">Compared for “{html.escape(text.strip())}”, {html.escape(self.ctx.label(pair))}:'
                "</p>")  # the cards stay while other sentences are translated: they say which one they show
        return {self.comparison: said + cards([(name, t.translate(text, replace(opts, strategy=s)).text)
                                               for name, s in rows])}

    def wire(self) -> None:
        """The panel's own events (the page translates after some of them; links.py writes the shareable link)."""
        self.strategy.change(self.strategy_controls, self.strategy,
                             [self.temperature, self.top_k, self.top_p, self.seed, self.n_samples, self.new_sample,
                              self.beam_size, self.length_penalty], api_visibility="private")
        # the page translates after each of these (playground/page.py), so the Translation box is always the sentence's
        self.compared = self.compare_button.click(self.compare, [self.pair, self.text] + self.decoding, self.comparison,
                                                  api_visibility="private")
        self.reseeded = self.new_sample.click(lambda seed: int(seed or 0) + 1, self.seed, self.seed, queue=False,
                                              api_visibility="private")
        # an example from the menu goes into the box (the page then translates it); the menu's first line picks none
        self.picked = self.examples.input(lambda example: example or gr.skip(), self.examples, self.text, queue=False,
                                          api_visibility="private")
        self.present.change(None, self.present, None, js=PRESENT_JS)
        self.present_leave.click(lambda: False, None, self.present, queue=False, api_visibility="private")
