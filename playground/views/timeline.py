"""How it learned: the shipped model's translations after any epoch, its curves there, attention forming."""
from __future__ import annotations

import html

import gradio as gr

from playground.figures.timeline import attention_stages
from transformer.training import timeline
from transformer.errors import InputError
from playground.figures.maps import axis_tokens
from playground.pieces import KIND_NAMES, listed
from transformer.model import KINDS

from playground.view import View, texts, to_page
from playground.explanations import EXPLAIN, explained
from playground.figures.schedule import training_curves
from playground.i18n import ENGLISH, N_, Texts, _l


def translations_table(rows: list[timeline.EpochRow], epoch: int, asked: int | None = None) -> str:
    """The curated examples, their translation after `epoch` and after the last epoch (escaped); `asked`: the epoch
    the slider is on when `epoch` is the nearest recorded one before it."""
    nearest = f" (the last recorded before {asked})" if asked not in (None, epoch) else ""
    head = f"<tr><th>English</th><th>after epoch {epoch}{nearest}</th><th>after the last epoch</th></tr>"
    body = "".join(f"<tr><td>{html.escape(r.source)}</td><td>{html.escape(r.at_epoch)}</td>"
                   f"<td>{html.escape(r.final)}</td></tr>" for r in rows)
    return f"<table class='timeline'>{head}{body}</table>"


def timeline_values(translator, _: Texts = ENGLISH) -> dict:
    """The numbers of the view's opening text, read from the checkpoint."""
    recorded = timeline.recorded_epochs(translator.metrics)
    snapshots = timeline.snapshots(translator)
    return dict(examples=len(translator.metrics.timeline_sources), recorded=listed(recorded),
                snapshots=_.plural("epoch {epochs}", "epochs {epochs}", len(snapshots), epochs=listed(snapshots))
                if snapshots else _("no epoch"))


class TimelineView(View):
    def introduction(self, _: Texts = ENGLISH) -> str:
        return ""  # its numbers are the checkpoint's: filled in per pair

    def build(self) -> None:
        self.epoch = gr.Slider(1, 2, value=1, step=1, label=_l("after epoch"))
        self.table = gr.HTML(elem_id="timeline-table")
        self.curves = gr.Plot()
        with gr.Row():
            self.example = gr.Dropdown([], label=_l("example"), scale=3)
            self.kind = gr.Radio([(_l(KIND_NAMES[kind]), kind) for kind in KINDS], value="cross",
                                 label=_l("attention (last layer, heads averaged)"))
        self.forming = gr.Plot()
        self.pair_outputs = [self.about, self.epoch, self.example, self.table, self.curves, self.forming]

    def explanation(self, translator, _: Texts = ENGLISH) -> str:
        if not timeline.recorded_epochs(translator.metrics):
            return ""
        return explained(EXPLAIN["timeline"], _=_, **timeline_values(translator, _))

    def on_pair(self, translator, pair: str, values: dict) -> dict:
        epochs, _ = timeline.recorded_epochs(translator.metrics), texts(values)
        sources = translator.metrics.timeline_sources if epochs else []
        out = {self.epoch: gr.update(minimum=1, maximum=max(epochs or [2]), value=1, interactive=bool(epochs)),
               self.example: gr.update(choices=sources, value=sources[0] if sources else None)}
        if not epochs:
            note = "<p>" + _("This checkpoint was trained without recording a timeline.") + "</p>"
            return out | {self.table: note, self.curves: training_curves(translator.metrics, _=_), self.forming: None}
        return (out | self.at_epoch(translator, 1, _)
                | {self.forming: self.forming_figure(translator, sources[0], "cross", _)})

    def at_epoch(self, translator, epoch: int, _) -> dict:
        shown = timeline.nearest_recorded(translator.metrics, epoch)
        return {self.table: translations_table(timeline.translations_at(translator.metrics, shown), shown, epoch),
                self.curves: training_curves(translator.metrics, mark_epoch=epoch, _=_)}

    def forming_figure(self, translator, text: str, kind: str, _):
        stages = timeline.attention_over_epochs(translator, text)
        queries, keys = axis_tokens(stages[-1][1], kind)
        layers = [(label, getattr(m, kind)[-1].mean(dim=0)) for label, m in stages]  # (q, k): last layer, head mean
        return attention_stages(layers, queries, keys, _("{kind} forming during training (last layer)",
                                                         kind=_(KIND_NAMES[kind])), _)

    @to_page
    def choose_epoch(self, pair: str, epoch, request: gr.Request = None) -> dict:
        return self.at_epoch(self.ctx.translator(pair), int(epoch), texts(request=request))

    @to_page
    def choose_example(self, pair: str, text: str, kind: str, request: gr.Request = None) -> dict:
        if not text:
            raise InputError(N_("choose an example"))
        if kind not in KINDS:
            raise InputError(f"choose one of: {', '.join(KIND_NAMES.values())}")
        return {self.forming: self.forming_figure(self.ctx.translator(pair), text, kind, texts(request=request))}

    def wire(self, result: gr.State) -> None:
        self.epoch.change(self.choose_epoch, [self.panel.pair, self.epoch], [self.table, self.curves],
                           api_visibility="private")
        for trigger in (self.example.input, self.kind.input):
            trigger(self.choose_example, [self.panel.pair, self.example, self.kind], self.forming, api_visibility="private")
