"""What the model used: the logit lens, five attributions beside attention, and a deletion test of which is
faithful; every number from hooks (and autograd) on the loaded checkpoint, computed when the tab is open."""
from __future__ import annotations

import html

import gradio as gr
import torch

from playground import downloads
from playground.figures.attributions import (LOW_SOURCE_SHARE, attribution_figure, continuing_own_words, explanation,
                                     output_tokens, source_share_figure)
from playground.pieces import METHOD_NAMES, labels, shown
from transformer.interpret.attribution import IG_STEPS
from transformer.training.timeline import lens_over_epochs, snapshots
from transformer.interpret import analyses

from playground.view import PartlyDrawn, View, shared, texts, to_page, log
from .common import need
from playground.figures import used as figures
from playground.i18n import ENGLISH, Texts, _l


def output_choices(result) -> list[tuple[str, int]]:
    """The output tokens a user may ask about."""
    tokens = output_tokens(result)
    return list(zip(labels(tokens, escaped=False), range(len(tokens))))  # a menu: written as text


def alternative_choices(translator, lens, step: int) -> list[tuple[str, int]]:
    """The step's other top-5 tokens by the model's own distribution (the lens's last layer), for the contrastive
    question; -1 asks no contrastive question."""
    log_probs = lens.log_probs[-1, step]  # (V,)
    best = [i for i in log_probs.topk(6).indices.tolist() if i != lens.chosen[step]][:5]
    piece = translator.tokenizer.id_to_piece
    return [("none", -1)] + [(f"{shown(piece(i))} (p = {float(log_probs[i].exp()):.2f})", i) for i in best]


def lens_figure(translator, result, lens, _: Texts = ENGLISH):
    ids, probs = lens.top()
    top = [translator.tokenizer.pieces(row) for row in ids.tolist()]
    return figures.lens_grid(lens.chosen_prob(), top, probs, lens.first_top1_layer(), output_tokens(result),
                             _("What each decoder layer would say (logit lens): its top-1 token and probability; "
                               "colour: its probability of the final token"), _)


def lens_over_training(translator, result) -> tuple[list[str], torch.Tensor] | None:
    """Per training snapshot (and the shipped model), per decoder layer: the share of this translation's steps whose
    top-1 is the final token; None for a checkpoint without snapshots."""
    if not snapshots(translator):
        return None
    stages = lens_over_epochs(translator, result.text, result.translation.text)
    shares = torch.stack([lens.chosen_rank().eq(0).float().mean(dim=1) for _, lens in stages])  # (stages, L)
    return [label for label, _ in stages], shares


def summary(expl, translator_piece) -> str:
    """The view's sentences: the token, the contrast, IG's completeness, the deletion verdict, the low-share tokens."""
    esc = html.escape
    tokens = [shown(t) for t in expl.labels["output_tokens"]]
    d, ig = expl.deletion, expl.integrated
    lines = [f"Output piece {expl.step + 1}, <b>{esc(tokens[expl.step])}</b>: p = {d.prob:.3f}."]
    if expl.alternative is not None:
        lines.append(f"Contrastive: the gradient rows explain log p({esc(tokens[expl.step])}) − "
                     f"log p({esc(shown(translator_piece(expl.alternative)))}); the other rows do not depend on the question.")
    if ig is None:
        names = " and ".join(METHOD_NAMES[m] for m in expl.unavailable)
        lines.append(esc(f"{names[:1].upper()}{names[1:]} need gradients, which this model's int8 layers do not "
                         "have: run the app without --int8 to see them."))
    else:
        relative = ig.completeness_error / max(abs(ig.gap), 1e-12)
        lines.append(f"Integrated gradients ({ig.steps} steps): the attributions add up to {ig.total:.3f}; they "
                     f"should add up to {ig.gap:.3f}, how far the model's score moves from the empty baseline to "
                     f"this sentence (completeness). Off by {ig.completeness_error:.3f} ({relative:.0%})"
                     + ("; more steps bring them closer." if relative > 0.05 else ": close enough to read them."))
    lines.append(deletion_verdict(d))
    low = continuing_own_words(expl)
    marked = ", ".join(f"{t + 1} {esc(tokens[t])}" for t in low) or "none"
    lines.append(f"Continuing its own words (ALTI+ source share under {LOW_SOURCE_SHARE:.0%}): {marked}.")
    return "".join(f"<p>{line}</p>" for line in lines)


def deletion_verdict(d) -> str:
    best = d.most_faithful()
    k = d.ks[-1]
    top = sum(d.drops[best])
    tied = [METHOD_NAMES[m] for m in d.drops if abs(sum(d.drops[m]) - top) < 1e-6]
    if top <= sum(d.random):
        return (f"Deletion test: no method's top tokens matter more than random ones for this token (hiding {k} "
                f"random source tokens lowers p by {d.random[-1]:.3f} on average).")
    who = tied[0] if len(tied) == 1 else " and ".join([", ".join(tied[:-1]), tied[-1]]) + " (the same top tokens)"
    return (f"Deletion test: the most faithful here is <b>{html.escape(who)}</b>: hiding its top {k} source tokens "
            f"lowers p by {d.drops[best][-1]:.3f}, against {d.random[-1]:.3f} for {k} random ones "
            f"(mean of {d.draws} draws).")


def deletion_table(d) -> str:
    best = d.most_faithful()
    head = "".join(f"<th>top {k} hidden</th>" for k in d.ks)
    rows = [(METHOD_NAMES[m], v, m == best) for m, v in d.drops.items()]
    rows.append((f"as many random tokens (mean of {d.draws} draws)", d.random, False))
    body = "".join(
        ('<tr class="best">' if mark else "<tr>") + f"<td>{html.escape(name)}</td>"
        + "".join(f"<td>{-v:+.3f}</td>" for v in drops) + "</tr>" for name, drops, mark in rows)
    return (f'<table class="deletion"><caption>Change in p = {d.prob:.3f} when each method\'s top source tokens are '
            f"hidden from every cross-attention</caption><thead><tr><th>method</th>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>")


class UsedView(View):
    def build(self) -> None:
        with gr.Row():
            self.step = gr.Dropdown([], label=_l("Output token"), elem_id="used-step")
            self.alternative = gr.Dropdown([("none", -1)], value=-1, label=_l("…and not this one? (contrastive)"),
                                           elem_id="used-alternative")
            self.ig_steps = gr.Slider(IG_STEPS[0], IG_STEPS[1], value=64, step=1, elem_id="used-ig-steps",
                                      label=_l("Integrated-gradient steps (more: slower, closer to completeness)"))
        self.summary = gr.HTML(elem_id="used-summary")
        self.attributions = gr.Plot(label=_l("Attributions"), elem_id="used-attributions")
        self.deletion = gr.HTML(elem_id="used-deletion")
        self.shares = gr.Plot(label=_l("Source share"), elem_id="used-shares")
        self.lens = gr.Plot(label=_l("Logit lens"), elem_id="used-lens")
        self.training = gr.Plot(label=_l("Logit lens over training"), elem_id="used-lens-training")
        self.download = gr.DownloadButton(_l("Download every number (JSON)"), visible=False)
        self.controls = [self.ig_steps]
        self.token_outputs = [self.step, self.alternative, self.summary, self.attributions, self.deletion, self.shares,
                              self.download]
        self.outputs = self.token_outputs + [self.lens, self.training]

    def lenses(self, result):
        """The logit lens of this translation, and over the training snapshots: (lens, training, problem). training
        is None without snapshots, or when a snapshot cannot be read: then `problem` says why in a sentence (never
        cached: the next request tries again), and the rest of the view works."""
        translator = self.ctx.translator(result.pair)
        lens = result.derived("lens", lambda: analyses.lens(translator, result.text, result.translation))
        try:
            training = result.derived("lens over training", lambda: lens_over_training(translator, result))
        except Exception as e:
            log.exception("the lens over training failed")
            return lens, None, (f"**The lens over training is unavailable:** a snapshot could not be read "
                                f"({type(e).__name__}). {self.hint(translator)}")
        return lens, training, ""

    def token_updates(self, result, step: int, alternative: int, ig_steps: int, _) -> dict:
        translator = self.ctx.translator(result.pair)
        lens, training, _problem = self.lenses(result)

        def make() -> dict:
            expl = explanation(translator, result, step, alternative, ig_steps)
            path = downloads.write(self.ctx.downloads, "what-the-model-used", downloads.used_payload(expl, lens, training))
            return {
                self.step: gr.update(choices=output_choices(result), value=step),
                self.alternative: gr.update(choices=alternative_choices(translator, lens, step),
                                            value=alternative),
                self.summary: summary(expl, translator.tokenizer.id_to_piece),
                self.attributions: attribution_figure(expl, _),
                self.deletion: deletion_table(expl.deletion),
                self.shares: source_share_figure(expl, _),
                self.download: gr.update(value=str(path), visible=True)}

        return shared(self.ctx.caches.views, ("used token", result.key, step, alternative, ig_steps, _.language), make,
                      view=self)

    def fill(self, result, values: dict) -> dict:
        translator = self.ctx.translator(result.pair)
        lens, training, problem = self.lenses(result)
        _ = texts(values)
        over_training = training and figures.lens_over_training(
            *training, _("When each decoder layer learned: share of this translation's steps whose top-1 is the final "
                         "token, per training snapshot"), _)
        drawn = {self.lens: lens_figure(translator, result, lens, _),
                 self.training: gr.update(value=over_training,
                                          visible=training is not None)}
        updates = self.token_updates(result, 0, -1, int(values[self.ig_steps]), _) | drawn
        if problem:
            raise PartlyDrawn(updates, problem)  # shown, never cached: the next request tries the snapshots again
        return updates

    @to_page
    def pick_step(self, result, step, alternative, ig_steps, request: gr.Request = None) -> dict:
        """A new output token: the contrastive question starts again (the alternatives are that step's)."""
        return self.token_updates(need(result), int(step or 0), -1, int(ig_steps), texts(request=request))

    @to_page
    def redraw(self, result, step, alternative, ig_steps, request: gr.Request = None) -> dict:
        return self.token_updates(need(result), int(step or 0), int(alternative if alternative is not None else -1),
                                  int(ig_steps), texts(request=request))

    def wire(self, result: gr.State) -> None:
        inputs = [result, self.step, self.alternative, self.ig_steps]
        self.step.input(self.pick_step, inputs, self.token_outputs, api_visibility="private")
        self.alternative.input(self.redraw, inputs, self.token_outputs, api_visibility="private")
        # a drag let go, or a number typed in its box (gradio sends no Enter; a typed number is a change at each
        # keystroke, which a loaded server sees: "128" arrives as 1, 12, 128, each in range): the newest redraws,
        # those in between are skipped
        gr.on([self.ig_steps.release, self.ig_steps.change], self.redraw, inputs, self.token_outputs,
              api_visibility="private", trigger_mode="always_last")
