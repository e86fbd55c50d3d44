"""Attention: plotly heatmaps of encoder self, decoder self and cross attention, and the maps as JSON."""
from __future__ import annotations

import gradio as gr

from playground import downloads
from playground.figures.maps import attention_figure

from playground.view import View, texts, to_page
from .common import first_translator, head_choices, kind_radio, layer_choices, need
from playground.i18n import _l


class AttentionView(View):
    def build(self) -> None:
        with gr.Row():
            self.kind = kind_radio("cross")
            self.mode = gr.Radio([(_l("One head"), "single"), (_l("All heads of a layer"), "heads"),
                                  (_l("All layers x heads"), "all")], value="single", label=_l("Show"))
            self.layer = gr.Dropdown(layer_choices(first_translator(self.ctx)), value=0, label=_l("Layer"))  # from 1
            # "average" in the page's language once a pair is drawn (on_pair): gradio's menus take no translated
            # label (the browser would send the translation back as the value)
            self.head = gr.Dropdown([("average", "average")], value="average", label=_l("Head"))
        self.plot = gr.Plot(label=_l("Attention"), elem_id="attention-plot")
        self.download = gr.DownloadButton(_l("Download the maps (JSON)"), visible=False)
        self.controls = [self.kind, self.layer, self.head, self.mode]
        self.outputs = [self.plot, self.download]
        self.pair_outputs = [self.layer, self.head]
        self.focus_outputs = [self.kind, self.mode]

    def figure(self, result, kind: str, layer, head: str, mode: str, _):
        layer = min(int(layer), getattr(result.maps, kind).size(0) - 1)  # the encoder and decoder may differ in depth
        return attention_figure(result, kind, layer, head, mode, _)

    def fill(self, result, values: dict) -> dict:
        path = downloads.write(self.ctx.downloads, "attention", downloads.attention_payload(result.maps))
        return {self.plot: self.figure(result, *(values[c] for c in self.controls), texts(values)),
                self.download: gr.update(value=str(path), visible=True)}

    def on_pair(self, translator, pair: str, values: dict) -> dict:
        _ = texts(values)
        heads = [(_("average"), "average")] + [(label, str(h)) for label, h in head_choices(translator)]
        return {self.layer: gr.update(choices=layer_choices(translator), value=0),
                self.head: gr.update(choices=heads, value="average")}

    def focus(self, result, values: dict, where: dict[str, str]) -> dict:
        """A glance box: its kind of attention and its layer, mean of heads, as the box draws it."""
        kind, layer = where.get("kind", values[self.kind]), int(where.get("layer", values[self.layer]))
        return {self.kind: kind, self.layer: layer, self.head: "average", self.mode: "single",
                self.plot: self.figure(result, kind, layer, "average", "single", texts(values))}

    @to_page
    def redraw(self, result, kind, layer, head, mode, request: gr.Request = None) -> dict:
        return {self.plot: self.figure(need(result), kind, layer, head, mode, texts(request=request))}

    def wire(self, result: gr.State) -> None:
        for control in self.controls:
            control.change(self.redraw, [result] + self.controls, self.plot, api_visibility="private")
