"""The lesson: every step's answer checked against the model itself, on a tiny model and on the shipped ones."""
from __future__ import annotations

import html
import re

import plotly.graph_objects as go
import pytest
import torch

from playground import context, lesson, notes, pieces, registry
from transformer.decoding import DecodeOptions

SENTENCE = "A dog is running through the snow in the park."


def bold(answer: str) -> str:
    """The answer's first bold part, as the page shows it."""
    return html.unescape(re.search(r"\*\*(.+?)\*\*", answer).group(1))


def quoted(tokens: list[str], i: int) -> str:
    return html.escape(lesson.named(tokens, i))  # as the answers write it (markdown of escaped text)


def check_every_answer(translator, result):
    """Each step's answer against the hooked maps, the decoder and the snapshots it is computed from."""
    maps, out = result.maps, result.translation.target_tokens
    made = [lesson.step(translator, result, n) for n in range(1, lesson.STEPS + 1)]
    assert [s.number for s in made] == list(range(1, lesson.STEPS + 1))
    for s in made:
        assert s.title and s.text and s.deeper in registry.BY_KEY and (s.question or "cannot" in s.text or "too short" in s.text)
        for fig in (s.figure, s.marked):
            assert not isinstance(fig, go.Figure) or fig.layout.height <= lesson.HEIGHT

    ids, _ = translator.source_ids(result.text)
    assert bold(made[0].answer) == f"{len(ids)} pieces" == f"{len(maps.source_tokens)} pieces"
    assert made[0].figure is None and "<svg" in made[0].marked  # the picture counts them: shown with the answer

    ins = result.inspection  # step 2: which is longer, the first piece's word vector or its position wave
    word, wave = ins.source_embedded[0].norm(), (ins.source_input[0] - ins.source_embedded[0]).norm()
    assert bold(made[1].answer) == ("the word vector" if word > wave else "the position wave")
    framed = [a.text for a in made[1].marked.layout.annotations if a.font.color == lesson.ORANGE]
    ratio = float(max(word, wave) / min(word, wave))
    assert len(framed) == 1 and framed[0].startswith("word vector" if word > wave else "+ position wave")
    label = made[1].marked.layout.title.text  # the label and the words give the same comparison
    assert f"{bold(made[1].answer)} is longer ({ratio:.1f}×)" in label and f"({ratio:.1f}×)" in made[1].answer
    scales = {(t.zmin, t.zmax) for t in made[1].figure.data}
    assert len(scales) == 1, scales  # the panels compared share one colour scale
    labels = pieces.labels

    q = lesson.looked_at(result)  # steps 3 and 4: the hooked rows of the first encoder layer
    assert bold(made[2].answer) == quoted(maps.source_tokens, int(maps.encoder[0, 0, q].argmax()))
    src_labels = labels(maps.source_tokens)
    k = int(maps.encoder[0, 0, q].argmax())
    assert lesson.marked_cells(made[2].marked) == [("", src_labels[k], src_labels[q])]  # marked where it is
    heads = set(maps.encoder[0, :, q].argmax(-1).tolist())
    assert bold(made[3].answer) == ("Yes" if len(heads) == 1 else "No")
    assert len(made[3].marked.layout.shapes) == maps.encoder.size(1)  # one mark per head

    if len(out) >= 3:  # step 5: the mask, as the decoder applied it
        later = min(3, len(out) - 1)
        assert made[4].answer.startswith("**No") == bool(maps.decoder[:, :, 1, later + 1].max() == 0)
        dec = labels(result.batch[0]["target_tokens"])  # the decoder's panel (the second): row out[0], column out[later]
        assert lesson.marked_cells(made[4].marked) == [("2", dec[later + 1], dec[1])]
        assert quoted(out, 0) in made[4].answer and quoted(out, later) in made[4].question
        titles = [a.text for a in made[4].marked.layout.annotations if a.font.color == lesson.ORANGE]
        assert titles == ["Decoder self (masked)"] and "the decoder (orange panel)" in made[4].marked.layout.title.text

    t = lesson.clearest_step(result)  # step 6: the argmax of the hooked cross-attention row
    if t is not None:
        row = maps.cross[-1].mean(0)[t]
        assert bold(made[5].answer) == quoted(maps.source_tokens, int(row.argmax()))
        assert quoted(out, t) in made[5].question
        assert lesson.marked_cells(made[5].marked) == [("", src_labels[int(row.argmax())],
                                                        labels(maps.target_tokens)[t])]

    first = result.translation.steps[0].token  # step 7: ten draws at temperature 2, each with its seed
    hot = [translator.translate(result.text, DecodeOptions(strategy="sample", temperature=2.0, seed=s, max_len=2))
           for s in range(10)]
    assert bold(made[6].answer) == f"{sum(h.target_tokens[:1] == [first] for h in hot)} of 10"
    (_, rank, row), = lesson.marked_cells(made[6].marked)  # the first word's own cell of the Top-5
    heat = made[6].marked.data[0]
    cell = html.unescape(re.sub(r"</?b>|\[|\]", "", heat.text[0][list(heat.x).index(rank)]))
    assert row == heat.y[0] and cell == pieces.shown(first)

    greedy = translator.translate(result.text).text  # step 8: beam search against greedy
    beam = translator.translate(result.text, DecodeOptions(strategy="beam", beam_size=4)).text
    assert bold(made[7].answer) == ("Yes" if beam == greedy else "No")
    check_polls(made)
    return made


def check_polls(made: list) -> None:
    """Each question as a class's poll (playground.classroom): distinct choices, and the right one is the answer."""
    for s in made:
        if s.question and s.choices:
            assert len(s.choices) >= 2 and len(set(s.choices)) == len(s.choices) and 0 <= s.right < len(s.choices)
    right = [html.unescape(s.choices[s.right]) if s.choices else None for s in made]
    assert right[0] == bold(made[0].answer).split()[0]  # the number of pieces
    assert right[1] == bold(made[1].answer)
    assert right[2] == html.unescape(bold(made[2].answer)) and right[3] == bold(made[3].answer)
    if made[4].choices:
        assert right[4] == ("No" if made[4].answer.startswith("**No") else "Yes")  # may it look at a later piece?
    if made[5].choices:
        assert right[5] == html.unescape(bold(made[5].answer))
    low, high = lesson.TENS[right[6]]
    assert low <= int(bold(made[6].answer).split()[0]) <= high and right[7] == bold(made[7].answer)


def check_deletion_step(translator, result, made):
    """Step 10: the words, the label under the title and the two marks tell one comparison."""
    t = lesson.clearest_step(result)
    if t is None or not made[9].question:
        return
    expl = lesson.explanation(translator, result, t, ig_steps=16)
    top = {m: int(expl.methods[m].source.argmax()) for m in ("attention", "alti_plus")}
    verdict = lesson.deletion_verdict(top, {m: expl.deletion.drops[m][0] for m in top})
    assert verdict[0].upper() + verdict[1:] == bold(made[9].answer).rstrip(".")
    assert made[9].marked.layout.title.text.endswith(f"{verdict}</span>")
    src = pieces.labels(result.maps.source_tokens)
    assert sorted(x for _, x, _ in lesson.marked_cells(made[9].marked)) == sorted(f"src {src[k]}" for k in top.values())


def test_a_piece_is_named_as_a_whole_word_or_as_the_piece_of_its_word():
    from playground.pieces import named

    tokens = ["<s>", "▁Ich", "▁ha", "be", "▁zwei", "▁B", "r", "ü", "der", ".", "</s>"]
    assert [named(tokens, i) for i in (0, 1, 2, 3, 5, 8, 9, 10)] == [
        "“start”", "“Ich”", "the piece “ha” of “habe”", "the piece “-be” of “habe”", "the piece “B” of “Brüder”",
        "the piece “-der” of “Brüder”", "“.”", "“end”"]
    assert named(["▁", "b", "▁c"], 1) == "“b”"  # a lone word-start mark begins the word
    french = ["▁", "J", "'", "ai", "▁un", "▁test", ".", "</s>"]
    assert [named(french, i) for i in (1, 2, 3, 5, 6)] == [
        "the piece “J” of “J'ai”", "“'”", "the piece “-ai” of “J'ai”", "“test”", "“.”"]


def test_a_byte_of_a_character_the_vocabulary_lacks_is_written_as_its_character_or_as_a_byte():
    from playground.pieces import labels, piece, shown

    tokens = ["▁A", "▁", "<0x3C>", "b", "<0x3E>", "▁", "<0xD0>", "<0x97>", "▁man"]  # "A <b> З man", byte fallback
    assert [piece(t) for t in tokens[2:8]] == ["<", "b", ">", "␣", "byte D0", "byte 97"]
    assert [shown(t) for t in tokens] == ["A", "␣", "<", "-b", ">", "␣", "byte D0", "byte 97", "man"]
    assert not any("<0x" in label for label in labels(tokens))
    assert labels(tokens)[2] == "3 &lt;" and labels(tokens, escaped=False)[2] == "3 <"  # plotly's, a menu's


def test_a_change_in_probability_reads_with_its_sign():
    assert lesson.changed(0.3).format("“Ich”") == "lowers the chance of “Ich” by 0.30"
    assert lesson.changed(-0.3).format("it") == "raises the chance of it by 0.30"
    assert lesson.changed(0.001).format("it") == "leaves the chance of it as it was"


def test_the_deletion_verdict_calls_a_tie_a_tie():
    assert lesson.deletion_verdict({"attention": 2, "alti_plus": 2}, {"attention": 0.5, "alti_plus": 0.5}).startswith("they point")
    assert "about the same" in lesson.deletion_verdict({"attention": 1, "alti_plus": 2}, {"attention": 0.30, "alti_plus": 0.305})
    assert "ALTI+" in lesson.deletion_verdict({"attention": 1, "alti_plus": 2}, {"attention": 0.1, "alti_plus": 0.4})
    assert "attention" in lesson.deletion_verdict({"attention": 1, "alti_plus": 2}, {"attention": 0.4, "alti_plus": 0.1})


def test_every_answer_is_the_models_own_on_a_tiny_model(translator):
    result = context.run(translator, "tiny", "a b c d e f g")
    made = check_every_answer(translator, result)
    check_deletion_step(translator, result, made)
    assert "cannot show" in made[8].text and not made[8].question  # no training snapshots: said plainly


def test_a_one_word_sentence_gets_plain_words_where_a_step_cannot_apply(translator):
    torch.manual_seed(0)
    result = context.run(translator, "tiny", "a")
    made = [lesson.step(translator, result, n) for n in range(1, lesson.STEPS + 1)]
    assert "at least two words" in made[9].text and not made[9].question
    assert all(s.text for s in made)


def test_the_teachers_notes_hold_every_step_its_question_answer_and_figure(translator, tmp_path):
    result = context.run(translator, "tiny", "a b c d")
    made = [lesson.step(translator, result, n) for n in range(1, lesson.STEPS + 1)]
    path = notes.write(tmp_path, result, made)
    page = path.read_text(encoding="utf-8")
    assert path.suffix == ".html" and page.count("<section>") == lesson.STEPS
    assert page.count("class='question'") == sum(bool(s.question) for s in made)
    assert "<svg" in page and page.count('class="plotly-graph-div"') >= 6  # the glance, and the plotly figures
    assert "<script src" not in page  # plotly's script is inside: the notes open offline


@pytest.mark.slow
def test_every_answer_is_the_models_own_on_the_shipped_checkpoints(translators):
    for pair, translator in translators.items():
        made = check_every_answer(translator, context.run(translator, pair, SENTENCE))
        epochs = lesson.timeline.snapshots(translator)  # step 9: the snapshots' own translations
        said = lesson.timeline.snapshot(translator, epochs[0]).translate(SENTENCE).text
        assert f"after epoch {epochs[0]}: “{html.escape(said)}”" in made[8].answer
        expl = lesson.explanation(translator, context.run(translator, pair, SENTENCE),
                                          lesson.clearest_step(context.run(translator, pair, SENTENCE)), ig_steps=16)
        assert f"by {expl.deletion.drops['attention'][0]:.2f}" in made[9].answer  # step 10: the deletion test
        for sentence in ("I have a math test tomorrow.", "My sister plays the piano."):
            result = context.run(translator, pair, sentence)
            check_deletion_step(translator, result, check_every_answer(translator, result))


def test_step_nines_poll_describes_what_an_early_model_writes():
    assert lesson.early_kind("Ein Ein Ein Ein .", "Ich habe einen Hund .") == 0
    assert lesson.early_kind("Ein Mann steht auf der Straße .", "Ich habe einen Hund .") == 1
    assert lesson.early_kind("Ich habe ein Hund .", "Ich habe einen Hund .") == 2


def marked_places(fig) -> list:
    """Where the answer is marked, whatever the language: each marked cell as its row's and column's places among
    the figure's labels (a method's name is translated, its place is not); the glance, as the places it links to."""
    if not isinstance(fig, go.Figure):
        return re.findall(r'data-[a-z]+="[^"]*"', fig or "")

    def place(label, axis):
        found = [list(getattr(t, axis)).index(label) for t in fig.data
                 if getattr(t, axis, None) is not None and label in list(getattr(t, axis))]
        return found[0] if found else label
    return [(panel, place(x, "x"), place(y, "y")) for panel, x, y in lesson.marked_cells(fig)]


@pytest.mark.parametrize("language", ["de", "fr"])
def test_the_lesson_in_german_and_french_is_the_same_lesson_in_other_words(translator, tmp_path, language):
    """The same steps, answers and marks, every sentence in the language (its numbers written its way); only the
    sentence's own pieces, the figures' numbers and names stay as they are."""
    result = context.run(translator, "tiny", "a b c d e f g")
    english = [lesson.step(translator, result, n) for n in range(1, lesson.STEPS + 1)]
    other = [lesson.step(translator, result, n, language) for n in range(1, lesson.STEPS + 1)]
    for e, o in zip(english, other):
        assert (o.number, o.deeper, o.also, o.right, len(o.choices)) == (e.number, e.deeper, e.also, e.right,
                                                                         len(e.choices))
        assert o.title != e.title and o.text != e.text
        if e.question:
            assert o.question != e.question and o.answer != e.answer
        words = [(c, d) for c, d in zip(e.choices, o.choices) if re.search(r"[a-z]{3}", c)]
        assert all(c != d for c, d in words), words  # a number stays a number; a word is translated
        assert marked_places(o.marked) == marked_places(e.marked)  # the answer marked on the same cells
    quote = {"de": "„", "fr": "«\u00a0"}[language]
    assert quote in other[2].question and "”" not in other[2].question  # the language's own quotation marks
    page = notes.write(tmp_path, result, other, language).read_text(encoding="utf-8")
    assert f"lang='{language}'" in page and {"de": "Schritt 1:", "fr": "Étape 1 :"}[language] in page
