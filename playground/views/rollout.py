"""Attention rollout for the encoder and the decoder's self-attention, beside the raw last layer; JSON export."""
from __future__ import annotations

import gradio as gr

from playground import downloads, figures

from .common import View


class RolloutView(View):
    def build(self) -> None:
        self.plot = gr.Plot(label="Rollout", elem_id="rollout-plot")
        self.download = gr.DownloadButton("Download the rollout (JSON)", visible=False)
        self.outputs = [self.plot, self.download]

    def fill(self, result, values: dict) -> dict:
        path = downloads.write(self.ctx.downloads, "attention-rollout", downloads.rollout_payload(figures.rollout_maps(result)))
        return {self.plot: figures.rollout_figure(result), self.download: gr.update(value=str(path), visible=True)}
