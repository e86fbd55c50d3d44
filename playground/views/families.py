"""The three families: the encoder's bidirectional mask, the decoder's causal mask and cross-attention, as applied."""
from __future__ import annotations

import gradio as gr

from playground.figures.maps import families_figure

from playground.view import View
from playground.i18n import _l


class FamiliesView(View):
    figures = {"plot": families_figure}

    def build(self) -> None:
        self.plot = gr.Plot(label=_l("Masks"), elem_id="families-plot")
        self.outputs = [self.plot]
