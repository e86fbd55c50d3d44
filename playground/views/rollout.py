"""Attention rollout for the encoder and the decoder's self-attention, beside the raw last layer; JSON export."""
from __future__ import annotations

import gradio as gr

from playground import downloads
from playground.figures.maps import axis_tokens
from transformer.interpret import mechanics

from playground.view import View, texts
from playground.figures import rollout as figures
from playground.i18n import ENGLISH, Texts, _l


def rollout_maps(result) -> dict[str, tuple]:
    """Per self-attention kind: (last layer averaged over heads, rollout, tokens)."""
    out = {}
    for kind in ("encoder", "decoder"):
        maps = getattr(result.maps, kind)  # (L, H, T, T)
        out[kind] = (maps[-1].mean(0), mechanics.rollout(maps), axis_tokens(result.maps, kind)[0])
    return out


def rollout_figure(rolled: dict[str, tuple], _: Texts = ENGLISH):
    panels = []
    for kind, (last, rollout, tokens) in rolled.items():
        name = _("encoder") if kind == "encoder" else _("decoder")
        panels.append((_("{kind}: last layer, mean of heads", kind=name), last, tokens))
        panels.append((_("{kind}: rollout through all layers", kind=name), rollout, tokens))
    return figures.rollout_figure(panels, _("Attention rollout (Abnar & Zuidema 2020) beside the raw last layer"), _)


class RolloutView(View):
    def build(self) -> None:
        self.plot = gr.Plot(label=_l("Rollout"), elem_id="rollout-plot")
        self.download = gr.DownloadButton(_l("Download the rollout (JSON)"), visible=False)
        self.outputs = [self.plot, self.download]

    def fill(self, result, values: dict) -> dict:
        rolled = rollout_maps(result)
        path = downloads.write(self.ctx.downloads, "attention-rollout", downloads.rollout_payload(rolled))
        return {self.plot: rollout_figure(rolled, texts(values)), self.download: gr.update(value=str(path), visible=True)}
