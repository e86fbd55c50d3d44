"""Learning rate: Noam curves to compare, the schedule the checkpoint really used, and its training curves."""
from __future__ import annotations

import gradio as gr

from transformer.config import TrainConfig
from transformer.training.schedule import cooldown, noam_lr

from playground.view import View, texts, to_page
from playground.explanations import EXPLAIN, explained
from playground.figures.schedule import noam_curves, training_curves
from playground.i18n import ENGLISH, Texts, _l

PAPER_BASE = (512, 4000)  # d_model and warm-up of the paper's base model


def schedule_text(metrics) -> str:
    """Each stage's schedule in words, from the recipe it recorded: warm-up, peak, hold or decay, cool-down."""
    d_model = metrics.model_config.get("d_model")
    if not d_model:
        return "not recorded in this checkpoint"
    parts = []
    for stage, start, end in metrics.stage_epochs():
        c = TrainConfig.from_dict(stage.train_config)
        peak = noam_lr(c.warmup, d_model, c.warmup, c.lr_scale)
        epochs = f"epoch {start}" if start == end else f"epochs {start}-{end}"
        rates = [r["lr"] for r in metrics.epochs if start <= r["epoch"] <= end and r.get("lr") is not None]
        fall, share = c.cooldown_epochs, 1.0
        if c.hold_peak and c.epochs - 2 < fall and len(rates) > 2 and rates[1] > 0.98 * peak:
            # still at its peak after two epochs although the recipe's fall had begun: a budget's count, set
            # there, left fewer epochs than the fall asked for (before fit_budget fitted it), so it began lower
            fall, share = c.epochs - 2, (c.epochs - 2) / fall
        # already falling at the first epoch's end, and not as this recipe says: it fell for a longer run until a
        # budget's count, set after the second epoch, made the rest of the fall steeper (fit_budget)
        steeper = (c.hold_peak and fall and len(rates) > 2 and rates[0] < 0.98 * peak
                   and abs(rates[0] - peak * cooldown(1.0, c.epochs, fall)) > 0.02 * peak)
        words = (f"{epochs}: a warm-up over {c.warmup:,} steps to {peak:.2g}, "
                 + ("held" if c.hold_peak else "then decaying as 1/sqrt(step)")
                 + (", then falling linearly to 0, more steeply after the second epoch (where a budget set the count)"
                    if steeper else
                    ", then falling linearly " + (f"from {share:.0%} of it " if share < 1 else "") + "to 0 over the last "
                    + (f"{fall:g} epochs" if fall > 1 else "epoch")
                    if fall else ""))
        # the rate back up after it had fallen below half its peak so far: the run went on with a new cycle
        cycles = 1 + sum(b > 1.5 * a and a < 0.5 * max(rates[: i + 1]) for i, (a, b) in enumerate(zip(rates, rates[1:])))
        parts.append(words + (f", in {cycles} cycles (the rate back at its peak each time the run went on)"
                              if cycles > 1 else ""))
    return "; ".join(parts)


class ScheduleView(View):
    explained_below = True  # the curve first, then one sentence true of it

    def introduction(self, _: Texts = ENGLISH) -> str:
        return ""  # names the checkpoint's own schedule: filled in per pair

    def build(self) -> None:
        with gr.Row():
            # wide enough for their bounds ("16000") in presentation mode's larger text: the row wraps before
            self.d_model = gr.Slider(64, 1024, value=512, step=32, label=_l("d_model"), min_width=300, scale=2)
            self.warmup = gr.Slider(100, 16000, value=4000, step=100, label=_l("warmup steps"), min_width=300, scale=2)
            with gr.Column(scale=1, min_width=160):
                self.add = gr.Button(_l("Add this curve"))
                self.clear = gr.Button(_l("Clear"))
        self.noam = gr.Plot()
        self.training = gr.Plot()
        self.curves = gr.State([PAPER_BASE])  # per user: the (d_model, warmup) curves drawn
        self.pair_inputs = [self.curves]
        self.pair_outputs = [self.about, self.noam, self.training]

    def noam_figure(self, pair: str, curves: list, _):
        return noam_curves([tuple(c) for c in curves], (_("this checkpoint ({pair})", pair=pair),
                                                        self.ctx.translator(pair).metrics), _=_)

    def explanation(self, translator, _: Texts = ENGLISH) -> str:
        return explained(EXPLAIN["schedule"], _=_, schedule=schedule_text(translator.metrics))  # its stages: English

    def on_pair(self, translator, pair: str, values: dict) -> dict:
        _ = texts(values)
        return {self.noam: self.noam_figure(pair, values[self.curves], _),
                self.training: training_curves(translator.metrics, _=_)}

    @to_page
    def add_curve(self, pair, curves, d_model, warmup, request: gr.Request = None) -> dict:
        new = (int(d_model), int(warmup))
        curves = [tuple(c) for c in curves or []]
        if new not in curves:
            curves.append(new)
        return {self.curves: curves, self.noam: self.noam_figure(pair, curves, texts(request=request))}

    @to_page
    def clear_curves(self, pair, request: gr.Request = None) -> dict:
        return {self.curves: [], self.noam: self.noam_figure(pair, [], texts(request=request))}

    def wire(self, result: gr.State) -> None:
        self.add.click(self.add_curve, [self.panel.pair, self.curves, self.d_model, self.warmup], [self.curves, self.noam],
                       api_visibility="private")
        self.clear.click(self.clear_curves, self.panel.pair, [self.curves, self.noam], api_visibility="private")
