"""Attention rollout for the encoder and the decoder's self-attention, beside the raw last layer; JSON export."""
from __future__ import annotations

import gradio as gr

from playground import downloads
from playground.figures.maps import axis_tokens
from transformer.interpret import mechanics

from playground.view import View
from playground.figures import rollout as figures
from playground.i18n import _l


def rollout_maps(result) -> dict[str, tuple]:
    """Per self-attention kind: (last layer averaged over heads, rollout, tokens)."""
    out = {}
    for kind in ("encoder", "decoder"):
        maps = getattr(result.maps, kind)  # (L, H, T, T)
        out[kind] = (maps[-1].mean(0), mechanics.rollout(maps), axis_tokens(result.maps, kind)[0])
    return out


def rollout_figure(rolled: dict[str, tuple]):
    panels = []
    for kind, (last, rollout, tokens) in rolled.items():
        panels.append((f"{kind}: last layer, mean of heads", last, tokens))
        panels.append((f"{kind}: rollout through all layers", rollout, tokens))
    return figures.rollout_figure(panels, "Attention rollout (Abnar & Zuidema 2020) beside the raw last layer")


class RolloutView(View):
    def build(self) -> None:
        self.plot = gr.Plot(label=_l("Rollout"), elem_id="rollout-plot")
        self.download = gr.DownloadButton(_l("Download the rollout (JSON)"), visible=False)
        self.outputs = [self.plot, self.download]

    def fill(self, result, values: dict) -> dict:
        rolled = rollout_maps(result)
        path = downloads.write(self.ctx.downloads, "attention-rollout", downloads.rollout_payload(rolled))
        return {self.plot: rollout_figure(rolled), self.download: gr.update(value=str(path), visible=True)}
