"""One word changed: a minimal pair from the sentence in the box, activation patching of every site, and what the
decoder would write from each encoder layer (DecoderLens)."""
from __future__ import annotations

import html

import gradio as gr

from playground import edits
from playground.pieces import labels, shown
from transformer.errors import InputError
from transformer.interpret import analyses

from playground.view import View, texts, to_page
from .common import need, token_diff
from playground.figures.patching import patching_grid
from playground.i18n import ENGLISH, N_, Texts, _l

DIRECTIONS = [(N_("Denoising: the first sentence's part put into the second's run (is it enough?)"), "denoising"),
              (N_("Noising: the second sentence's part put into the first's run (does it carry the change?)"),
               "noising")]
SITE_TITLES = {"encoder": N_("encoder layers × source pieces"),
               "heads:encoder": N_("encoder self-attention heads"), "heads:decoder": N_("decoder self-attention heads"),
               "heads:cross": N_("cross-attention heads"),
               "decoder": N_("decoder layers × target positions")}
DIRECTION_TITLES = {"denoising": N_("Denoising: the share of the difference each part carries"),
                    "noising": N_("Noising: the share of the difference each part carries")}


def edit_choices(translator, text: str) -> list[tuple[str, str]]:
    """(menu line, edited sentence) for each edit that applies, those that keep the number of pieces first."""
    pieces = len(translator.source_ids(text)[0])
    made = [(kind, edited, len(translator.source_ids(edited)[0]) == pieces) for kind, edited in edits.edits(text)]
    made.sort(key=lambda m: not m[2])
    return [(f"{kind} — {edited}" + ("" if same else " (other number of pieces)"), edited)
            for kind, edited, same in made]


def pair_text(out, _: Texts = ENGLISH) -> str:
    """Both translations with the pieces that differ marked, and what the measure compares, in the language of
    `_`."""
    first, second = html.escape(shown(out.labels["first_piece"])), html.escape(shown(out.labels["second_piece"]))
    prefix = " ".join(shown(p) for p in out.labels["prefix"][1:]) or _("(nothing yet)")
    said = _("After the shared beginning {prefix}, the first run writes {first} and the second {second}. The measure "
             "is log p({plain_first}) − log p({plain_second}): {first_measure} in the first run, {second_measure} in "
             "the second. Each cell below is the share of that difference one patch carries: 0 nothing, 1 all.",
             prefix=_.quoted(html.escape(prefix)), first=f"<b>{first}</b>", second=f"<b>{second}</b>",
             plain_first=first, plain_second=second, first_measure=_.number(out.first_measure),
             second_measure=_.number(out.second_measure))
    return (token_diff(out.labels["first_translation"].split(), out.labels["second_translation"].split(),
                       _("first sentence"), _("second sentence"), unit="word", _=_) + f"<p>{said}</p>")


def skipped_text(out, _: Texts = ENGLISH) -> str:
    if not out.skipped:
        return ""
    return "<p class='notice'>" + _("The two sentences have different numbers of pieces, so source positions do not "
                                    "line up: the encoder's positions and heads cannot be compared. The decoder's "
                                    "positions and the decoder and cross-attention heads can: both runs write the "
                                    "same beginning.") + "</p>"


def lens_table(translator, text: str) -> str:
    """DecoderLens: each encoder layer's translation, and from which piece on it agrees with the full model."""
    rows, full = analyses.decoder_lens(translator, text), None
    full = rows[-1].target_tokens
    body = ""
    for k, row in enumerate(rows):
        same = next((t for t, (a, b) in enumerate(zip(row.target_tokens, full)) if a == b), None)
        agree = "the model's own translation" if row.target_tokens == full else (
            f"first agrees at piece {same + 1}" if same is not None else "never agrees")
        body += (f"<tr><td>encoder layer {k + 1}</td><td>{html.escape(row.text)}</td>"
                 f"<td>{agree}</td></tr>")
    return ("<table class='timeline'><tr><th>the decoder reads</th><th>it writes</th><th>against the full model</th>"
            f"</tr>{body}</table>")


class PatchingView(View):
    def build(self) -> None:
        with gr.Row():
            self.edit = gr.Dropdown([], label=_l("Change one thing"), scale=2, elem_id="patching-edit")
            self.second = gr.Textbox(label=_l("…or type the second sentence"), scale=2, elem_id="patching-second")
        with gr.Row():
            self.direction = gr.Radio([(_l(label), key) for label, key in DIRECTIONS], value="denoising",
                                      label=_l("Direction"), scale=3)
            self.trace = gr.Button(_l("Trace the difference"), variant="primary", scale=1, elem_id="patching-trace")
        self.pair = gr.HTML(elem_id="patching-pair")
        self.plot = gr.Plot(label=_l("Which parts carry the difference"), elem_id="patching-plot")
        self.lens = gr.HTML(elem_id="patching-lens")
        self.controls = [self.direction]
        self.outputs = [self.edit, self.second, self.pair, self.plot, self.lens]

    def figure(self, translator, out, _):
        sources = labels(out.labels["first_source"])
        columns = {"encoder": sources, "decoder": labels(out.labels["prefix"]),
                   **{s: [_("head {n}", n=h + 1) for h in range(translator.cfg.n_heads)] for s in out.scores if ":" in s}}
        panels = [(_(SITE_TITLES[site]), scores, columns[site]) for site, scores in out.scores.items()]
        return patching_grid(panels, _("at"), _(DIRECTION_TITLES[out.direction]), _)

    def draw(self, result, second: str, direction: str, _) -> dict:
        translator = self.ctx.translator(result.pair)
        if not (second or "").strip():
            raise InputError(N_("type a second sentence, or choose a change from the menu"))
        out = analyses.patch(translator, result.text, second, direction)
        return {self.pair: pair_text(out, _) + skipped_text(out, _), self.plot: self.figure(translator, out, _)}

    def fill(self, result, values: dict) -> dict:
        translator = self.ctx.translator(result.pair)
        choices = edit_choices(translator, result.text)
        second = choices[0][1] if choices else ""
        out = {self.edit: gr.update(choices=choices, value=second or None), self.second: second,
               self.lens: lens_table(translator, result.text), self.pair: "", self.plot: None}
        if not second:
            return out | {self.pair: "<p>No change applies to this sentence: type a second sentence above.</p>"}
        try:
            return out | self.draw(result, second, values[self.direction], texts(values))
        except InputError as e:  # the edit leaves the translation as it was: said, and another can be tried
            return out | {self.pair: f"<p class='notice'>{html.escape(str(e))}.</p>"}

    @to_page
    def traced(self, result, second, direction, request: gr.Request = None) -> dict:
        return self.draw(need(result), second, direction, texts(request=request))

    def wire(self, result: gr.State) -> None:
        self.edit.input(lambda edited: edited or gr.skip(), self.edit, self.second, queue=False,
                        api_visibility="private").then(self.traced, [result, self.second, self.direction],
                                                       [self.pair, self.plot], api_visibility="private")
        for trigger in (self.trace.click, self.second.submit, self.direction.input):
            trigger(self.traced, [result, self.second, self.direction], [self.pair, self.plot], api_visibility="private")
