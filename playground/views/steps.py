"""Step by step: every generated token's probability and top-5 alternatives, and one step's cross-attention."""
from __future__ import annotations

import gradio as gr

from playground import figures, plots

from .common import View, friendly, need


class StepsView(View):
    def build(self) -> None:
        self.probs = gr.Plot(label="Top-5 at every step")
        self.index = gr.Slider(1, 2, value=1, step=1, label="Step")  # counted from 1, as everywhere
        self.detail = gr.Plot(label="One step")
        self.outputs = [self.probs, self.index, self.detail]

    def fill(self, result, values: dict) -> dict:
        steps = result.translation.steps
        return {self.probs: plots.step_probabilities(steps),
                self.index: gr.update(maximum=max(len(steps), 1), value=1),
                self.detail: figures.step_view(result, 0)}

    def focus(self, result, values: dict, where: dict[str, str]) -> dict:
        """A glance box of the output side: the step the glance shows."""
        step = min(max(int(where.get("step", 0)), 0), max(len(result.translation.steps) - 1, 0))
        return {self.index: step + 1, self.detail: figures.step_view(result, step)}

    @friendly
    def redraw(self, result, index) -> dict:
        return {self.detail: figures.step_view(need(result), int(index) - 1)}

    def wire(self, result: gr.State) -> None:
        self.index.change(self.redraw, [result, self.index], self.detail, api_visibility="private")
