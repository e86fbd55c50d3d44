"""What the decoder keeps: the KV cache step by step (its self-attention rows growing, its cross-attention rows made
once), its sizes, and the sentence decoded with and without it, timed on request."""
from __future__ import annotations

import gradio as gr

from transformer.interpret import analyses

from playground.view import View, texts, to_page
from .common import need
from playground.figures.cache import cache_figure, size_table, timing_text
from playground.i18n import _l


class CacheView(View):
    def build(self) -> None:
        self.step = gr.Slider(1, 2, value=1, step=1, label=_l("Step"))  # counted from 1, as everywhere
        self.sizes = gr.HTML(elem_id="cache-sizes")
        self.plot = gr.Plot(elem_id="cache-plot")
        self.time = gr.Button(_l("Decode it with and without the cache, and time both"), elem_id="cache-time")
        self.timing = gr.HTML(elem_id="cache-timing")
        self.outputs = [self.step, self.sizes, self.plot, self.timing]

    def at_step(self, result, step: int, _) -> dict:
        trace = result.cache
        step = max(0, min(step, len(trace.target) - 1))
        return {self.sizes: size_table(trace, step, _), self.plot: cache_figure(trace, step, _)}

    def fill(self, result, values: dict) -> dict:
        trace = result.cache
        last = len(trace.target) - 1  # the last step: the whole cache
        return self.at_step(result, last, texts(values)) | {self.step: gr.update(maximum=max(last + 1, 2), value=last + 1),
                                             self.timing: ""}

    @to_page
    def redraw(self, result, step, request: gr.Request = None) -> dict:
        return self.at_step(need(result), int(step) - 1, texts(request=request))

    @to_page
    def timed(self, result, request: gr.Request = None) -> dict:
        """Timed now, in this request: never cached."""
        result = need(result)
        timing = analyses.cache_timing(self.ctx.translator(result.pair), result.text)
        return {self.timing: timing_text(timing, texts(request=request))}

    def wire(self, result: gr.State) -> None:
        self.step.change(self.redraw, [result, self.step], [self.sizes, self.plot], api_visibility="private")
        self.time.click(self.timed, result, self.timing, api_visibility="private")
