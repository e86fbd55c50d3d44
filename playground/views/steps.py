"""Step by step: when each piece was decided (the logit lens and DecoderLens), every generated token's probability
and top-5 alternatives, and one step's cross-attention."""
from __future__ import annotations

import gradio as gr


from transformer.interpret import analyses

from playground.view import PartlyDrawn, View, texts, to_page, log
from .common import need
from playground.figures.commitment import strip
from playground.figures.steps import step_detail, step_probabilities
from playground.i18n import ENGLISH, Texts, _l


def step_view(result, index: int, _: Texts = ENGLISH):
    """The candidates at step `index` and the cross-attention row of the query that chose it, per layer."""
    steps = result.translation.steps
    index = max(0, min(index, len(steps) - 1))
    cross = result.maps.cross  # (L, H, T, S); row t predicted target token t
    row = cross[:, :, min(index, cross.size(2) - 1)].mean(dim=1)  # (L, S), mean over heads
    return step_detail(steps[index], row, result.maps.source_tokens, index, _)


class StepsView(View):
    def build(self) -> None:
        self.decided = gr.HTML(elem_id="steps-decided", padding=False)  # when each piece was decided
        self.probs = gr.Plot(label=_l("Top-5 at every step"), elem_id="steps-probs")
        self.index = gr.Slider(1, 2, value=1, step=1, label=_l("Step"))  # counted from 1, as everywhere
        self.detail = gr.Plot(label=_l("One step"), elem_id="steps-detail")
        # a teacher with a class: "which piece comes next?" at the step shown, its votes (classroom/panel.py)
        with gr.Row(equal_height=True, elem_id="steps-class"):
            self.ask = gr.Button(_l("Ask the class: which piece comes next?"), size="sm", visible=False,
                                 elem_id="steps-ask")
            self.reveal = gr.Button(_l("Reveal to the class"), size="sm", visible=False, elem_id="steps-reveal")
        self.poll = gr.HTML(elem_id="steps-poll", padding=False)
        self.outputs = [self.decided, self.probs, self.index, self.detail]

    def fill(self, result, values: dict) -> dict:
        steps, _ = result.translation.steps, texts(values)
        drawn = {self.probs: step_probabilities(steps, _=_), self.index: gr.update(maximum=max(len(steps), 1), value=1),
                 self.detail: step_view(result, 0, _)}
        try:
            translator = self.ctx.translator(result.pair)
            decided = analyses.commitment(translator, result.text, result.translation)
            return drawn | {self.decided: strip(decided, _, steps, result.options.strategy)}
        except Exception as e:  # the steps still show; the strip is tried again on the next visit
            log.exception("the commitment strip failed")
            raise PartlyDrawn(drawn | {self.decided: ""},
                              _("**When it decided could not be drawn** ({error}).", error=type(e).__name__)) from None

    def focus(self, result, values: dict, where: dict[str, str]) -> dict:
        """A glance box of the output side: the step the glance shows."""
        step = min(max(int(where.get("step", 0)), 0), max(len(result.translation.steps) - 1, 0))
        return {self.index: step + 1, self.detail: step_view(result, step, texts(values))}

    @to_page
    def redraw(self, result, index, request: gr.Request = None) -> dict:
        return {self.detail: step_view(need(result), int(index) - 1, texts(request=request))}

    def wire(self, result: gr.State) -> None:
        self.index.change(self.redraw, [result, self.index], self.detail, api_visibility="private")
