"""bertviz's head view and model view of the encoder-decoder, drawn from local copies of its scripts."""
from __future__ import annotations

import gradio as gr

from playground.bertviz_view import bertviz_document, iframe

from playground.view import View, to_page
from playground.i18n import _l


# The frame as tall as the document inside it says it is (bertviz_view.TELL_HEIGHT): the whole view, no inner scroll
FIT_FRAME = """
window.addEventListener('message', (event) => {
    const frame = [...element.querySelectorAll('iframe.bertviz-frame')].find(f => event.source === f.contentWindow);
    if (frame && Number.isFinite(event.data?.bertvizHeight))
        frame.style.height = Math.min(5000, event.data.bertvizHeight + 8) + 'px';
});
"""


class BertvizView(View):
    def build(self) -> None:
        self.view = gr.Radio([(_l("Head view"), "head"), (_l("Model view"), "model")], value="head", label=_l("View"))
        self.html = gr.HTML(elem_id="bertviz", js_on_load=FIT_FRAME)
        self.controls = [self.view]
        self.outputs = [self.html]

    def document(self, result, view: str) -> str:
        """One page of all three kinds; two when the encoder and the decoder have different depths (bertviz has one
        list of layers), each under its heading."""
        maps, scripts = result.maps, self.ctx.bertviz_scripts
        encoder, decoder = maps.encoder.size(0), maps.decoder.size(0)
        if encoder == decoder:
            return iframe(bertviz_document(maps, view, scripts))
        return (f"<p><b>The encoder</b> ({encoder} layers)</p>"
                + iframe(bertviz_document(maps, view, scripts, ("encoder",)))
                + f"<p><b>The decoder</b> ({decoder} layer{'s' if decoder > 1 else ''}): its self-attention and "
                "cross-attention</p>" + iframe(bertviz_document(maps, view, scripts, ("decoder", "cross"))))

    def fill(self, result, values: dict) -> dict:
        return {self.html: self.document(result, values[self.view])}

    @to_page
    def redraw(self, result, view) -> dict:
        return {self.html: "" if result is None else self.document(result, view)}

    def wire(self, result: gr.State) -> None:
        self.view.change(self.redraw, [result, self.view], self.html, api_visibility="private")
