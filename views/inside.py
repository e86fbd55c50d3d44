"""Inside one head: eq. 1 worked through for one query token, every number read by hooks on the real modules."""
from __future__ import annotations

import gradio as gr

from transformer import playground

from .common import EXPLAIN, Context, View, friendly, kind_radio, layer_choices, need


class InsideHeadView(View):
    def __init__(self, ctx: Context):
        self.ctx = ctx
        with gr.Tab("One head"):
            gr.Markdown(EXPLAIN["inside"])
            self.notice()
            with gr.Row():
                self.kind = kind_radio("decoder")
                self.layer = gr.Dropdown([0], value=0, label="Layer")
                self.head = gr.Dropdown([0], value=0, label="Head")
                self.query = gr.Dropdown([], label="Query token", elem_id="inside-query")
            self.steps = gr.HTML(elem_id="inside-steps")
            self.plot = gr.Plot(label="Inside one head", elem_id="inside-plot")
        self.controls = [self.kind, self.layer, self.head]
        self.outputs = [self.query, self.steps, self.plot]
        self.pair_outputs = [self.layer, self.head]

    def draw(self, result, kind: str, layer, head, query) -> dict:
        choices = playground.query_choices(result, kind)
        query = min(int(query or 0), len(choices) - 1)
        layer = min(int(layer), getattr(result.maps, kind).size(0) - 1)
        fig, steps = playground.inside_head(self.ctx.translator(result.pair), result, kind, layer, int(head), query)
        return {self.query: gr.update(choices=choices, value=query), self.steps: steps, self.plot: fig}

    def fill(self, result, values: dict) -> dict:
        default = 2 if values[self.kind] == "decoder" else 0  # a decoder query with a few positions before it
        return self.draw(result, values[self.kind], values[self.layer], values[self.head], default)

    def on_pair(self, translator, pair: str, values: dict) -> dict:
        return {self.layer: gr.update(choices=layer_choices(translator), value=0),
                self.head: gr.update(choices=list(range(translator.cfg.n_heads)), value=0)}

    @friendly
    def redraw(self, result, kind, layer, head, query) -> dict:
        return self.draw(need(result), kind, layer, head, query)

    def wire(self, result: gr.State) -> None:
        inputs = [result, self.kind, self.layer, self.head, self.query]
        for control in (self.kind, self.layer, self.head):
            control.change(self.redraw, inputs, self.outputs, api_visibility="private")
        self.query.input(self.redraw, inputs, self.outputs, api_visibility="private")  # the user's choice only
