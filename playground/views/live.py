"""Train a tiny one: a toy task learned live, with the loss, the schedule and the probe's attention redrawn."""
from __future__ import annotations

import gradio as gr

from transformer.model import Transformer, count_parameters
from transformer.training import live, toy
from playground.figures import maps
from playground.figures.live import toy_curves
from transformer.errors import InputError

from playground.view import View, to_page
from playground.explanations import EXPLAIN, explained
from playground.i18n import ENGLISH, N_, Texts, _l


TASK_LABELS = {"copy": N_("copy"), "reverse": N_("reverse"), "sort": N_("sort"), "swap halves": N_("swap halves")}
PAUSE_S = 0.002  # after every training step: a class's translations get the interpreter (about 10 % longer runs)


class LiveView(View):
    def introduction(self, _: Texts = ENGLISH) -> str:
        parameters = count_parameters(Transformer(live.ToySettings().model_config()))
        return explained(EXPLAIN["live"], _=_, parameters=_.number(parameters, 0))

    def build(self) -> None:
        self.trainer = ToyTrainer()  # one visitor's: the view is built for each visitor who opens it

    def wire(self, result: gr.State) -> None:
        self.trainer.wire()


class ToyTrainer:
    """One visitor's trainer: the toy's settings, Train and Stop, the loss and the probe's attention, and a sequence
    to try on the model trained so far."""

    def __init__(self):
        defaults = live.ToySettings()
        with gr.Row():
            self.task = gr.Radio([(_l(TASK_LABELS.get(task, task)), task) for task in toy.TASKS], value=defaults.task,
                                 label=_l("task"))
            self.schedule = gr.Radio([(_l("Noam decay"), "Noam decay"), (_l("held peak"), "held peak")],
                                     label=_l("after the warm-up"),
                                     value="held peak" if defaults.hold_peak else "Noam decay")
        with gr.Row():
            self.d_model = gr.Slider(16, 128, value=defaults.d_model, step=16, label=_l("d_model"))
            self.n_heads = gr.Slider(1, 8, value=defaults.n_heads, step=1, label=_l("heads"))
            self.n_layers = gr.Slider(1, 3, value=defaults.n_layers, step=1, label=_l("layers (each side)"))
            self.warmup = gr.Slider(10, 2000, value=defaults.warmup, step=10, label=_l("warm-up steps"))
        with gr.Row():
            self.peak_lr = gr.Number(defaults.peak_lr, label=_l("peak learning rate"))
            self.steps = gr.Slider(10, 3000, value=defaults.steps, step=10, label=_l("steps"))
            self.seed = gr.Number(defaults.seed, precision=0, label=_l("seed"))
        with gr.Row():
            self.train = gr.Button(_l("Train"), variant="primary", elem_id="toy-train")
            self.stop = gr.Button(_l("Stop"), elem_id="toy-stop")
        self.status = gr.Markdown(elem_id="toy-status")
        self.curves = gr.Plot()
        with gr.Row():
            self.cross = gr.Plot()
            self.self_attention = gr.Plot()
        with gr.Row():
            self.try_text = gr.Textbox(label=_l("try a sequence (letters)"), value="C A F E B", scale=3)
            self.try_go = gr.Button(_l("Run the trained model"))
        self.try_out = gr.Markdown(elem_id="toy-output")
        self.model = gr.State(None)  # per user: (settings, a copy of the model at the last report, its step)

    def settings(self, task, schedule, d_model, n_heads, n_layers, warmup, peak_lr, steps, seed) -> live.ToySettings:
        if peak_lr is None or seed is None:
            raise InputError(N_("fill in the peak learning rate and the seed"))
        return live.ToySettings(task=task, hold_peak=schedule == "held peak", d_model=int(d_model),
                                n_heads=int(n_heads), n_layers=int(n_layers), warmup=int(warmup),
                                peak_lr=float(peak_lr), steps=int(steps), seed=int(seed))

    def maps_of(self, p: live.Progress) -> dict:
        """The probe's maps, its tokens labelled as the toy's symbols (no dash: none continues another)."""
        cross, enc = p.maps.cross[-1].mean(0), p.maps.encoder[-1].mean(0)  # last layer, heads averaged
        src, tgt = p.maps.source_tokens, p.maps.target_tokens
        return {self.cross: maps.attention_heatmap(cross, tgt, src, "cross-attention on the probe (last layer)",
                                                    symbols=True),
                self.self_attention: maps.attention_heatmap(enc, src, src, "encoder self-attention on the probe "
                                                            "(last layer)", symbols=True)}

    @to_page
    def run(self, *values):
        """Streams progress (a generator); the model so far is kept after every report, so Stop leaves it usable."""
        s = self.settings(*values)
        for p in live.train_toy(s, pause_s=PAUSE_S):
            words = "finished" if p.done else "training"
            status = (f"**{words}**: step {p.step} of {s.steps}; held-out exact match {p.accuracy:.0%}; "
                      f"probe {toy.spell(p.probe)} → {toy.spell(p.output) or '(nothing)'}")
            yield {self.status: status, self.curves: toy_curves(p.losses, p.rates),
                   self.model: (s, p.model, p.step)} | self.maps_of(p)

    @staticmethod
    def stopped(status: str) -> str:
        """The last report, now saying that training stopped there; the model of that report stays usable."""
        return (status or "").replace("**training**", "**stopped**", 1) or "Nothing was training."

    @to_page
    def try_sequence(self, state, text: str) -> dict:
        if state is None:
            raise InputError(N_("press Train first"))
        s, model, step = state
        seq = toy.parse(text or "", s.n_symbols)
        if len(seq) > s.max_len:
            raise InputError(N_("use at most {n} symbols"), n=s.max_len)
        output, maps = live.look(model, s.task, seq)
        p = live.Progress(0, [], [], 0.0, seq, output, maps, model)
        expected = toy.spell(toy.target_of(s.task, seq))
        return {self.try_out: f"{toy.spell(seq)} → **{toy.spell(output) or '(nothing)'}** (expected {expected}; "
                              f"the model after step {step})"} | self.maps_of(p)

    def wire(self) -> None:
        inputs = [self.task, self.schedule, self.d_model, self.n_heads, self.n_layers, self.warmup, self.peak_lr,
                  self.steps, self.seed]
        outputs = [self.status, self.curves, self.model, self.cross, self.self_attention]
        training = self.train.click(self.run, inputs, outputs, concurrency_limit=1, concurrency_id="toy-train",
                                    api_visibility="private")  # one training per server; others queue
        self.stop.click(self.stopped, self.status, self.status, cancels=[training], api_visibility="private")
        self.try_go.click(self.try_sequence, [self.model, self.try_text], [self.try_out, self.cross,
                                                                           self.self_attention],
                          api_visibility="private")
