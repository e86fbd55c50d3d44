"""Head ablation: switch heads off through hooks, re-translate, and see which tokens changed."""
from __future__ import annotations

import gradio as gr

from transformer.errors import InputError
from transformer.interpret import analyses
from transformer.interpret.capture import parse_head
from transformer.model import KINDS

from playground.pieces import KIND_BUTTONS

from playground.view import View, texts, to_page
from .common import need, token_diff
from playground.i18n import ENGLISH, N_, Texts, _l


def every_head(translator, _: Texts = ENGLISH) -> list[tuple[str, str]]:
    """(label, name) of every head: shown counted from 1 in the language of `_`, the name as the API takes it
    ("cross:0:2")."""
    blocks = translator.model.attention_blocks()
    return [(_("{kind}, layer {layer}, head {head}", kind=_(KIND_BUTTONS[kind]), layer=i + 1, head=h + 1),
             f"{kind}:{i}:{h}")
            for kind in KINDS for i in range(len(blocks[kind])) for h in range(translator.cfg.n_heads)]


class AblationView(View):
    def build(self) -> None:
        with gr.Row(equal_height=False):  # the grid of heads beside its button: a row per layer, a column per head
            self.heads = gr.CheckboxGroup(
                [], label=_l("Heads to switch off: a row per kind and layer, a column per head"),
                elem_id="ablation-heads", scale=5)
            self.button = gr.Button(_l("Translate without these heads"), elem_id="ablate-button", scale=1,
                                    min_width=160)
        self.diff = gr.HTML(elem_id="ablation")
        self.outputs = [self.heads, self.diff]
        self.pair_outputs = [self.heads]

    def fill(self, result, values: dict) -> dict:
        return {self.heads: gr.update(value=[]), self.diff: ""}  # a new sentence starts with every head on

    def on_pair(self, translator, pair: str, values: dict) -> dict:
        return {self.heads: gr.update(choices=every_head(translator, texts(values)), value=[],
                                      elem_classes=[f"heads-{translator.cfg.n_heads}"])}  # the grid's columns

    @to_page
    def run(self, result, heads, request: gr.Request = None) -> dict:
        result, _ = need(result), texts(request=request)
        if not heads:
            raise InputError(N_("tick at least one head to switch off"))
        off = [parse_head(h) for h in heads]
        after = analyses.ablated(self.ctx.translator(result.pair), result.text, result.options, off)
        return {self.diff: token_diff(result.translation.target_tokens, after.target_tokens, _("with every head"),
                                      _("with the chosen heads off"), _=_)}

    def wire(self, result: gr.State) -> None:
        self.button.click(self.run, [result, self.heads], self.diff, api_visibility="private")
