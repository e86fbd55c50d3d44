"""The model at a glance: the page's first view. Figure 1 of the paper for this translation (glance.figure)."""
from __future__ import annotations

import gradio as gr

from playground import glance

from .common import EXPLAIN, OPEN_VIEW_JS, View, explained

# In the browser: a word of the translation shows its step (every step is in the page already); a box opens the
# view that explains it (its tab, then the inner tab).
GLANCE_JS = OPEN_VIEW_JS + """
if (!window.tpGlanceClicks) {  // one listener on the document: it outlives the picture's redraws and the tab's
    window.tpGlanceClicks = true;
    document.addEventListener('click', (event) => {
        const glance = event.target.closest('#glance');
        if (!glance) return;
        const word = event.target.closest('[data-step]');
        if (word) {
            glance.querySelectorAll('.at, [data-step]').forEach(e => e.classList.remove('on'));
            glance.querySelectorAll(`.at[data-at="${word.dataset.step}"]`).forEach(e => e.classList.add('on'));
            word.classList.add('on');
            return;
        }
        const box = event.target.closest('[data-open]');
        if (!box) return;
        const step = glance.querySelector('[data-step].on')?.dataset.step || 0;  // the step the picture shows
        window.tpOpenView(box.dataset.open, box.dataset.focus && `${box.dataset.focus}&step=${step}`);
    });
}
"""


class GlanceView(View):
    def __init__(self):
        with gr.Tab("At a glance", id="glance", elem_id="glance-tab") as self.tab:
            self.notice()
            self.picture = gr.HTML(elem_id="glance", js_on_load=GLANCE_JS)
            gr.Markdown(explained(EXPLAIN["glance"]), elem_classes="plain")  # under the picture: it fits the screen
        self.outputs = [self.picture]

    def fill(self, result, values: dict) -> dict:
        return {self.picture: glance.figure(result)}
