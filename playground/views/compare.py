"""Compare models: the same sentence through two models, both translations with a token diff and both attention
maps (with their difference where the tokens allow), every number read by hooks."""
from __future__ import annotations

import gradio as gr

from playground import figures
from transformer.errors import InputError
from transformer.training.timeline import snapshots

from .common import Context, View, friendly, kind_radio, layer_choices, need, token_diff


def model_choices(ctx: Context, pair: str) -> list[tuple[str, str]]:
    """(label, spec) of every model the current one can be compared with: the other loaded checkpoints, its int8
    copy (on the CPU), its training snapshots."""
    translator = ctx.translator(pair)
    out = [(ctx.label(p), f"pair:{p}") for p in ctx.pairs if p != pair]
    if translator.device.type == "cpu" and translator.precision == "fp32":
        out.append((f"{ctx.label(pair)} in int8", f"int8:{pair}"))
    out += [(f"{ctx.label(pair)} after epoch {e}", f"epoch:{pair}:{e}") for e in snapshots(translator)]
    return out


class CompareView(View):
    def build(self) -> None:
        with gr.Row():
            self.other = gr.Dropdown([], label="Compare with", elem_id="compare-other",
                                     allow_custom_value=True)  # checked here: choices follow the translation
            self.kind = kind_radio("cross")
            self.layer = gr.Dropdown([0], value=0, label="Layer")
        self.diff = gr.HTML(elem_id="compare-diff")
        self.plot = gr.Plot(label="Attention of both models", elem_id="compare-plot")
        self.controls = [self.other, self.kind, self.layer]
        self.outputs = [self.diff, self.plot]
        self.pair_outputs = [self.other, self.layer]

    def draw(self, result, spec: str, kind: str, layer) -> dict:
        if not spec:
            raise InputError("only one model is loaded, and it keeps no snapshots: nothing to compare with")
        first = self.ctx.translator(result.pair)
        label = dict((s, name) for name, s in model_choices(self.ctx, result.pair)).get(spec, spec)

        def make():
            return figures.compare(result, figures.other_model(self.ctx.translators, spec), label)

        cmp = self.ctx.drawn_views.get(("compare", result.key, spec), make)
        name = self.ctx.label(result.pair) + (" (int8)" if first.precision == "int8" else "")
        return {self.diff: token_diff(cmp.first.target_tokens, cmp.second.target_tokens, name, label),
                self.plot: figures.comparison_figure(cmp, kind, int(layer or 0), name)}

    def fill(self, result, values: dict) -> dict:
        """The translation against the chosen model, or the first one this translation's pair can be compared with
        (the choices follow the translation's pair, which may not be the pair chosen since)."""
        choices = model_choices(self.ctx, result.pair)
        specs = [s for _, s in choices]
        spec = values[self.other] if values[self.other] in specs else (specs[0] if specs else None)
        return (self.draw(result, spec, values[self.kind], values[self.layer])
                | {self.other: gr.update(choices=choices, value=spec)})

    def on_pair(self, translator, pair: str, values: dict) -> dict:
        choices = model_choices(self.ctx, pair)
        return {self.other: gr.update(choices=choices, value=choices[0][1] if choices else None),
                self.layer: gr.update(choices=layer_choices(translator), value=0)}

    @friendly
    def redraw(self, result, spec, kind, layer) -> dict:
        return self.draw(need(result), spec, kind, layer)

    def wire(self, result: gr.State) -> None:
        for control in self.controls:
            control.input(self.redraw, [result] + self.controls, [self.diff, self.plot], api_visibility="private")
