"""A lesson: ten guided steps through the model, on the class's own sentence (no gradio: views/lesson.py shows it).

Each step has a title, two or three plain sentences, the figure of the view that goes deeper (drawn by that view's
own functions), a question for the class to answer before it is shown, and the answer, computed from the model for
this sentence, with the figure marked where the answer lies. A step that cannot say anything sensible for this
sentence or this model says so plainly, and the lesson goes on.
"""
from __future__ import annotations

import html
import math
import string
from dataclasses import dataclass, field, replace

import plotly.graph_objects as go

from transformer.decoding import DecodeOptions
from transformer.training import timeline

from . import context
from .figures import glance
from .figures.attributions import attribution_figure, explanation, method_label
from .figures.maps import attention_figure, families_figure
from .pieces import METHOD_NAMES, named, piece as piece_shown, shown as shown_piece
from .context import Result
from .figures.base import wrapped
from .figures.beam_tree import beam_tree
from .figures.positional import embedding_inputs
from .figures.schedule import training_curves
from .figures.steps import step_probabilities
from .i18n import ENGLISH, N_, Texts

STEPS = 10
HEIGHT = 430  # the most a step's figure takes, so that a whole step fits a 1280 x 720 projector
TITLE_LINE = 24  # px: a line of a figure's title


@dataclass
class LessonStep:
    number: int  # 1 to STEPS
    title: str
    text: str  # two or three plain sentences (Markdown)
    question: str = ""  # empty: this step cannot apply here, and `text` says why
    answer: str = ""
    figure: go.Figure | str | None = None  # a plotly figure, or HTML (the model at a glance)
    marked: go.Figure | str | None = None  # the same figure with the answer marked on it
    deeper: str = ""  # the key of the view that goes deeper (playground.registry)
    choices: list[str] = field(default_factory=list)  # the question as a class's poll: plain text, the answer among
    right: int = 0  # them at this index (playground.classroom asks the class)
    also: str = ""  # the key of a second view it links to, when it has one


def word(token: str) -> str:
    """A piece as a class reads it: without the word-start mark."""
    return piece_shown(token)


def quoted(tokens: list[str], i: int, _: Texts = ENGLISH) -> str:
    """Piece i of `tokens` in an answer: “Ich”, or the piece “-be” of “habe” (never a piece called a word)."""
    return html.escape(named(tokens, i, _))


def changed(drop: float, _: Texts = ENGLISH) -> str:
    """A fall in probability said with its sign read right: 'lowers … by 0.30', 'raises … by 0.30' ({} is the
    piece)."""
    if abs(drop) < 0.005:
        return _("leaves the chance of {piece} as it was", piece="{}")
    if drop > 0:
        return _("lowers the chance of {piece} by {drop}", piece="{}", drop=_.number(abs(drop)))
    return _("raises the chance of {piece} by {drop}", piece="{}", drop=_.number(abs(drop)))


def is_word(token: str) -> bool:
    """A piece with a letter or a digit in it (not </s>, not punctuation)."""
    return token not in ("<s>", "</s>", "<unk>") and any(c not in string.punctuation + "▁" for c in token)


ORANGE = "#e6550d"  # the answer's colour: its marks and its label


def trace_on(fig: go.Figure, axis: str = ""):
    """The heatmap drawn on subplot `axis` ("" for the first, "2", ...)."""
    return next(t for t in fig.data if (t.xaxis or "x") == f"x{axis}")


def mark_cell(fig: go.Figure, col: int, row: int, axis: str = "") -> go.Figure:
    """The heatmap cell (col, row) of subplot `axis` outlined in orange, placed by the cell's own axis labels (so
    it lands on that cell whatever the axes' types)."""
    heat = trace_on(fig, axis)
    x = heat.x[col] if heat.x is not None else col
    y = heat.y[row] if heat.y is not None else row
    return fig.add_shape(type="rect", x0=x, x1=x, y0=y, y1=y, x0shift=-0.5, x1shift=0.5, y0shift=-0.5, y1shift=0.5,
                         xref=f"x{axis}", yref=f"y{axis}", line=dict(color=ORANGE, width=4))


def marked_cells(fig: go.Figure) -> list[tuple[str, str, str]]:
    """(axis, x label, y label) of every cell mark_cell outlined: what the tests hold against the answers."""
    return [(shape.xref[1:], shape.x0, shape.y0) for shape in fig.layout.shapes
            if shape.type == "rect" and "domain" not in shape.xref]


def note(fig: go.Figure, text: str) -> go.Figure:
    """The answer written under the figure's title, in orange (never over the figure or a panel's title)."""
    title = fig.layout.title.text or ""
    lines, n = wrapped(text)
    more = 6 + 20 * n
    answer = "<br>".join(f"<span style='color:{ORANGE}'>{line}</span>" for line in lines.split("<br>"))
    return fig.update_layout(title_text=f"{title}<br>{answer}",
                             margin_t=(fig.layout.margin.t or 60) + more, height=(fig.layout.height or HEIGHT) + more)


def mark_panel(fig: go.Figure, panel: int) -> go.Figure:
    """Panel `panel` (0, 1, ...) framed in orange, its title in orange: the panel the answer names."""
    axis = "" if panel == 0 else str(panel + 1)
    fig.layout.annotations[panel].update(font=dict(color=ORANGE))
    return fig.add_shape(type="rect", xref=f"x{axis} domain", yref=f"y{axis} domain", x0=0, x1=1, y0=0, y1=1,
                         line=dict(color=ORANGE, width=3))


def copy(fig: go.Figure) -> go.Figure:
    return go.Figure(fig)


def looked_at(result: Result) -> int:
    """The source piece steps 3 and 4 ask about: the longest word of the sentence (the first, on a tie)."""
    src = result.maps.source_tokens
    candidates = [i for i, t in enumerate(src) if is_word(t)] or [0]
    return max(candidates, key=lambda i: (len(word(src[i])), -i))


def by_position(tokens: list[str], weights, k: int, _: Texts = ENGLISH) -> tuple[list[str], int]:
    """A poll over pieces: the `weights`' four heaviest pieces (the heaviest, `k`, among them) named in the
    sentence's order, and where `k` landed."""
    top = sorted(set(sorted(range(len(tokens)), key=lambda i: -float(weights[i]))[:4]) | {k})
    return [named(tokens, i, _) for i in top], top.index(k)


def yes_no(_: Texts) -> list[str]:
    return [_("Yes"), _("No")]


def clearest_step(result: Result) -> int | None:
    """The output word whose cross-attention (last layer, mean of heads) is the most sure of one source piece, or
    None when the translation has no word."""
    out = result.translation.target_tokens
    cross = result.maps.cross[-1].mean(0)  # (T, S): a row per step
    steps = [t for t, tok in enumerate(out) if is_word(tok)]
    return max(steps, key=lambda t: float(cross[t].max())) if steps else None


# -----------------------------------------------------------------------------
# The ten steps, in the order a teacher explains the paper; each in the language of `_` (playground.i18n.Texts)


def pieces(translator, result: Result, _: Texts) -> LessonStep:
    src = result.maps.source_tokens
    ids, _unknown = translator.source_ids(result.text)
    listed = " · ".join(f"{html.escape(shown_piece(t, first=n == 0))} ({i})" for n, (t, i) in enumerate(zip(src, ids)))
    picture = glance.figure(result, _=_)
    n, words = len(src), len(result.text.split())
    counts = sorted({n} | set([c for c in (words, n - 2, n + 2, n + 4, words + 1) if c > 0 and c != n][:3]))
    return LessonStep(
        1, _("Pieces"), _("The model does not read letters or whole words: it cuts the sentence into **pieces** from "
                          "a list of {vocabulary} it learned, and each piece becomes a number (its id). Frequent words "
                          "stay whole; rare words are cut into several pieces.",
                          vocabulary=_.number(translator.cfg.vocab_size, 0)),
        _("Into how many pieces will the model cut your sentence, counting the end mark?"),
        _.plural("**{n} piece**: {listed}.", "**{n} pieces**: {listed}.", len(src), listed=listed) + " "
        + _("A dash marks a piece that continues the word before it (in the picture, the pieces of one word touch). "
            "The end mark, {end}, tells the encoder the sentence is over.", end=_.quoted(_("end"))),
        None, picture, "glance",  # the picture counts the pieces: it comes with the answer, not before
        [str(c) for c in counts], counts.index(n))


def embeddings(translator, result: Result, _: Texts) -> LessonStep:
    ins, src = result.inspection, result.maps.source_tokens
    d_model = translator.cfg.d_model
    fig = embedding_inputs(ins.source_embedded, ins.source_input, src,
                           _("What the encoder's first layer received for your sentence"), _)
    word_size = float(ins.source_embedded[0].norm())  # (D,) the first piece's embedding x sqrt(d_model)
    position_size = float((ins.source_input[0] - ins.source_embedded[0]).norm())  # (D,) position 0's wave
    word_bigger = word_size > position_size
    bigger = _("the word vector") if word_bigger else _("the position wave")
    ratio = _.number(max(word_size, position_size) / max(min(word_size, position_size), 1e-9), 1)
    answer = _("For {piece} the word vector is {word} long and the position wave {position}: **{bigger}** is "
               "bigger ({ratio}×). Both are added into one vector, so the layers above see the word and where it "
               "stands at once. The three panels share one colour scale, so the bigger one is also the more "
               "colourful.", piece=quoted(src, 0, _), word=_.number(word_size, 1),
               position=_.number(position_size, 1), bigger=bigger, ratio=ratio)
    return LessonStep(
        2, _("Embeddings and positions"),
        _("Each piece becomes a list of {d_model} numbers (its **embedding**), multiplied by √{d_model} ≈ {scale}. "
          "Attention alone cannot tell word order, so a pattern of waves that says where the piece stands is added "
          "to it.", d_model=d_model, scale=_.number(math.sqrt(d_model), 1)),
        _("For the first piece, {piece}: which is bigger, its word vector or the position wave added to it?",
          piece=quoted(src, 0, _)),
        answer, fig, note(mark_panel(copy(fig), 0 if word_bigger else 1),
                          _("{bigger} is longer ({ratio}×): the orange panel", bigger=bigger, ratio=ratio)),
        "positional", [_("the word vector"), _("the position wave")], 0 if word_bigger else 1)  # its bold words


def one_head(translator, result: Result, _: Texts) -> LessonStep:
    src, q = result.maps.source_tokens, looked_at(result)
    row = result.maps.encoder[0, 0, q]  # (S,): layer 0, head 0, the query's weights over every piece
    k = int(row.argmax())
    fig = attention_figure(result, "encoder", 0, "0", "single", _)
    return LessonStep(
        3, _("One head"), _("To update a piece, attention lets it ask a question (its **query**) of every piece, each "
                            "of which shows a label (its **key**). The better a label fits the question, the bigger "
                            "that piece's weight; the weights add up to 1 and decide how much of each piece's content "
                            "(its **value**) is mixed in."),
        _("In the encoder's first layer, head 1: which piece does {piece} look at most?", piece=quoted(src, q, _)),
        _("**{piece}**, with weight {weight} of 1 (the orange square, row {query}).", piece=quoted(src, k, _),
          weight=_.number(float(row[k])), query=quoted(src, q, _)),
        fig, mark_cell(copy(fig), k, q), "inside", *by_position(src, row, k, _))


def many_heads(translator, result: Result, _: Texts) -> LessonStep:
    src, q = result.maps.source_tokens, looked_at(result)
    rows = result.maps.encoder[0, :, q]  # (H, S): every head's weights for the query
    best = rows.argmax(-1).tolist()
    fig = attention_figure(result, "encoder", 0, "0", "heads", _)
    marked = copy(fig)
    for h, k in enumerate(best):
        mark_cell(marked, k, q, "" if h == 0 else str(h + 1))
    distinct = sorted(set(best))
    if len(distinct) == 1:
        answer = _("**Yes**: all {heads} heads look most at {piece} this time.", heads=len(best),
                   piece=quoted(src, best[0], _))
    else:
        each = "; ".join(_("head {head} looks most at {piece}", head=h + 1, piece=quoted(src, k, _))
                         for h, k in enumerate(best))
        answer = _("**No**: {n} different pieces among {heads} heads: {each}. Each head has its own query, key and "
                   "value maps, so each can look for something else.", n=len(distinct), heads=len(best), each=each)
    return LessonStep(
        4, _("Many heads"), _("A layer has {heads} heads that attend side by side, each with its own questions and "
                              "labels. Their results are joined and mixed again, so one layer can follow several "
                              "things at once.", heads=len(best)),
        _("In the encoder's first layer, do all {heads} heads look at the same piece for {piece}?", heads=len(best),
          piece=quoted(src, q, _)),
        answer, fig, marked, "attention", yes_no(_), 0 if len(distinct) == 1 else 1)


def masks(translator, result: Result, _: Texts) -> LessonStep:
    out = result.translation.target_tokens
    text = _("The encoder sees the whole sentence at once. The decoder writes one piece after another, so a piece "
             "may look only at the pieces already written: a **mask** hides the later ones.")
    if len(out) < 3:
        return LessonStep(5, _("Masks"), text + " " + _("This translation is too short to show it (it needs three "
                                                         "pieces): try a longer sentence."), deeper="families")
    later = min(3, len(out) - 1)  # the decoder's inputs: <s>, then out[0], out[1], ...: out[j] sits at j + 1
    weight = float(result.maps.decoder[:, :, 1, later + 1].max())  # (L, H): every layer and head, out[0]'s row
    fig = families_figure(result, _)
    seen = (_("**No: every head of every layer gives it weight 0**") if weight == 0 else
            _("**Yes, weight {weight}**", weight=_.number(weight, 3)))
    return LessonStep(
        5, _("Masks"), text, _("While it works on {first}, may the decoder look at {later}, which it writes later?",
                               first=quoted(out, 0, _), later=quoted(out, later, _)),
        seen + " " + _("(the orange square in the decoder's panel, row {first}, in its grey upper triangle). "
                       "Cross-attention has no such mask: every word may look at the whole English sentence.",
                       first=quoted(out, 0, _)),
        fig, note(mark_panel(mark_cell(copy(fig), later + 1, 1, "2"), 1),
                  _("the decoder (orange panel): {later} is masked while it works on {first}",
                    later=named(out, later, _), first=named(out, 0, _))),
        "families", yes_no(_), 1 if weight == 0 else 0)


def cross(translator, result: Result, _: Texts) -> LessonStep:
    out, src = result.translation.target_tokens, result.maps.source_tokens
    t = clearest_step(result)
    text = _("**Cross-attention** connects the two halves: as the decoder writes each piece, it looks back at the "
             "English pieces. Words that translate each other often find each other here.")
    if t is None:
        return LessonStep(6, _("Cross-attention"), text + " " + _("This translation has no piece to ask about."),
                          deeper="attention")
    row = result.maps.cross[-1].mean(0)[t]  # (S,): the last layer, mean of heads, while it writes out[t]
    k = int(row.argmax())
    layers = result.maps.cross.size(0)
    fig = attention_figure(result, "cross", layers - 1, "average", "single", _)
    return LessonStep(
        6, _("Cross-attention"), text,
        _("Which English piece will the model look at most when it writes {piece}?", piece=quoted(out, t, _)),
        _("**{piece}**, with {share} of the last layer's attention (mean of heads). The orange square is on the row "
          "of the piece before it, {before}: the decoder's input when it chose it.", piece=quoted(src, k, _),
          share=_.percent(float(row[k])), before=quoted(result.maps.target_tokens, t, _)),
        fig, mark_cell(copy(fig), k, t), "attention", *by_position(src, row, k, _))


def next_word(translator, result: Result, _: Texts) -> LessonStep:
    steps = result.translation.steps
    first, p = steps[0].token, steps[0].prob
    hot = DecodeOptions(strategy="sample", temperature=2.0, seed=0, max_len=2)
    draws = [translator.translate(result.text, replace(hot, seed=s)).target_tokens[:1] for s in range(10)]
    same = sum(d == [first] for d in draws)
    fig = step_probabilities(steps, _=_)
    rank = next((r for r, (tok, _p) in enumerate(steps[0].alternatives[:5]) if tok == first), 0)
    others = sorted({word(d[0]) for d in draws if d and d != [first]})
    answer = _("**{same} of 10**.", same=same)
    if others:
        answer += " " + _("The others started with {others}.",
                          others=", ".join(_.quoted(html.escape(o)) for o in others))
    answer += " " + _("At temperature 1 the model's own chances are used; at 2 they are flattened: the top piece "
                      "keeps the largest share, but the thousands of unlikely pieces together gain far more, so a "
                      "draw often lands on one of them. Each step reads only the newest piece: the keys and values of "
                      "the pieces before it are kept (the decoder's **cache**, {size} KB by this translation's last "
                      "step).", size=_.number(result.cache.nbytes[-1] / 1024, 0))
    return LessonStep(
        7, _("Choosing the next piece"), _("At every step the model gives each piece it knows a probability. "
                                           "**Greedy** decoding takes the most likely one; **sampling** draws one at "
                                           "random, and a **temperature** above 1 flattens the chances, so less likely "
                                           "pieces are drawn more often."),
        _("The first piece it writes is {piece}, with probability {p}. If we sample ten times with temperature 2 "
          "(seeds 0 to 9), how many of the ten start with it?", piece=quoted(result.translation.target_tokens, 0, _),
          p=_.number(p)),
        answer, fig, mark_cell(copy(fig), rank, 0), "steps", [tens(_, low, high) for low, high in TENS.values()],
        next(i for i, (low, high) in enumerate(TENS.values()) if low <= same <= high), also="cache")


TENS = {"0 to 2": (0, 2), "3 to 5": (3, 5), "6 to 8": (6, 8), "9 or 10": (9, 10)}  # step 7's poll


def tens(_: Texts, low: int, high: int) -> str:
    """One of step 7's choices: "0 to 2", "9 or 10"."""
    return _("{low} or {high}", low=low, high=high) if high == low + 1 else _("{low} to {high}", low=low, high=high)


def beam(translator, result: Result, _: Texts) -> LessonStep:
    greedy = context.run(translator, result.pair, result.text, DecodeOptions())
    searched = context.run(translator, result.pair, result.text, DecodeOptions(strategy="beam", beam_size=4))
    fig = beam_tree(searched.translation.beam_tree, translator.tokenizer.pieces, _)
    same = searched.translation.text == greedy.translation.text
    answer = (_("**Yes**: both write {text}.", text=_.quoted(html.escape(greedy.translation.text))) if same else
              _("**No**: greedy writes {greedy}; beam search {beam}.",
                greedy=_.quoted(html.escape(greedy.translation.text)),
                beam=_.quoted(html.escape(searched.translation.text))))
    return LessonStep(
        8, _("Beam search"), _("Greedy decoding never changes its mind. **Beam search** keeps the 4 best beginnings "
                               "at every step and picks the best whole sentence at the end; the tree shows every "
                               "beginning it tried."),
        _("Will beam search with 4 beams write the same translation as greedy decoding?"),
        answer + " " + _("The orange path in the tree is the one it kept."), fig,
        note(copy(fig), _("same as greedy") if same else _("different from greedy")), "steps", yes_no(_),
        0 if same else 1)


def learned(translator, result: Result, _: Texts) -> LessonStep:
    epochs = timeline.snapshots(translator)
    text = _("The model began knowing nothing: its numbers were random. It learned by translating the training "
             "sentences again and again (each pass is an **epoch**) and nudging its numbers after every mistake.")
    if not epochs:
        return LessonStep(9, _("How it learned"), text + " " + _("This model keeps no snapshots of its training (an "
                                                                 "imported model, or one trained without a "
                                                                 "timeline), so this step cannot show it."),
                          deeper="timeline")
    picked = sorted({epochs[0], next((e for e in epochs if e >= 4), epochs[-1])})
    said = [(e, timeline.snapshot(translator, e).translate(result.text, result.options).text) for e in picked]
    fig = training_curves(translator.metrics, _=_)
    answer = "; ".join(_("after epoch {epoch}: {text}", epoch=e, text=_.quoted(html.escape(t))) for e, t in said)
    answer += "; " + _("at the end (the model you are using): {text}.",
                       text=_.quoted(html.escape(result.translation.text)))
    return LessonStep(
        9, _("How it learned"), text, _("After epoch {epoch}, what does the model say for your sentence?",
                                        epoch=picked[0]),
        answer, fig, training_curves(translator.metrics, mark_epoch=picked[0], _=_), "timeline",
        [_(kind) for kind in EARLY], early_kind(said[0][1], result.translation.text))


# step 9's poll: what an early model writes, described rather than shown (its garbled words would give it away)
EARLY = [N_("one word over and over"), N_("words of the language, not yet your sentence"),
         N_("nearly the translation already")]


def early_kind(early: str, final: str) -> int:
    """Which of EARLY an early snapshot's translation is, against the final one."""
    said = early.lower().split()
    if not said or max(said.count(w) for w in said) >= max(2, len(said) / 2):
        return 0
    wanted = set(final.lower().split())
    return 2 if len(set(said) & wanted) >= 0.6 * max(1, len(wanted)) else 1


def not_attention(translator, result: Result, _: Texts) -> LessonStep:
    out, src = result.translation.target_tokens, result.maps.source_tokens
    t = clearest_step(result)
    text = _("Attention shows where the model looks, not what it uses. One test: hide a piece from the model and see "
             "how much less sure it gets of the piece it writes.")
    if t is None or sum(is_word(s) for s in src) < 2:
        return LessonStep(10, _("What attention does not tell you"),
                          text + " " + _("Your sentence needs at least two words for this test."), deeper="used")
    expl = explanation(translator, result, t, ig_steps=16)
    fig = attribution_figure(expl, _)
    top = {m: int(expl.methods[m].source.argmax()) for m in ("attention", "alti_plus")}
    drop = {m: expl.deletion.drops[m][0] for m in top}
    outcome = deletion_outcome(top, drop)
    verdict, it = deletion_verdict(top, drop, _), _("it")  # "it": the piece just named
    answer = _("Hiding attention's top piece ({top}) {effect}; hiding ALTI+'s ({alti}) {alti_effect}; hiding a random "
               "piece {random_effect} on average. **{verdict}.** The orange squares are each method's top piece.",
               top=quoted(src, top["attention"], _), effect=changed(drop["attention"], _).format(quoted(out, t, _)),
               alti=quoted(src, top["alti_plus"], _), alti_effect=changed(drop["alti_plus"], _).format(it),
               random_effect=changed(expl.deletion.random[0], _).format(it),
               verdict=verdict[0].upper() + verdict[1:])
    marked = note(copy(fig), verdict)
    rows = list(trace_on(fig).y)
    for method, k in top.items():
        mark_cell(marked, k, rows.index(method_label(_(METHOD_NAMES[method]))))
    either = _("either: the same piece, or it hurts about the same")
    return LessonStep(
        10, _("What attention does not tell you"), text,
        _("To make the model unsure of {piece}, which should we hide: the English piece attention looks at most, or "
          "the one ALTI+ (a measure of what each piece adds) points at?", piece=quoted(out, t, _)),
        answer, fig, marked, "used",
        # the pieces named only when they differ (the same piece twice would give the answer away)
        [_("attention's top piece, {piece}", piece=named(src, top["attention"], _)),
         _("ALTI+'s top piece, {piece}", piece=named(src, top["alti_plus"], _)), either]
        if top["attention"] != top["alti_plus"] else [_("attention's top piece"), _("ALTI+'s top piece"), either],
        {"same": 2, "tie": 2, "attention": 0, "alti_plus": 1}[outcome])


TIE = 0.01  # two drops closer than this are called a tie


def deletion_outcome(top: dict[str, int], drop: dict[str, float]) -> str:
    """Step 10's one comparison: "same" (one piece), "tie", or the method whose top piece hurts more when hidden."""
    if top["attention"] == top["alti_plus"]:
        return "same"
    if abs(drop["attention"] - drop["alti_plus"]) < TIE:
        return "tie"
    return "attention" if drop["attention"] > drop["alti_plus"] else "alti_plus"


def deletion_verdict(top: dict[str, int], drop: dict[str, float], _: Texts = ENGLISH) -> str:
    """Step 10's comparison in words, for its answer and its label alike."""
    return {"same": _("they point at the same piece this time"), "tie": _("hiding either hurts about the same"),
            "attention": _("hiding attention's top piece hurts more"),
            "alti_plus": _("hiding ALTI+'s top piece hurts more")}[deletion_outcome(top, drop)]


LESSON = [pieces, embeddings, one_head, many_heads, masks, cross, next_word, beam, learned, not_attention]
assert len(LESSON) == STEPS


def step(translator, result: Result, number: int, language: str = "en") -> LessonStep:
    """Step `number` (1 to STEPS, clamped) for this translation in `language` (playground.i18n.LANGUAGES), its
    figures at most HEIGHT px tall."""
    made = LESSON[min(max(int(number), 1), STEPS) - 1](translator, result, Texts(language))
    for fig in (made.figure, made.marked):
        if isinstance(fig, go.Figure):
            fig.update_layout(height=min(fig.layout.height or HEIGHT, HEIGHT))
            if "<br>" in (fig.layout.title.text or "") and fig.layout.annotations:  # a title of two lines over
                # panels' titles: room for its second line now, within the slide's height (page.js would grow the
                # figure to make it, past a projector's screen)
                fig.update_layout(margin_t=(fig.layout.margin.t or 80) + TITLE_LINE)
            # a slide's figure is narrow: numbers written in its cells would run together (the answer says them)
            fig.update_traces(texttemplate=None, selector=dict(type="heatmap", texttemplate="%{z:.2f}"))
    return made
