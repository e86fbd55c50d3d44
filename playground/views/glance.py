"""The model at a glance: the page's first view. Figure 1 of the paper for this translation (glance.figure)."""
from __future__ import annotations

import gradio as gr

from playground.figures import glance

from playground.view import LINKED, View


class GlanceView(View):
    built_on_opening = False  # the first tab: drawn with every translation, on the page
    explained_below = True  # the picture first: it fits the first screen
    figures = {"picture": glance.figure}

    def build(self) -> None:
        self.picture = gr.HTML(elem_id="glance", js_on_load=LINKED)  # its pieces and boxes: tp.linked (page.js)
        self.outputs, self.links = [self.picture], [self.picture]
