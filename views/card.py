"""Model card: config, parameters per component, test scores, device and how the checkpoint was trained."""
from __future__ import annotations

import gradio as gr

from transformer import playground


class CardView:
    def __init__(self):
        with gr.Tab("Model card"):
            self.card = gr.Markdown()
        self.controls: list = []
        self.outputs: list = []

    def on_pair(self, translator, pair: str) -> dict:
        return {self.card: playground.model_card(translator, pair)}
