"""What the views say and mark: the ablation diff, the timeline's table, the model card, every view's plain words."""
from __future__ import annotations


import pytest

from playground.views.common import token_diff
from transformer.metrics import Metrics


M = Metrics.from_dict  # the tests write metrics.json as a dict, as a file holds it


def test_token_diff_marks_changes_and_escapes():
    out = token_diff(["▁Ein", "▁Hund", "<b>"], ["▁Ein", "▁Katze", "<b>"], "with every head", "<i>off</i>")
    assert out.count('"tok removed"') == 1 and out.count('"tok added"') == 1 and "1 piece struck out, 1 piece new" in out
    assert "▁" not in out and ">Hund<" in out and ">Katze<" in out  # pieces as every view writes them
    pieces = token_diff(["▁Ich", "▁ha", "be", "</s>"], ["▁Ich", "▁bin", "</s>"], "a", "b")
    assert ">-be<" in pieces and ">end<" in pieces and "2 pieces struck out, 1 piece new" in pieces
    words = token_diff("Ich habe".split(), "Ich bin".split(), "a", "b", unit="word")
    assert "1 word struck out, 1 word new" in words
    assert out.count("&lt;b&gt;") == 2 and out.count("<b>") == 2  # the token escaped; only our two labels are bold
    assert "&lt;i&gt;off" in out  # labels escaped too


@pytest.mark.parametrize("language, heads, counts", [("de", "Schicht 2, Kopf 3", "2 Wortstücke gestrichen, 1 Wortstück neu"),
                                                     ("fr", "couche 2, tête 3", "retirés : 2 morceaux ; ajoutés : 1 morceau")])
def test_the_heads_to_switch_off_and_a_diff_are_written_in_the_pages_language(translator, language, heads, counts):
    from playground.i18n import Texts
    from playground.views.ablation import every_head

    _ = Texts(language)
    labels = dict((name, label) for label, name in every_head(translator, _))
    assert labels["cross:1:2"] == f"{_('Cross')}, {heads}" and len(labels) == 3 * 2 * 4  # kinds, layers, heads
    diff = token_diff(["▁Ich", "▁ha", "be", "</s>"], ["▁Ich", "▁bin", "</s>"], _("with every head"), "b", _=_)
    assert counts in diff and _("with every head") != "with every head"


def test_timeline_rows_and_table_escape_and_refuse_unknown_epochs():
    from transformer.training import timeline
    from playground.views.timeline import translations_table

    metrics = {"timeline_sources": ["a <b>", "c"],
               "epochs": [{"epoch": 1, "translations": ["x x x", "x"]}, {"epoch": 2, "translations": ["<i>", "d"]}]}
    assert timeline.recorded_epochs(M(metrics)) == [1, 2]
    rows = timeline.translations_at(M(metrics), 1)
    assert [(r.source, r.at_epoch, r.final) for r in rows] == [("a <b>", "x x x", "<i>"), ("c", "x", "d")]
    table = translations_table(rows, 1)
    assert "&lt;b&gt;" in table and "&lt;i&gt;" in table and "<b>" not in table and "<i>" not in table
    with pytest.raises(ValueError, match="epoch 3 is not recorded"):
        timeline.translations_at(M(metrics), 3)
    with pytest.raises(ValueError, match="without recording a timeline"):
        timeline.translations_at(M({"epochs": [{"epoch": 1}]}), 1)


def test_the_model_card_says_what_data_the_model_knows_and_credits_tatoeba():
    from playground.views.card import TATOEBA_CREDIT, knows

    captions = knows(M({"command": "python -m transformer train --data-dir ../shared/data/multi30k"}))
    assert "picture captions only" in captions and "Tatoeba" not in captions
    both = knows(M({"command": "python -m transformer train --data-dir m --data-dir ../shared/data/tatoeba"}))
    assert "everyday sentences" in both and TATOEBA_CREDIT in both
    room = {"command": "python -m transformer train --data-dir ../shared/data/tatoeba",
            "train_config": {"phrasebook": "data/phrasebook.txt,data/classroom"}}
    assert "`data/classroom/`)" in knows(M(room)) and "more_words" not in knows(M(room))
    room["train_config"]["phrasebook"] += ",data/more_words.tsv"
    assert "`data/classroom/`, `data/more_words.tsv`)" in knows(M(room))


def test_a_second_stages_sparse_timeline_shows_the_last_recorded_epoch_before_the_one_asked():
    from transformer.training import timeline
    from playground.views.timeline import translations_table

    rows = [{"epoch": e, "translations": [f"t{e}"] if e in (1, 2, 4, 120, 121) else []} for e in range(1, 122)]
    metrics = {"epochs": rows, "timeline_sources": ["a dog"]}
    assert [timeline.nearest_recorded(M(metrics), e) for e in (1, 3, 50, 120, 121)] == [1, 2, 4, 120, 121]
    table = translations_table(timeline.translations_at(M(metrics), 4), 4, 50)
    assert "after epoch 4 (the last recorded before 50)" in table and "t4" in table and "t121" in table


def test_a_text_is_cut_into_sentences_and_a_piece_without_words_stays_with_the_one_before():
    from transformer.translator import sentences

    assert sentences("Hi. How are you? Mr. Smith is here!") == ["Hi.", "How are you?", "Mr. Smith is here!"]
    assert sentences("A man rides a bike\u2066.\u2069") == ["A man rides a bike\u2066. \u2069"]  # bidi mark cut off
    assert sentences("?!... ,;:") and len(sentences("?!... ,;:")) == 1  # no words at all: one piece, translated
    assert sentences("  \n ") == []


def test_texts_cut_at_once_on_the_servers_threads_each_get_their_own_sentences():
    """A class's texts are cut on several threads at once: each gets its own sentences (a segmenter shared by the
    threads gave some texts another's sentences, or none: 13 of 200 here)."""
    import concurrent.futures
    from transformer.translator import sentences

    texts = [f"I have {i} cats. They sleep {i} hours. Mr. Smith met us." for i in range(400)]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        cut = list(pool.map(sentences, texts))
    assert cut == [[f"I have {i} cats.", f"They sleep {i} hours.", "Mr. Smith met us."] for i in range(400)]


def test_every_view_opens_with_at_most_two_plain_sentences_and_folds_the_rest():
    """A student who knows what attention is, and no more, reads the first lines: no section signs, paper names or
    hooks there; the mechanism and the references are folded below."""
    from transformer.translator import sentences
    from playground.explanations import EXPLAIN, folded

    research = ("§", "hook", "et al", "Vaswani", "BERT", "GPT", "ALTI", "Captum", "softmax", "eq.")
    for name, entry in EXPLAIN.items():
        plain = entry["plain"]
        assert len(sentences(plain)) <= 2, name
        assert not [w for w in research if w.lower() in plain.lower()], name
        assert entry["how"], name
    text = folded(EXPLAIN["steps"])
    assert text.count("<details>") == 2 and "How it works" in text and "References" in text


def test_the_schedule_text_counts_the_warm_ups_its_curve_shows():
    """Learning rate: the words name as many warm-ups (stages, and cycles within one) as the drawn curve climbs."""
    import json
    import re
    from pathlib import Path

    from playground.views.schedule import schedule_text
    from transformer.metrics import Metrics
    from transformer.training.schedule import checkpoint_schedule

    for metrics_file in sorted(Path("checkpoints").glob("*/metrics.json")):
        metrics = Metrics.from_dict(json.loads(metrics_file.read_text()))
        _, rates = checkpoint_schedule(metrics)
        low = 0.1 * max(rates)
        climbs = (rates[0] >= low) + sum(a < low <= b for a, b in zip(rates, rates[1:]))
        text = schedule_text(metrics)
        said = text.count("a warm-up over") + sum(int(n) - 1 for n in re.findall(r"in (\d+) cycles", text))
        assert said == climbs, (metrics_file, text)


def test_the_schedule_text_says_where_a_budgeted_runs_fall_began():
    """A budget's epoch count is set after two epochs at the held rate: a fall asked over more epochs than were
    left began below the peak, at once; the words say so, as the rates recorded at each epoch's end show."""
    from playground.views.schedule import schedule_text
    from transformer.metrics import Metrics
    from transformer.training.schedule import noam_lr

    peak = noam_lr(200, 256, 200, 0.2)

    def text(epochs: int, cooldown: int, shares: list[float]) -> str:  # the rate recorded at each epoch's end
        recipe = {"warmup": 200, "lr_scale": 0.2, "hold_peak": True, "epochs": epochs, "cooldown_epochs": cooldown}
        rows = [{"epoch": e, "step": 100 * e, "lr": f * peak} for e, f in enumerate(shares, start=1)]
        return schedule_text(Metrics(model_config={"d_model": 256}, train_config=recipe, epochs=rows))

    held_then_fell = text(5, 5, [1.0, 1.0, 0.4, 0.2, 0.0])  # the count set at epoch 2 left 3 of the 5 asked
    assert held_then_fell.endswith("held, then falling linearly from 60% of it to 0 over the last 3 epochs")
    assert text(8, 5, [1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2, 0.0]).endswith(
        "held, then falling linearly to 0 over the last 5 epochs")  # room for it
    assert text(5, 5, [0.8, 0.6, 0.4, 0.2, 0.0]).endswith(
        "held, then falling linearly to 0 over the last 5 epochs")  # the count as asked: it fell from the start
    # 10 asked, falling from the start; the count set after epoch 2 kept 5, and the fall went on more steeply
    assert text(5, 3.75, [0.9, 0.8, 8 / 15, 4 / 15, 0.0]).endswith(
        "held, then falling linearly to 0, more steeply after the second epoch (where a budget set the count)")
