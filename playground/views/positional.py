"""Positional encoding: the model's own PE buffer, chosen sinusoids, and what the first layer received."""
from __future__ import annotations

import gradio as gr


from playground.view import View, texts, to_page
from playground.figures.positional import embedding_inputs, pe_curves, pe_matrix, pe_similarity
from playground.i18n import _l


class PositionalView(View):
    def build(self) -> None:
        self.matrix = gr.Plot()
        self.dims = gr.Dropdown([], multiselect=True, label=_l("Dimensions to plot"))
        self.curves = gr.Plot()
        self.similarity = gr.Plot()
        self.inputs = gr.Plot()
        self.outputs = [self.inputs]
        self.pair_outputs = [self.matrix, self.curves, self.dims, self.similarity]

    def fill(self, result, values: dict) -> dict:
        ins = result.inspection
        _ = texts(values)
        return {self.inputs: embedding_inputs(
            ins.source_embedded, ins.source_input, result.maps.source_tokens,
            _("What the encoder's first layer received (read by a hook on the PE module)"), _)}

    def on_pair(self, translator, pair: str, values: dict) -> dict:
        pe, d_model, layout = translator.model.positional.pe.cpu(), translator.cfg.d_model, translator.cfg.positional_layout
        partner = 1 if layout == "interleaved" else d_model // 2  # a sine's cosine of the same frequency
        top = min(40, d_model - 2) if layout == "interleaved" else min(40, d_model // 2 - 1)
        dims = [d for sine in sorted({0, min(8, top), top}) for d in (sine, sine + partner)]  # sine and cosine pairs
        _ = texts(values)
        return {self.matrix: pe_matrix(pe, layout=layout, _=_), self.curves: pe_curves(pe, dims, layout=layout, _=_),
                self.dims: gr.update(choices=[(str(d + 1), d) for d in range(d_model)], value=dims),  # shown from 1
                self.similarity: pe_similarity(pe, _=_)}

    @to_page
    def redraw(self, pair, dims, request: gr.Request = None) -> dict:
        translator = self.ctx.translator(pair)
        pe = translator.model.positional.pe.cpu()
        return {self.curves: pe_curves(pe, [int(d) for d in dims][:12], layout=translator.cfg.positional_layout,
                                       _=texts(request=request))}

    def wire(self, result: gr.State) -> None:
        self.dims.input(self.redraw, [self.panel.pair, self.dims], self.curves, api_visibility="private")
