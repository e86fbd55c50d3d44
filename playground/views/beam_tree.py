"""Beam search as a tree: every step's ranked candidates, which lived, ended or were pruned, and the winning path."""
from __future__ import annotations

import gradio as gr


from playground.view import View, texts
from playground.figures.beam_tree import beam_tree
from playground.i18n import N_, _l


USED = {"greedy": N_("This translation used greedy decoding: choose **Beam search** under Decoding and translate to "
                     "see the search."),
        "sample": N_("This translation used random sampling: choose **Beam search** under Decoding and translate to "
                     "see the search.")}


class BeamTreeView(View):
    def build(self) -> None:  # no tab of its own: built inside the "Step by step" tab, below the steps it explains
        self.note = gr.Markdown(elem_classes="notice")
        self.plot = gr.Plot(label=_l("Search tree"), elem_id="beam-tree-plot")
        self.outputs = [self.note, self.plot]

    def fill(self, result, values: dict) -> dict:
        tree, _ = result.translation.beam_tree, texts(values)  # None unless the translation used beam search
        fig = None if tree is None else beam_tree(tree, self.ctx.translator(result.pair).tokenizer.pieces, _)
        note = "" if fig is not None else _(USED[result.options.strategy])
        return {self.note: note, self.plot: gr.update(value=fig, visible=fig is not None)}  # no empty box
