"""Model card: config, parameters per component, test scores, device and how the checkpoint was trained."""
from __future__ import annotations

import gradio as gr

from transformer import playground

from .common import View


class CardView(View):
    def __init__(self):
        with gr.Tab("Model card"):
            self.notice()
            self.card = gr.Markdown()
        self.pair_outputs = [self.card]

    def on_pair(self, translator, pair: str, values: dict) -> dict:
        return {self.card: playground.model_card(translator, pair)}
