"""Compare models: the same sentence through two models, both translations with a token diff and both attention
maps (with their difference where the tokens allow), every number read by hooks."""
from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from playground.figures.compare import side_by_side
from playground.figures.maps import axis_tokens
from playground.pieces import KIND_NAMES
from transformer.errors import InputError
from transformer.interpret.capture import AttentionMaps
from transformer.training.timeline import snapshot, snapshots
from transformer.translator import Translation, Translator, quantize_int8
from transformer.interpret import analyses

from playground.context import Context
from playground.view import View, texts, to_page
from .common import cards, first_translator, kind_radio, layer_choices, need, token_diff
from playground.i18n import ENGLISH, N_, Texts, _l


def model_choices(ctx: Context, pair: str) -> list[tuple[str, str]]:
    """(label, spec) of every model the current one can be compared with: the other loaded checkpoints, its int8
    copy (on the CPU), its training snapshots."""
    translator = ctx.translator(pair)
    out = [(ctx.label(p), f"pair:{p}") for p in ctx.pairs if p != pair]
    if translator.device.type == "cpu" and translator.precision == "fp32":
        out.append((f"{ctx.label(pair)} in int8", f"int8:{pair}"))
    out += [(f"{ctx.label(pair)} after epoch {e}", f"epoch:{pair}:{e}") for e in snapshots(translator)]
    return out


def opening_choice(choices: list[tuple[str, str]], differs=None) -> str | None:
    """What Compare opens on: the same pair earlier in its training (from epoch 4 where it keeps one: the first
    epochs say little; else its earliest), else its int8 copy, else another pair; with `differs` (spec -> whether
    that model translates the sentence otherwise), the first of those (at most three tried) whose translation
    differs, so that the view opens on something to see."""
    specs = [s for _, s in choices]
    epochs = [s for s in specs if s.startswith("epoch:")]
    early = [s for s in epochs if int(s.rsplit(":", 1)[1]) >= 4] or epochs
    order = list(dict.fromkeys(early + [s for s in specs if s.startswith("int8:")] + specs))
    if differs is not None:
        return next((s for s in order[:3] if differs(s)), next(iter(order), None))
    return next(iter(order), None)


def language(pair: str) -> str:
    """The language a pair's checkpoint writes: "en-de" and "en-de-opus-mt" write "de"."""
    return pair.split("-")[1] if "-" in pair else pair


def int8_copy(translator: Translator) -> Translator:
    """The same checkpoint with int8 feed-forward layers and output projection (CPU)."""
    return Translator(quantize_int8(translator.model), translator.tokenizer, translator.metrics,
                      name=f"{translator.name} int8", precision="int8")


def other_model(ctx: Context, spec: str) -> Translator:
    """The model a "Compare with" choice names: "pair:KEY" another loaded checkpoint, "int8:KEY" that checkpoint in
    int8 (made once, kept in the models cache), "epoch:KEY:N" its training snapshot after epoch N."""
    kind, key, *rest = spec.split(":")
    try:
        base = ctx.translator(key)  # a loaded checkpoint, or a model this page brought
    except InputError:
        base = None
    if base is None or kind not in ("pair", "int8", "epoch"):
        raise InputError(N_("no model to compare with called {name}"), name=repr(spec))
    if kind == "int8":
        if base.device.type != "cpu":
            raise InputError("int8 runs on the CPU only")
        return ctx.caches.models.get(("int8", key), lambda: int8_copy(base))
    if kind == "epoch":
        return snapshot(base, int(rest[0]))
    return base


@dataclass
class Comparison:
    """The same sentence through two models: each translation, and each model's maps on its own translation."""

    first: Translation
    second: Translation
    first_maps: AttentionMaps
    second_maps: AttentionMaps
    second_name: str

    @property
    def same_tokens(self) -> bool:
        return (self.first_maps.source_tokens, self.first_maps.target_tokens) == (
            self.second_maps.source_tokens, self.second_maps.target_tokens)


def compare(result, other: Translator, name: str) -> Comparison:
    second = other.translate(result.text, result.options)
    return Comparison(result.translation, second, result.maps, analyses.attention(other, result.text, second), name)


def comparison_figure(cmp: Comparison, kind: str, layer: int, first_name: str, _: Texts = ENGLISH):
    """Both models' maps of one kind and layer (mean of heads), and their difference where both read the same
    tokens on both axes; else each map beside the other on its own tokens."""
    panels = []
    for name, maps in ((first_name, cmp.first_maps), (cmp.second_name, cmp.second_maps)):
        weights = getattr(maps, kind)  # (L, H, q, k)
        at = min(layer, weights.size(0) - 1)
        queries, keys = axis_tokens(maps, kind)
        panels.append((_("{name}, layer {n}", name=name, n=at + 1), weights[at].mean(dim=0), queries, keys))
    if cmp.same_tokens:
        panels.append((_("difference (first − second)"), panels[0][1] - panels[1][1], panels[0][2], panels[0][3]))
    title = (_("{kind}: mean of heads", kind=_(KIND_NAMES[kind])) if cmp.same_tokens else
             _("{kind}: mean of heads (different tokens: each map on its own)", kind=_(KIND_NAMES[kind])))
    return side_by_side(panels, title, difference=2 if cmp.same_tokens else None, _=_)


class CompareView(View):
    def build(self) -> None:
        with gr.Row():
            self.other = gr.Dropdown([], label=_l("Compare with"), elem_id="compare-other",
                                     allow_custom_value=True)  # checked here: choices follow the translation
            self.kind = kind_radio("cross")
            self.layer = gr.Dropdown(layer_choices(first_translator(self.ctx)), value=0, label=_l("Layer"))  # from 1
        self.diff = gr.HTML(elem_id="compare-diff")
        self.plot = gr.Plot(label=_l("Attention of both models"), elem_id="compare-plot")
        self.controls = [self.other, self.kind, self.layer]
        self.outputs = [self.diff, self.plot]
        self.pair_outputs = [self.other, self.layer]

    def draw(self, result, spec: str, kind: str, layer, _) -> dict:
        if not spec:
            raise InputError(N_("only one model is loaded, and it keeps no snapshots: nothing to compare with"))
        first = self.ctx.translator(result.pair)
        cmp = self.comparison(result, spec)
        label = cmp.second_name
        name = self.ctx.label(result.pair) + (" (int8)" if first.precision == "int8" else "")
        if spec.startswith("pair:") and language(spec.split(":")[1]) != language(result.pair):  # no word in common
            said = cards([(name, cmp.first.text), (label, cmp.second.text)])
            diff = said + "<p>" + _("Two languages: the translations side by side, each map on its own tokens.") + "</p>"
        else:
            diff = token_diff(cmp.first.target_tokens, cmp.second.target_tokens, name, label, _=_)
        return {self.diff: diff, self.plot: comparison_figure(cmp, kind, int(layer or 0), name, _)}

    def comparison(self, result, spec: str) -> Comparison:
        """The translation against the model `spec` names, made once per translation (Result.derived)."""
        label = dict((s, name) for name, s in model_choices(self.ctx, result.pair)).get(spec, spec)
        return result.derived(f"compare {spec}", lambda: compare(result, other_model(self.ctx, spec), label))

    def differs(self, result):
        """spec -> whether that model translates this sentence otherwise than the current one."""
        return lambda spec: self.comparison(result, spec).second.target_tokens != result.translation.target_tokens

    def fill(self, result, values: dict) -> dict:
        """The translation against the chosen model, or the first one this translation's pair can be compared with
        (the choices follow the translation's pair, which may not be the pair chosen since)."""
        choices = model_choices(self.ctx, result.pair)
        specs = [s for _, s in choices]
        spec = values[self.other] if values[self.other] in specs else opening_choice(choices, self.differs(result))
        return (self.draw(result, spec, values[self.kind], values[self.layer], texts(values))
                | {self.other: gr.update(choices=choices, value=spec)})

    def on_pair(self, translator, pair: str, values: dict) -> dict:
        choices = model_choices(self.ctx, pair)
        return {self.other: gr.update(choices=choices, value=opening_choice(choices)),
                self.layer: gr.update(choices=layer_choices(translator), value=0)}

    @to_page
    def redraw(self, result, spec, kind, layer, request: gr.Request = None) -> dict:
        return self.draw(need(result), spec, kind, layer, texts(request=request))

    def wire(self, result: gr.State) -> None:
        for control in self.controls:
            control.input(self.redraw, [result] + self.controls, [self.diff, self.plot], api_visibility="private")
