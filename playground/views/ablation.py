"""Head ablation: switch heads off through hooks, re-translate, and see which tokens changed."""
from __future__ import annotations

import gradio as gr

from playground import figures
from transformer.errors import InputError

from .common import View, friendly, need, token_diff


class AblationView(View):
    def build(self) -> None:
        self.heads = gr.CheckboxGroup([], label="Heads to switch off (kind, layer L, head H)", elem_id="ablation-heads")
        self.button = gr.Button("Translate without these heads", elem_id="ablate-button")
        self.diff = gr.HTML(elem_id="ablation")
        self.outputs = [self.heads, self.diff]
        self.pair_outputs = [self.heads]

    def fill(self, result, values: dict) -> dict:
        return {self.heads: gr.update(value=[]), self.diff: ""}  # a new sentence starts with every head on

    def on_pair(self, translator, pair: str, values: dict) -> dict:
        return {self.heads: gr.update(choices=figures.head_choices(translator), value=[])}

    @friendly
    def run(self, result, heads) -> dict:
        result = need(result)
        if not heads:
            raise InputError("tick at least one head to switch off")
        after = figures.ablate(self.ctx.translator(result.pair), result, heads)
        return {self.diff: token_diff(result.translation.target_tokens, after.target_tokens, "with every head",
                                      "with the chosen heads off")}

    def wire(self, result: gr.State) -> None:
        self.button.click(self.run, [result, self.heads], self.diff, api_visibility="private")
