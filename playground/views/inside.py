"""Inside one head: eq. 1 worked through for one query token, every number read by hooks on the real modules."""
from __future__ import annotations

import gradio as gr

from playground.figures.maps import axis_tokens
from playground.pieces import KIND_NAMES, labels
from transformer.interpret import mechanics
from transformer.errors import InputError
from transformer.interpret.mechanics import HeadWalk
from transformer.model import KINDS

from playground.view import View, texts, to_page
from .common import first_translator, head_choices, kind_radio, layer_choices, need
from playground.figures.inside import head_walk
from playground.i18n import ENGLISH, N_, Texts, _l


def query_choices(result, kind: str) -> list[tuple[str, int]]:
    """(label, position) of every query token of that kind of attention."""
    queries, _ = axis_tokens(result.maps, kind)
    return list(zip(labels(queries, escaped=False), range(len(queries))))  # a menu: written as text


def inside_head(translator, result, kind: str, layer: int, head: int, query: int,
                _: Texts = ENGLISH):
    """eq. 1 worked through for one query token of one head, from the hooked tensors: (figure, walk, reasons),
    reasons[j] saying why key j was masked ("" where it was not)."""
    attn = translator.model.attention_blocks()[kind][layer]
    walk = mechanics.walk_head(result.internals[kind][layer], head, query, attn.w_o.weight, attn.w_o.bias)
    queries, keys = axis_tokens(result.maps, kind)
    reasons = ["" if ok else N_("future (causal mask)") for ok in walk.allowed.tolist()]
    query_label = labels(queries, escaped=False)[query]  # the title is escaped where it is drawn (base.wrapped)
    title = _("{kind}, layer {layer}, head {head}: query {query}", kind=_(KIND_NAMES[kind]), layer=layer + 1,
              head=head + 1, query=query_label)
    return head_walk(walk, keys, reasons, head, title, _), walk, reasons


def walk_table(walk: HeadWalk, query: int, queries: list[str], keys: list[str], reasons: list[str],
               head: int) -> str:
    """eq. 1 step by step for one query of one head: what each step does, its shape, and how closely the
    re-derived numbers equal the hooked ones (every token escaped)."""
    top = int(walk.weights.argmax())
    n_masked = sum(1 for r in reasons if r)
    H, D = walk.contributions.shape
    Dv = walk.values.size(-1)
    mask_line = (f"the decoder's causal mask sets the {n_masked} keys after position {query + 1} to −∞: a target token "
                 "may not look at tokens that are not generated yet" if n_masked else
                 "nothing is masked here: one sentence has no padding, and only the decoder's self-attention is causal")
    rows = [
        ("q = x W<sub>i</sub><sup>Q</sup>", f"1 × {walk.d_k}", f"the query of piece {labels(queries)[query]}, "
         "read by a hook on W<sup>Q</sup> (§3.2.2)"),
        ("K = x W<sub>i</sub><sup>K</sup>", f"{len(keys)} × {walk.d_k}", "one key per piece this query may look at"),
        ("q · Kᵀ", f"1 × {len(keys)}", "how well the query matches each key (eq. 1)"),
        (f"÷ √d<sub>k</sub> = ÷ {walk.d_k ** 0.5:.2f}", f"1 × {len(keys)}",
         "keeps the scores from growing with d<sub>k</sub>, where softmax would saturate (§3.2.1)"),
        ("mask", f"1 × {len(keys)}", mask_line),
        ("softmax", f"1 × {len(keys)}", f"weights that sum to 1; the largest, {float(walk.weights[top]):.3f}, on "
         f"{labels(keys)[top]}. Equal to the Attention view's row to {walk.row_error:.1e}"),
        ("weights · V", f"1 × {Dv}", "this head's output: a mix of the values, in those proportions. Equal to its "
         f"slice of what entered W<sup>O</sup> to {walk.output_error:.1e}"),
        ("Concat(head<sub>1</sub>..head<sub>h</sub>) W<sup>O</sup>", f"1 × {H * Dv} · {H * Dv} × {D}",
         f"the {H} heads side by side, mixed back to d<sub>model</sub> (§3.2.2); head {head + 1}'s share is "
         f"{float(walk.shares[head]):.0%} (norm of its slice's contribution). Sum of the contributions + bias equals "
         f"W<sup>O</sup>'s hooked output to {walk.mix_error:.1e}"),
    ]
    body = "".join(f"<tr><td>{a}</td><td>{b}</td><td>{c}</td></tr>" for a, b, c in rows)
    return ('<table class="walk"><thead><tr><th>step</th><th>shape</th><th>what it does</th></tr></thead>'
            f"<tbody>{body}</tbody></table>")


class InsideHeadView(View):
    def build(self) -> None:
        with gr.Row():
            self.kind = kind_radio("decoder")
            self.layer = gr.Dropdown(layer_choices(first_translator(self.ctx)), value=0, label=_l("Layer"))  # from 1
            self.head = gr.Dropdown(head_choices(first_translator(self.ctx)), value=0, label=_l("Head"))
            self.query = gr.Dropdown([], label=_l("Query token"), elem_id="inside-query")
        self.steps = gr.HTML(elem_id="inside-steps")
        self.plot = gr.Plot(label=_l("Inside one head"), elem_id="inside-plot")
        self.controls = [self.kind, self.layer, self.head]
        self.outputs = [self.query, self.steps, self.plot]
        self.pair_outputs = [self.layer, self.head]

    def draw(self, result, kind: str, layer, head, query, _) -> dict:
        if kind not in KINDS:
            raise InputError(f"unknown attention kind {kind!r}: choose one of {', '.join(KINDS)}")
        choices = query_choices(result, kind)
        query = min(int(query or 0), len(choices) - 1)
        layer = min(int(layer), getattr(result.maps, kind).size(0) - 1)
        fig, walk, reasons = inside_head(self.ctx.translator(result.pair), result, kind, layer, int(head), query, _)
        queries, keys = axis_tokens(result.maps, kind)
        steps = walk_table(walk, query, queries, keys, reasons, int(head))
        return {self.query: gr.update(choices=choices, value=query), self.steps: steps, self.plot: fig}

    def fill(self, result, values: dict) -> dict:
        default = 2 if values[self.kind] == "decoder" else 0  # a decoder query with a few positions before it
        return self.draw(result, values[self.kind], values[self.layer], values[self.head], default, texts(values))

    def on_pair(self, translator, pair: str, values: dict) -> dict:
        return {self.layer: gr.update(choices=layer_choices(translator), value=0),
                self.head: gr.update(choices=head_choices(translator), value=0)}

    @to_page
    def redraw(self, result, kind, layer, head, query, request: gr.Request = None) -> dict:
        return self.draw(need(result), kind, layer, head, query, texts(request=request))

    def wire(self, result: gr.State) -> None:
        inputs = [result, self.kind, self.layer, self.head, self.query]
        for control in (self.kind, self.layer, self.head):
            control.change(self.redraw, inputs, self.outputs, api_visibility="private")
        self.query.input(self.redraw, inputs, self.outputs, api_visibility="private")  # the user's choice only
