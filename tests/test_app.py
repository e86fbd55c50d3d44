"""The app end to end: the UI builds, and the named API endpoints answer over HTTP (gradio_client)."""
from __future__ import annotations

import gc
import html
import itertools
import json
import re
import shutil
import socket
import threading
from urllib.parse import parse_qsl, urlsplit
from pathlib import Path

import gradio as gr
import psutil
import pytest
import torch
from gradio_client import Client

import app
from playground import registry
from playground.views.card import model_card
from playground.views.compare import model_choices
from transformer import Translator, save_checkpoint
from transformer.checkpoint import snapshot_epochs
from playground import context, doubts, links
from playground.figures import base
from playground.figures.maps import attention_figure, axis_tokens
from playground.views.ablation import every_head
from playground.views.common import token_changes
from playground.views.steps import step_view
from playground.view import View
from playground.views import CLASSES
from transformer.interpret import analyses
from transformer.interpret.capture import parse_head
from playground.pieces import METHOD_NAMES
from transformer.interpret.attribution import METHODS
from playground.context import Session, SharedCache
from transformer.decoding import DecodeOptions
from transformer.errors import InputError

from conftest import SHIPPED, figure, shipped_pairs

TEXT = "A man in a blue shirt is riding a bike down the street."


@pytest.fixture(scope="module")
def client(server):
    return Client(server, verbose=False)


def test_build_demo_without_launching(translators):
    demo = app.build_demo(translators)
    assert isinstance(demo, gr.Blocks)
    api = {dep.api_name for dep in demo.fns.values() if dep.api_name}
    assert {"translate", "attention"} <= api


def test_build_demo_reports_broken_checkpoints(tmp_path):
    (tmp_path / "en-de").mkdir()
    translators, problems = app.load_translators(tmp_path, "cpu")
    assert translators == {} and "en-de" in problems[0] and "retrain" in problems[0]
    assert isinstance(app.build_demo(translators, problems), gr.Blocks)  # the page still comes up


def test_the_model_card_of_a_third_stage_names_every_run_in_order(translator):
    metrics = {"command": "python -m transformer train --init-from c --source-noise 0.3", "hardware": "CPU",
               "train_wall_s": 600, "train_config": {"source_noise": 0.3, "epochs": 2},
               "epochs": [{"epoch": e, "step": e} for e in range(1, 6)],
               "first_stage": {"command": "python -m transformer train --data-dir ../shared/data/tatoeba",
                               "train_wall_s": 1200, "train_config": {"epochs": 1},
                               "first_stage": {"command": "python -m transformer train --data-dir m",
                                               "train_config": {"epochs": 3}}}}
    card = model_card(Translator(translator.model, translator.tokenizer, metrics, name="three"), "en-de")
    assert "3 stage(s):" in card
    assert ("1. epochs 1-3: `python -m transformer train --data-dir m`\n2. epoch 4, 20 minutes of steps: "
            "`python -m transformer train --data-dir ../shared/data/tatoeba`\n3. epoch 5, 10 minutes of steps on "
            "CPU: `python -m transformer train --init-from c --source-noise 0.3`") in card
    assert "everyday sentences, also typed without capitals or full stops." in card and "phrasebook" not in card
    assert "averaged" not in card and not card.rstrip().endswith("`.")  # no full stop standing alone after the list
    metrics["averaged_epochs"] = [4, 5]
    card = model_card(Translator(translator.model, translator.tokenizer, metrics, name="three"), "en-de")
    assert card.count("The weights are epochs 4, 5 averaged.") == 1
    metrics["averaged_epochs"] = [5]
    metrics["train_config"] |= {"phrasebook": "data/phrasebook.txt", "swap_names": 0.5, "byte_fallback": True,
                                "split_digits": True}
    card = model_card(Translator(translator.model, translator.tokenizer, metrics, name="four"), "en-de")
    assert "classroom phrasebook" in card and "names and numbers drawn anew" in card and "digit by digit" in card
    metrics["train_config"] |= {"phrasebook": "data/phrasebook.txt,data/classroom"}
    card = model_card(Translator(translator.model, translator.tokenizer, metrics, name="five"), "en-de")
    assert "classroom corpus" in card and "everyday words" in card and "classroom phrasebook" not in card


def test_every_number_in_the_views_texts_comes_from_the_checkpoint_or_the_settings(page):
    from playground.pieces import listed
    from transformer.model import Transformer, count_parameters
    from transformer.training import timeline
    from transformer.training.live import ToySettings

    pair = shipped_pairs()[0]
    tr = page.ctx.translator(pair)
    view = page.views["timeline"]
    text = view.explanation(tr)
    assert f"the {len(tr.metrics.timeline_sources)} examples" in text and "ten examples" not in text
    kept = timeline.snapshots(tr)
    assert f"after epoch{'s' if len(kept) > 1 else ''} {listed(kept)}." in text
    view = page.views["schedule"]
    text = view.explanation(tr)
    for stage, start, end in tr.metrics.stage_epochs():
        epochs = f"epoch {start}" if start == end else f"epochs {start}-{end}"
        assert f"{epochs}: a warm-up over {stage.train_config['warmup']:,} steps" in text
    toy = count_parameters(Transformer(ToySettings().model_config()))
    assert f"{toy:,} parameters" in page.views["live"].about.value and "a few thousand" not in page.views["live"].about.value
    card = model_card(tr, pair)
    assert "1 threads" not in card
    for stage, start, end in tr.metrics.stage_epochs():
        epochs = f"epoch {start}" if start == end else f"epochs {start}-{end}"
        assert f"{epochs}, {stage.train_wall_s / 60:.0f} minutes of steps on {stage.hardware}" in card


def test_int8_checkpoints_load_and_say_so_on_the_model_card(tmp_path, translator):
    save_checkpoint(tmp_path / "en-de", translator.model, translator.tokenizer)
    translators, problems = app.load_translators(tmp_path, "cpu", int8=True)
    tr = translators["en-de"]
    assert not problems and tr.precision == "int8"
    assert isinstance(tr.model.output, torch.ao.nn.quantized.dynamic.Linear)  # the loaded model really is int8
    out = tr.translate("a b c")
    assert out.target_tokens == tr.tokenizer.pieces(out.target_ids) and 0 < out.steps[0].prob <= 1
    card = model_card(tr, "en-de")
    fp32_total = sum(p.numel() for p in translator.model.parameters())
    int8_copy = translator.model.embed.table.weight.numel()  # the output projection's own int8 matrix
    assert "int8" in card and f"{fp32_total + int8_copy:,} parameters" in card


@pytest.mark.parametrize("strategy, extra", [("greedy", {}), ("sample", {"seed": 3, "temperature": 0.7}),
                                             ("beam", {"beam_size": 4})])
def test_translate_endpoint_with_each_strategy(client, strategy, extra):
    pair = shipped_pairs()[0]
    text, details = client.predict(TEXT, pair, strategy, api_name="/translate", **extra)
    assert isinstance(text, str) and len(text.split()) >= 3
    assert details["target_tokens"] and len(details["steps"]) >= len(details["target_tokens"])
    assert all(0 < s["prob"] <= 1 for s in details["steps"])


def test_translate_endpoint_defaults_and_repeatable_samples(client, translators):
    pair = shipped_pairs()[0]
    text, details = client.predict(TEXT, api_name="/translate")  # defaults: the first pair, greedy
    assert text == translators[pair].translate(TEXT, strategy="greedy").text
    assert [s["token"] for s in details["steps"]][: len(details["target_tokens"])] == details["target_tokens"]
    a = client.predict(TEXT, pair, "sample", 1.0, 0, 1.0, 11, api_name="/translate")[0]
    b = client.predict(TEXT, pair, "sample", 1.0, 0, 1.0, 11, api_name="/translate")[0]
    assert a == b  # one seed, one sample
    others = {client.predict(TEXT, pair, "sample", 1.5, 0, 1.0, seed, api_name="/translate")[0] for seed in range(4)}
    assert len(others) > 1  # other seeds at a high temperature really draw other samples


def test_translate_endpoint_switches_the_stutter_guard_and_says_what_it_removed(client, translators):
    pair = "en-fr" if "en-fr" in shipped_pairs() else shipped_pairs()[0]
    text = "I met Görsev at the station."  # a name the model does not know: where it may stutter
    for on in (True, False):
        out, details = client.predict(text, pair, api_name="/translate", stutter_guard=on)
        assert out == translators[pair].translate(text, stutter_guard=on).text
        steps = details["steps"]
        assert all((s["removed"] is not None) == s["guarded"] for s in steps)
        assert all(s["removed"][1] >= s["prob"] for s in steps if s["guarded"])  # it was the model's first choice
        assert on or not any(s["guarded"] for s in steps)


def test_translate_endpoint_says_what_the_page_says_under_the_translation(client, translators):

    pair = shipped_pairs()[0]
    for text in ("Ich habe morgen einen Mathetest.", "I love my dog 🐶", TEXT):
        out, details = client.predict(text, pair, api_name="/translate")
        tr, made = translators[pair], translators[pair].translate(text)
        said = [s for s in (doubts.carried(made), doubts.unfamiliar(tr, text)) if s] + doubts.warnings(tr, text, out)
        assert details["warnings"] == said
    assert any("German" in s for s in client.predict("Ich habe morgen einen Mathetest.", pair,
                                                       api_name="/translate")[1]["warnings"])
    assert any("🐶" in s for s in client.predict("I love my dog 🐶", pair, api_name="/translate")[1]["warnings"])


def test_translate_endpoint_translates_sentence_by_sentence_as_the_page_does(client, translators):
    from transformer.translator import MAX_SENTENCES

    pair = shipped_pairs()[0]
    parts = ["A man rides a bike.", "Two dogs play in the snow!", "Where is Mr. Smith?"]
    out, details = client.predict(" ".join(parts), pair, api_name="/translate")
    assert [s["sentence"] for s in details["sentences"]] == parts and details["left_out"] == 0
    made = [translators[pair].translate(p) for p in parts]
    assert out == " ".join(m.text for m in made)
    assert [s["target_tokens"] for s in details["sentences"]] == [m.target_tokens for m in made]
    assert details["target_tokens"] == made[0].target_tokens  # the top level: the first sentence's, as the views
    many = client.predict("Hello. " * (MAX_SENTENCES + 3), pair, api_name="/translate")[1]
    assert len(many["sentences"]) == MAX_SENTENCES and many["left_out"] == 3


def test_attention_endpoint_shapes_and_rows(client, translators):
    pair = shipped_pairs()[0]
    cfg = translators[pair].cfg
    maps = client.predict(TEXT, pair, api_name="/attention")
    S, T = len(maps["source_tokens"]), len(maps["target_tokens"])
    expected = {"encoder": (cfg.n_encoder_layers, cfg.n_heads, S, S), "decoder": (cfg.n_decoder_layers, cfg.n_heads, T, T),
                "cross": (cfg.n_decoder_layers, cfg.n_heads, T, S)}
    for kind, shape in expected.items():
        t = torch.tensor(maps[kind])
        assert tuple(t.shape) == shape
        torch.testing.assert_close(t.sum(-1), torch.ones(shape[:-1]), atol=1e-3, rtol=0)
    assert maps["target_tokens"][0] == "<s>" and maps["source_tokens"][-1] == "</s>"


def test_attention_endpoint_reads_the_sentence_asked_for(client):
    pair = shipped_pairs()[0]
    parts = ["A man rides a bike.", "Two dogs play in the snow!"]
    details = client.predict(" ".join(parts), pair, api_name="/translate")[1]["sentences"]
    for i, part in enumerate(parts):
        maps = client.predict(" ".join(parts), pair, sentence=i, api_name="/attention")
        assert maps["sentence"] == part and maps["sentences"] == 2
        assert maps["source_tokens"] == details[i]["source_tokens"]  # that sentence alone, as /translate read it
        assert maps["target_tokens"] == ["<s>"] + details[i]["target_tokens"]  # its greedy translation, fed in
    first = client.predict(" ".join(parts), pair, api_name="/attention")
    assert first["source_tokens"] == details[0]["source_tokens"]  # no sentence given: the first, as the views
    for wrong in (2, -1):
        with pytest.raises(Exception, match="this text has 2, so 0 to 1") as e:
            client.predict(" ".join(parts), pair, sentence=wrong, api_name="/attention")
        assert "Traceback" not in str(e.value)


@pytest.mark.parametrize("args, message", [(("",), "no text"), (("Hi", "xx-yy"), "unknown language pair"),
                                           (("Hi", None, "beam", 1.0, 0, 1.0, 0, 1000), "beam_size")])
def test_api_errors_are_plain_messages(client, args, message):
    args = tuple(shipped_pairs()[0] if a is None else a for a in args)
    with pytest.raises(Exception, match=message):
        client.predict(*args, api_name="/translate")


def test_every_view_builds_from_one_translation(translators):
    pair = shipped_pairs()[0]
    t = translators[pair]
    result = context.run(t, pair, TEXT, DecodeOptions("beam", beam_size=3))
    for kind in ("encoder", "decoder", "cross"):
        for mode in ("single", "heads", "all"):
            fig = attention_figure(result, kind, 0, "average" if mode == "single" else "0", mode)
            assert len(fig.data) == {"single": 1, "heads": t.cfg.n_heads,
                                     "all": t.cfg.n_heads * getattr(result.maps, kind).size(0)}[mode]
    step = step_view(result, 2)
    assert list(step.data[0].x) == [p for _, p in result.translation.steps[2].alternatives]  # its top-5 bars
    assert list(step.data[1].x) == base.labels(result.maps.source_tokens)  # the cross row over the source
    every_cross = [parse_head(f"cross:{i}:{h}") for i in range(t.cfg.n_decoder_layers) for h in range(t.cfg.n_heads)]
    after = analyses.ablated(t, result.text, result.options, every_cross)
    assert after.text != result.translation.text  # without any cross-attention the source is invisible
    old, new = token_changes(result.translation.target_tokens, after.target_tokens)
    assert [t for t, _ in old] == result.translation.target_tokens and any(c for _, c in old + new)
    card = model_card(t, pair)
    assert f"{sum(p.numel() for p in t.model.parameters()):,}" in card


# -----------------------------------------------------------------------------
# The views' handlers, called directly: no server, no HTTP


@pytest.fixture(scope="module")
def page(translators):
    return app.build_page(translators)


def defaults(page) -> dict:
    """What the page holds before anyone touches it: every input component's initial value, the states included."""
    inputs = set(page.panel.controls) | {c for v in page.views.values() for c in v.controls + v.pair_inputs}
    return {c: c.value for c in inputs | {page.result}}


def after(values: dict, out: dict) -> dict:
    """What the page holds once an event's outputs have landed: the new values, the states' too."""
    update = lambda u: isinstance(u, dict) and u.get("__type__") == "update"
    return values | {c: u["value"] if update(u) else u for c, u in out.items() if not update(u) or "value" in u}


def traces(value) -> list[dict]:
    """The traces of a figure as the page receives it (a drawn view is sent as plotly's JSON), or in an update."""
    value = value["value"] if isinstance(value, dict) else value
    return json.loads(value.plot)["data"] if hasattr(value, "plot") else value.to_plotly_json()["data"]


class User:
    """What the handlers read of gr.Request: the browser session (its page lives on the server, page.sessions)."""

    def __init__(self, session_hash: str):
        self.session_hash = session_hash


def notice(out: dict, view) -> str:
    """The failure a view says above its words in these updates ("" when it says none)."""
    update = out.get(view.about)
    text = update.get("value") or "" if isinstance(update, dict) else update or ""
    found = re.search(r'<div class="problem">(.*?)</div>', text, re.S)
    return found.group(1).strip() if found else ""


def open_tab(page, name: str, values: dict, user: User | None = None) -> dict:
    """What the tab's select event (or its signal, after a translation) sends."""
    return page.tab_drawer(name, registry.entry(name).group)(values, user)


# every view of the registry that draws a translation (its own `fill` or `figures`), found there: a new one is in
DRAWN_BY_TRANSLATION = {key for key, entry in registry.BY_KEY.items() if entry.inside is None and (
    CLASSES[key].fill is not View.fill or CLASSES[key].figures)}


def test_a_translation_draws_the_open_tab_and_every_other_tab_when_it_is_opened(page):
    user = User("every-tab")
    values = defaults(page) | {page.panel.strategy: "beam", page.panel.text: "A girl in a red coat feeds a dog."}
    out = page.show_translation(values, user)
    glance = set(page.views["glance"].draws) - {page.views["glance"].about}  # its words: sent only when they change
    assert set(out) == set(page.panel.outputs) | {page.result} | glance  # the open tab, nothing else
    result, session = out[page.result], page.sessions.of(user)
    assert out[page.panel.translation] == result.translation.text and result.options.strategy == "beam"
    values = after(values, out)
    for name in DRAWN_BY_TRANSLATION - {"glance"}:
        view = page.views[name]
        opened = open_tab(page, name, values, user)
        assert set(view.outputs) <= set(opened) and session.shown[name]["fill"] == result.key, name
        below = set(page.views["beam_tree"].draws) if name == "steps" else set()  # drawn in the same tab
        group = registry.entry(name).group
        assert session.tab == name and (group is None or session.group_tab[group] == name)  # which view is open
        assert not set(opened) - set(view.draws) - below, name  # this tab's components only
        values = after(values, opened)
        assert open_tab(page, name, values, user) == {}, name  # seen before: nothing is drawn or sent again
    assert "srcdoc" in after(values, open_tab(page, "bertviz", defaults(page) | {page.result: result}))[
        page.views["bertviz"].html]
    attention = page.views["attention"]
    fig = figure(attention.redraw(result, "encoder", 1, "average", "heads")[attention.plot])
    assert len(fig.data) == page.ctx.translator(result.pair).cfg.n_heads
    steps = page.views["steps"]
    assert "Step 2" in figure(steps.redraw(result, 2)[steps.detail]).layout.title.text
    other = User("group-tab")
    page.sessions.of(other).group_tab["looks"] = "rollout"  # the view the user last opened in the group
    opened = page.tab_drawer(None, "looks")(defaults(page) | {page.result: result}, other)
    assert page.views["rollout"].plot in opened and page.views["inside"].plot not in opened  # its open inner tab
    assert page.sessions.of(other).tab == "rollout"


def test_a_figure_is_saved_under_its_views_name_and_its_sentence(page):
    """The camera button of every drawn figure saves it as view-sentence.png, not plotly's newplot.png; a menu's
    redraw too."""
    user, values = User("file-names"), defaults(page) | {page.panel.text: "Two dogs run on the beach!"}
    values = after(values, page.show_translation(values, user))
    attention = page.views["attention"]
    config = lambda sent: json.loads(sent.plot)["config"]["toImageButtonOptions"]["filename"]  # noqa: E731
    assert config(open_tab(page, "attention", values, user)[attention.plot]) == "attention-two-dogs-run-on-the-beach"
    assert config(attention.redraw(values[page.result], "encoder", 0, "average", "single")[attention.plot]) == \
        "attention-two-dogs-run-on-the-beach"
    steps = open_tab(page, "steps", values, user)[page.views["steps"].probs]
    assert config(steps) == "steps-two-dogs-run-on-the-beach"


def test_a_failure_is_shown_but_never_cached_and_the_view_draws_once_it_works(page, monkeypatch):
    user = User("a-failure")
    values = defaults(page) | {page.panel.text: "A man rides a horse on the beach."}
    values = after(values, page.show_translation(values, user))
    families = page.views["families"]
    original = families.fill
    monkeypatch.setattr(families, "fill", lambda result, values: (_ for _ in ()).throw(OSError("disk gone")))
    broken = open_tab(page, "families", values, user)
    assert "OSError" in notice(broken, families)
    assert page.sessions.of(user).shown["families"]["fill"] is None
    monkeypatch.setattr(families, "fill", original)  # the file is back: the next look draws the view
    mended = open_tab(page, "families", after(values, broken), user)
    assert families.about in mended and not notice(mended, families) and families.plot in mended


def test_one_parts_failure_stays_visible_when_the_other_part_draws(page, monkeypatch):
    user, values = User("one-part-fails"), defaults(page) | {page.panel.text: "Two girls sing on a stage."}
    attention = page.views["attention"]
    monkeypatch.setattr(page.ctx.caches, "views", SharedCache(64))  # nothing drawn yet for anyone
    monkeypatch.setattr(attention, "on_pair", lambda translator, pair, values: (_ for _ in ()).throw(
        InputError("the layer list is broken")))
    page.sessions.of(user).tab = "attention"  # the open tab: signalled by the translation, then drawn
    translated = page.show_translation(values, user)
    assert page.tabs.signal in translated and attention.plot not in translated
    out = open_tab(page, "attention", after(values, translated), user)
    assert attention.plot in out  # the map drew
    assert "the layer list is broken" in notice(out, attention)
    assert page.sessions.of(user).shown["attention"] == {"pair": None, "fill": translated[page.result].key, "notice": True,
                                                         "language": "en"}


def test_late_answers_for_an_older_translation_are_dropped(page, monkeypatch):
    user = User("late-answers")
    values = defaults(page) | {page.panel.text: "A dog catches a ball."}
    run = context.run

    def newer_asked_meanwhile(*args, **kwargs):  # the user clicks Translate again while this one runs
        page.sessions.of(user).ask()
        return run(*args, **kwargs)

    monkeypatch.setattr(context, "run", newer_asked_meanwhile)
    assert page.show_translation(values, user) == {}  # it would overwrite the newer one: dropped
    monkeypatch.setattr(context, "run", run)
    old = page.show_translation(values, user)[page.result]
    new = page.show_translation(values | {page.panel.text: "A cat sleeps."}, user)[page.result]
    stale_values = defaults(page) | {page.result: old}  # a tab opened before the newer translation came back
    late = page.tab_drawer("rollout", "looks")(stale_values, user)  # drawn from the newest, which the page now holds
    session = page.sessions.of(user)
    assert late and session.shown["rollout"]["fill"] == new.key and session.tab == "rollout"
    assert page.tab_drawer("rollout", "looks")(defaults(page) | {page.result: new}, user) == {}  # shown already
    other = User("someone else")
    assert page.tab_drawer("rollout", "looks")(stale_values, other)  # others unaffected
    assert page.sessions.of(other).shown["rollout"]["fill"] == old.key


def test_a_tab_opened_while_a_newer_translation_lands_draws_the_newer_one(page, monkeypatch):
    user, text = User("lands-meanwhile"), page.panel.text
    old = page.show_translation(defaults(page) | {text: "A dog catches a ball."}, user)[page.result]
    draw, landed = page.draw, []

    def landing_meanwhile(session, tab, result, values, views=None):  # the user's newer translation lands while
        # the tab draws
        if not landed:
            monkeypatch.setattr(page, "draw", draw)
            landed.append(page.show_translation(defaults(page) | {text: "A cat sleeps on a sofa."}, user)[page.result])
            monkeypatch.setattr(page, "draw", landing_meanwhile)
        return draw(session, tab, result, values, views)

    monkeypatch.setattr(page, "draw", landing_meanwhile)
    opened = page.tab_drawer("rollout", "looks")(defaults(page) | {page.result: old}, user)
    assert landed and opened and page.sessions.of(user).shown["rollout"]["fill"] == landed[0].key != old.key


def test_a_control_changed_while_its_tab_draws_leaves_that_view_to_its_own_handler(page, monkeypatch):
    """The visitor changes Heatmaps' kind while the Attention tab draws with the old one: that drawing, sent after the
    kind's own (newer) picture, would put the old kind back, so it sends nothing of Heatmaps and marks nothing."""
    user, attention = User("changes-meanwhile"), page.views["attention"]
    result = page.show_translation(defaults(page) | {page.panel.text: "A dog catches a ball."}, user)[page.result]
    draw = page.draw

    def changed_meanwhile(session, tab, result, values, views=None):
        attention.redraw(result, "encoder", 1, "average", "heads")  # the kind's own event begins meanwhile
        return draw(session, tab, result, values, views)

    monkeypatch.setattr(page, "draw", changed_meanwhile)
    opened = open_tab(page, "attention", defaults(page) | {page.result: result}, user)
    assert not set(opened) & set(attention.draws) and "attention" not in page.sessions.of(user).shown
    monkeypatch.setattr(page, "draw", draw)  # nothing changed while it draws: drawn and marked
    opened = open_tab(page, "attention", defaults(page) | {page.result: result}, user)
    assert attention.plot in opened and page.sessions.of(user).shown["attention"]["fill"] == result.key


def test_a_view_of_an_older_translation_draws_nothing_once_the_newest_is_gone():
    class Drawn:  # what Newest reads of a context.Result
        def __init__(self, key: str):
            self.key = key

    session, old, new = Session("glance"), Drawn("old"), Drawn("new")
    session.land(session.ask(), new)
    assert session.newest(old) is new and session.newest(new) is new
    del new
    gc.collect()
    assert session.newest(old) is None  # too late, and the newest is no longer kept: nothing to draw
    assert Session("glance").newest(old) is old and session.newest(None) is None  # another user: their own


def test_next_walks_the_lesson_through_every_step_whose_figure_reads_another_derived_pass(page):
    """A Lesson step is derived from the translation (Result.derived) and some steps read another derived pass (the
    Q/K/V internals, the padded batch) while they are made: Next goes through all ten, each once."""
    lesson = page.views["lesson"]
    result = page.show_translation(defaults(page) | {page.panel.text: "A woman reads a book on a train."})[page.result]
    walked = []

    def walk():
        for number in range(1, 10):
            walked.append(lesson.go(result, number, +1)[lesson.number])

    walker = threading.Thread(target=walk, daemon=True)
    walker.start()
    walker.join(timeout=120)
    assert not walker.is_alive() and walked == list(range(2, 11))  # none waits on another forever
    assert lesson.made_step(result, 5) is lesson.made_step(result, 5)  # made once, kept with the translation


def test_the_same_translation_is_computed_once_for_everyone(page):
    values = defaults(page) | {page.panel.text: "Three boys jump into a lake."}
    misses = page.ctx.caches.translations.misses
    first, second = page.show_translation(values), page.show_translation(values)
    assert first[page.result] is second[page.result] and page.ctx.caches.translations.misses == misses + 1
    third = page.show_translation(values | {page.panel.text: "Three boys jump into a river."})
    assert third[page.result] is not first[page.result]


def test_samples_side_by_side_and_the_comparison(page):
    panel = page.panel
    values = defaults(page) | {panel.strategy: "sample", panel.n_samples: 3, panel.seed: 4}
    out = page.show_translation(values)
    assert out[panel.samples].count('class="card"') == 3
    pair, text = values[panel.pair], values[panel.text]
    html = panel.compare(pair, text, *(values[c] for c in panel.decoding))[panel.comparison]
    assert html.count('class="card"') == 3 and "beam search (k=4)" in html
    assert f"Compared for “{text}”, {page.ctx.label(pair)}" in html  # the cards say which sentence they show


def test_handlers_turn_bad_input_into_a_plain_message(page):
    with pytest.raises(gr.Error, match="translate a sentence first"):
        page.views["steps"].redraw(None, 0)
    with pytest.raises(gr.Error, match="tick at least one head"):
        page.views["ablation"].run(page.show_translation(defaults(page))[page.result], [])
    assert "top_p must be" in page.show_translation(defaults(page) | {page.panel.top_p: 0.0})[page.panel.notice]


def test_an_unexpected_error_is_logged_with_its_traceback_and_shown_in_a_sentence(caplog):
    from playground.view import to_page

    @to_page
    def broken():
        raise RuntimeError("disk on fire")

    with caplog.at_level("ERROR", logger="transformer-playground"), pytest.raises(gr.Error) as e:
        broken()
    assert "RuntimeError" in str(e.value) and "disk on fire" not in str(e.value)  # no internals in the page
    assert caplog.records[0].exc_info and "disk on fire" in caplog.text  # the server log has them
    caplog.clear()

    @to_page
    def library_value_error():
        return int("not a number")  # a ValueError nobody raised for the user: a bug, so logged

    @to_page
    def bad_input():
        raise InputError("choose a head from 0 to 3")

    with caplog.at_level("ERROR", logger="transformer-playground"):
        with pytest.raises(gr.Error, match="Something went wrong \\(ValueError\\)"):
            library_value_error()
        assert len(caplog.records) == 1 and caplog.records[0].exc_info
        with pytest.raises(gr.Error) as shown:
            bad_input()
        assert shown.value.message == "choose a head from 0 to 3"
        assert len(caplog.records) == 1  # the message meant for the user is not logged as an error


def test_choosing_a_pair_redraws_the_open_tab_and_the_others_when_opened(page, translators):
    pair = shipped_pairs()[-1]
    schedule = page.views["schedule"]
    user, values = User("another-pair"), defaults(page) | {page.panel.pair: pair, schedule.curves: [(512, 4000)]}
    page.sessions.of(user).tab = "schedule"
    out = page.show_translation(values, user)  # another pair translates again, and the open tab follows
    assert out[page.panel.translation] == translators[pair].translate(values[page.panel.text]).text
    assert page.tabs.signal in out  # the open tab is told to draw itself: the event it runs
    out = open_tab(page, "schedule", after(values, out), user)
    names = [t["name"] for t in traces(out[schedule.noam])]
    assert names == ["d_model=512, warmup=4000", f"this checkpoint ({pair}): as trained"]
    assert page.views["card"].card not in out  # not open: drawn when it is
    card = open_tab(page, "card", after(values, out), user)
    assert f"{pair.upper()} checkpoint" in card[page.views["card"].card]
    added = schedule.add_curve(pair, [(512, 4000)], 256, 800)
    assert added[schedule.curves] == [(512, 4000), (256, 800)] and len(figure(added[schedule.noam]).data) == 3


class Request(User):
    """What page.open reads from gr.Request: the page URL's query parameters, and its session."""

    OPENED = itertools.count()  # each page opened a session of its own (an id() is reused once its object is gone)

    def __init__(self, **query):
        super().__init__(f"opened-{next(Request.OPENED)}")
        self.query_params = query


def on_load(page) -> dict:
    """What the page's load event receives: the inputs' initial values."""
    return defaults(page)


def test_the_load_event_reads_and_sets_only_what_the_first_tab_shows(page):
    """Gradio builds every output of an event anew for each visitor, one left as it is too: the load event lists
    the panel and the first tab's views, and a link's own view is drawn by the next event."""
    load = next(fn for fn in page.demo.fns.values() if any(event == "load" for _, event in fn.targets))
    outputs, inputs = set(load.outputs), set(load.inputs)
    set_by_load = {key for key, view in page.views.items() if outputs & set(view.draws)}
    read_by_load = {key for key, view in page.views.items() if inputs & set(view.reads)}
    assert set_by_load == set(registry.tabs()[registry.FIRST])
    assert read_by_load <= set_by_load  # ?lesson=N: its step kept in the visitor's session, read as the Lesson opens
    assert set(page.panel.outputs) <= outputs and page.result in outputs and page.tabs.top in outputs
    assert page.classroom.said in outputs and page.classroom.member in inputs  # ?class=CODE joins the class
    translate = next(fn for fn in page.demo.fns.values() if (page.panel.go._id, "click") in map(tuple, fn.targets))
    first = {c for key in registry.tabs()[registry.FIRST] for c in page.views[key].draws}
    # any other open tab is signalled, and draws itself; the translation knows nothing of a class: a student's
    # sentence is sent by an event of its own after it
    assert set(translate.outputs) == set(page.panel.outputs) | {page.result, page.tabs.signal} | first
    assert set(translate.inputs) == set(page.panel.controls) | {page.result}


def test_the_page_opens_translated_with_a_shared_links_settings(page):
    pair = shipped_pairs()[-1]
    panel = page.panel
    request = Request(pair=pair, text="Two dogs run on the beach.", strategy="beam", beam_size="3",
                      length_penalty="0.6", stutter_guard="0", present="1")
    out = page.load(on_load(page), request)
    assert out[panel.pair] == pair and out[panel.text] == "Two dogs run on the beach." and out[panel.present] is True
    result = out[page.result]
    assert result.pair == pair and result.options.beam_size == 3 and result.options.length_penalty == 0.6
    assert out[panel.stutter_guard] is False and result.options.stutter_guard is False
    assert out[panel.translation] == result.translation.text != ""
    assert page.sessions.of(request).shown["glance"]["fill"] == result.key
    assert "<svg" in out[page.views["glance"].picture]
    tree = open_tab(page, "steps", after(on_load(page), out), request)
    assert traces(tree[page.views["beam_tree"].plot]) and tree[page.views["beam_tree"].note] == ""
    heads = open_tab(page, "ablation", after(on_load(page), out), request)[page.views["ablation"].heads]
    assert heads["choices"] == every_head(page.ctx.translator(pair))  # the link's pair's heads
    plain = page.load(on_load(page), Request())  # no link: the first example, greedy
    assert plain[page.result].text == defaults(page)[panel.text] and plain[page.result].options.strategy == "greedy"
    assert plain[panel.present] is False and panel.text not in plain  # the link changes nothing: nothing is set
    typed = page.load(on_load(page) | {panel.text: "My cat sleeps."}, Request(present="1"))  # typed as it opened
    assert panel.text not in typed and typed[page.result].text == "My cat sleeps."  # kept, and translated
    early = Request()  # Translate clicked, and answered, before the page's load event was
    clicked = page.show_translation(on_load(page) | {panel.text: "My cat sleeps."}, early)
    late = page.load(on_load(page), early)
    assert page.result not in late and panel.translation not in late and panel.text not in late  # the click's stays
    assert page.sessions.of(early).landed() is clicked[page.result]  # the views still draw the click's
    assert "greedy" in open_tab(page, "steps", after(on_load(page), plain))[page.views["beam_tree"].note]


def test_a_links_lesson_step_is_the_visitors_own_where_the_lesson_is_built_and_shared_again(page):
    """?lesson=N: the step is kept in the visitor's session, the Lesson built for them starts there, Back and Next
    move it, and "Link to this" writes the step shown (the Lesson is built for each visitor who opens it)."""
    request = Request(lesson="4", text="A dog runs.")
    out = page.load(on_load(page), request)
    session, lesson = page.sessions.of(request), page.views["lesson"]
    assert session.lesson_step == 4 and session.tab == "lesson" and out[page.tabs.top].selected == "lesson"
    lesson.starting_from(session)
    assert lesson.number.value == 4  # what a Lesson built for this visitor shows first
    assert lesson.go(out[page.result], 4, +1, request)[lesson.number] == 5 and session.lesson_step == 5
    link = page.share(after(on_load(page), out) | {page.panel.link: "http://10.0.0.2:7860/"}, request)
    assert "lesson=5" in link[page.panel.link]["value"]
    assert page.sessions.of(Request()).lesson_step == 1  # another visitor: the first step


@pytest.mark.parametrize("query, says", [
    (dict(pair="xx-yy"), "pair 'xx-yy' is not loaded here"),
    (dict(beam_size="99", strategy="beam"), "beam_size must be a whole number from 1 to 16; got 99)"),
    (dict(lesson="3", view="nope"), "view='nope' is not a view of this page"),  # beside a lesson too
    (dict(temperature="hot"), "temperature='hot' is not a number"),
    (dict(stutter_guard="maybe"), "stutter_guard='maybe' was left out (stutter_guard must be 1 or 0, for on or off"),
])
def test_a_bad_shared_link_still_opens_the_page_and_says_why(page, query, says):
    out = page.load(on_load(page), Request(**query))
    assert says in out[page.panel.notice]
    assert out.get(page.panel.pair, on_load(page)[page.panel.pair]) in page.ctx.pairs  # a loaded pair, as it was


def test_a_share_link_made_on_this_machine_names_the_address_the_class_can_open(page, monkeypatch):
    panel, lesson = page.panel, page.views["lesson"]
    values = defaults(page) | {panel.text: "Two dogs & a cat?", panel.strategy: "beam", panel.present: False,
                               panel.stutter_guard: False}
    public = "http://192.168.1.20:7860/"
    made_here = links.write("http://127.0.0.1:7860/?old=1#x", values, panel, "lesson", 7, public)
    assert made_here.startswith(public + "?") and "lesson=7" in made_here and "strategy=beam" in made_here
    assert "stutter_guard=0" in made_here
    back = links.read(dict(parse_qsl(urlsplit(made_here).query)), defaults(page), panel, lesson).values
    assert back[panel.text] == "Two dogs & a cat?" and back[panel.stutter_guard] is False  # as typed, as set
    opened_elsewhere = links.write("https://class.example.org/app/", values, panel, "rollout", 1, public)
    assert opened_elsewhere.startswith("https://class.example.org/app/?") and "view=rollout" in opened_elsewhere
    assert links.write("http://localhost:7860/", values, panel, "glance", 1, None).startswith("http://localhost:7860/?")

    class Interface:
        def __init__(self, address, family=socket.AF_INET):
            self.address, self.family = address, family

    up = lambda on: type("Stats", (), {"isup": on})()  # noqa: E731
    monkeypatch.setattr(psutil, "net_if_stats", lambda: {"lo": up(True), "eth0": up(False), "wlan0": up(True)})
    monkeypatch.setattr(psutil, "net_if_addrs", lambda: {
        "lo": [Interface("127.0.0.1")], "eth0": [Interface("10.0.0.5")],  # down: not this one
        "wlan0": [Interface("fe80::1", socket.AF_INET6), Interface("169.254.3.3"), Interface("192.168.1.20")]})
    assert links.network_address(7860) == public
    args = app.parse_args(["--host", "0.0.0.0"])
    assert app.public_address(args) == (public, f"The class's phones on this network open: {public}")
    assert app.public_address(app.parse_args([]))[0] is None  # 127.0.0.1: no other machine can open it
    assert app.public_address(app.parse_args(["--public-url", "https://x.org/"]))[0] == "https://x.org/"
    # what start-up says instead of gradio's lines: an address a browser here opens, the class's, a public link's flag
    said = app.said_at_start(args, app.public_address(args)[1], None)
    assert said[0] == "Open it on this machine: http://127.0.0.1:7860/" and public in said[1] and "--share" in said[2]
    assert "0.0.0.0" not in " ".join(said) and "launch()" not in " ".join(said)


def test_a_link_reopens_the_sentence_the_views_showed(page):
    panel = page.panel
    text = "A dog runs. Two girls laugh in the park. It is raining."
    values = defaults(page) | {panel.text: text, panel.which: 1, panel.present: False}  # the menu: the second
    url = links.write("http://127.0.0.1:7860/", values, panel, "glance", 1)
    assert "sentence=2" in url  # counted from 1, as the menu counts
    assert "sentence" not in links.write("http://127.0.0.1:7860/", values | {panel.which: 0}, panel, "glance", 1)
    out = page.load(on_load(page), Request(**dict(parse_qsl(urlsplit(url).query))))
    assert out[page.result].text == "Two girls laugh in the park." and out[panel.which]["value"] == 1
    assert "show sentence 2" in out[panel.notice]
    assert "was left out" in page.load(on_load(page), Request(text=text, sentence="²"))[panel.notice]  # no crash
    bad = page.load(on_load(page), Request(text=text, sentence="zero"))
    assert "sentence='zero' was left out" in bad[panel.notice] and bad[page.result].text == "A dog runs."
    beyond = page.load(on_load(page), Request(text=text, sentence="9"))  # past the text's sentences: the first
    assert beyond[page.result].text == "A dog runs."


def test_a_link_with_one_bad_parameter_keeps_every_other_one(page):
    query = {"strategy": "beam", "beam_size": "99", "length_penalty": "1.5", "temperature": "hot", "view": "rollout"}
    link = links.read(query, on_load(page), page.panel, page.views["lesson"])
    values, problems, panel = link.values, link.problems, page.panel
    assert link.tab == "rollout" and not link.present
    assert (values[panel.strategy], values[panel.length_penalty], values[panel.beam_size]) == ("beam", 1.5, 4)
    assert len(problems) == 2 and "temperature='hot' is not a number" in problems
    assert any(p.startswith("beam_size='99' was left out (beam_size must be a whole number") for p in problems)


def test_an_empty_source_is_answered_where_the_translation_goes_and_the_views_keep_their_translation(page):
    values = after(defaults(page), page.show_translation(defaults(page) | {page.panel.text: "A dog runs."}))
    out = page.show_translation(values | {page.panel.text: "  \n "})
    assert out.pop(page.panel.which)["visible"] is False  # no sentences to choose among
    assert out == {page.panel.translation: app.EMPTY, page.panel.samples: "",
                   page.panel.notice: "The box is empty: the pictures below still show the last sentence translated, "
                                      "“A dog runs.”."}
    opened = page.load(on_load(page), Request(text="   "))  # a link with no text still opens, and says so
    assert opened[page.panel.translation] == app.EMPTY


def test_several_sentences_are_translated_one_at_a_time_and_joined_with_a_note(page):
    tr, panel = page.ctx.translator("en-de"), page.panel
    text = "Mr. Smith walks his dog. It is raining!  Two girls laugh."
    out = page.show_translation(defaults(page) | {panel.text: text})
    parts = ["Mr. Smith walks his dog.", "It is raining!", "Two girls laugh."]
    assert out[panel.translation] == " ".join(tr.translate(p).text for p in parts)
    assert "Translated as 3 sentences, one at a time" in out[panel.notice]
    assert out[page.result].text == parts[0]  # the views show the first, and the note says which
    assert "the views below show sentence 1, “Mr. Smith walks his dog.”" in out[panel.notice]
    menu = out[panel.which]
    assert menu["visible"] and menu["value"] == 0 and [c for c, _ in menu["choices"]] == [
        f"{i + 1}. {p}" for i, p in enumerate(parts)]
    picked = page.show_sentence(defaults(page) | {panel.text: text, panel.which: 2})  # the third chosen in the menu
    assert picked[page.result].text == parts[2] and picked[panel.which]["value"] == 2
    assert picked[panel.translation] == out[panel.translation]  # the box as it was: every sentence, in order
    assert "show sentence 3, “Two girls laugh.”" in picked[panel.notice]
    alone = page.show_sentence(defaults(page) | {panel.text: "A dog runs.", panel.which: 2})  # a menu now too long
    assert alone[page.result].text == "A dog runs." and alone[panel.which]["visible"] is False
    later = page.show_translation(defaults(page) | {panel.text: "A dog runs. Ich habe morgen einen Mathetest."})
    assert "looks like German" in later[panel.notice]  # what is said under a later sentence is said too
    many = page.show_translation(defaults(page) | {panel.text: "A dog runs. " * 25})
    assert "the 5 after the first 20 were left out" in many[panel.notice]
    assert many[panel.translation].count(" ") >= 19  # twenty translations joined
    long = page.show_translation(defaults(page) | {panel.text: "A man rides a bike " * 20 + "home. Two girls laugh."})
    named = re.search(r"show sentence 1, “([^”]*)”", long[panel.notice]).group(1)
    assert len(named) == 80 and named.endswith("…") and named.startswith("A man rides a bike")  # cut, not all of it


def test_with_sampling_the_box_is_sample_1_of_those_drawn(page):
    panel = page.panel
    values = defaults(page) | {panel.text: "A dog runs in the park.", panel.strategy: "sample", panel.seed: 5,
                               panel.n_samples: 3}
    out = page.show_translation(values)
    first = re.search(r"sample 1 of 3 \(seed 5\): the translation above</[^>]+>\s*<[^>]+>([^<]*)<", out[panel.samples])
    assert first and html.unescape(first.group(1)) == out[panel.translation]
    assert out[panel.translation] == page.ctx.translator("en-de").translate("A dog runs in the park.", strategy="sample", seed=5).text


def test_bad_settings_are_said_in_the_notice_and_gone_with_the_next_good_translation(page):
    values = defaults(page) | {page.panel.text: "A dog runs.", page.panel.max_len: 999}
    bad = page.show_translation(values)
    assert "max_len must be a whole number" in bad[page.panel.notice] and bad[page.panel.translation] == ""
    good = page.show_translation(values | {page.panel.max_len: 0})
    assert good[page.panel.notice] == "" and good[page.panel.translation]


def corrupt_snapshot(folder: Path) -> None:
    (folder / "timeline" / "epoch1.safetensors").write_bytes(b"not a safetensors file")


def drop_timeline_sources(folder: Path) -> None:
    metrics = json.loads((folder / "metrics.json").read_text())
    del metrics["timeline_sources"]
    (folder / "metrics.json").write_text(json.dumps(metrics))


@pytest.mark.parametrize("damage, says", [(corrupt_snapshot, "git checkout -- "),
                                          (drop_timeline_sources, "not their sources (timeline_sources)")])
@pytest.mark.slow
def test_a_broken_view_says_so_in_its_own_tab_and_the_rest_of_the_page_works(tmp_path, damage, says):
    pair = shipped_pairs()[0]
    shutil.copytree(SHIPPED / pair, tmp_path / pair)
    damage(tmp_path / pair)
    translators, problems = app.load_translators(tmp_path, "cpu")
    assert not problems  # the model itself is fine: only the timeline view needs the damaged file
    page = app.build_page(translators, problems)
    out = page.load(on_load(page), Request())
    assert out[page.panel.translation] == out[page.result].translation.text != ""  # the page opened, translated
    values = after(on_load(page), out)
    timeline = page.views["timeline"]
    broken = open_tab(page, "timeline", values)
    assert says in notice(broken, timeline)
    # Compare models opens on the earliest snapshot when the timeline keeps no later one: then it needs the file too
    needs = {"timeline", "used"} | ({"compare"} if damage is corrupt_snapshot and snapshot_epochs(tmp_path / pair) == [1]
                                    else set())
    for name in registry.tabs():  # every other view draws, and says nothing is wrong (used: below)
        if name not in needs:
            opened = open_tab(page, name, values)
            view = page.views[name]
            assert not notice(opened, view), name
    card = open_tab(page, "card", values)
    assert f"{pair.upper()} checkpoint" in card[page.views["card"].card]
    used = page.views["used"]  # its lens over training needs the snapshots; the rest of it does not
    drawn = open_tab(page, "used", values)
    assert drawn[used.attributions] is not None
    if damage is corrupt_snapshot:
        assert says in notice(drawn, used)
        if "compare" in needs:
            compare = page.views["compare"]
            opened = open_tab(page, "compare", values)
            assert says in notice(opened, compare)
        assert open_tab(page, "used", values)[used.attributions] is not None  # not marked as drawn: tried again


@pytest.mark.slow
def test_what_the_model_used_draws_every_method_the_lens_and_a_download_of_every_number(page):
    values = defaults(page) | {page.panel.text: "A <b>dog</b> & a cat sit on the <script>x</script> sofa."}
    values = after(values, page.show_translation(values))
    result, used = values[page.result], page.views["used"]
    L = page.ctx.translator(result.pair).cfg.n_decoder_layers
    opened = open_tab(page, "used", values)
    assert traces(opened[used.attributions])[0]["y"] == [html.escape(label) for label in METHOD_NAMES.values()]
    lens = traces(opened[used.lens])
    assert len(lens[0]["y"]) == L and len(lens[0]["x"]) == len(result.translation.target_tokens) + 1
    assert opened[used.training]["visible"] and not notice(opened, used)
    payload = json.loads(Path(opened[used.download]["value"]).read_text())
    assert set(payload["methods"]) == set(METHODS) and payload["deletion"]["most_faithful"] in METHODS
    assert len(payload["lens"]["top_ids"]) == L and payload["lens_over_training"]["stages"][-1] == "shipped"
    for drawn in (opened[used.summary], opened[used.deletion]):  # every token escaped: only our own tags remain
        assert "<" not in re.sub(r"</?(p|b|table|caption|thead|tbody|tr|th|td)( class=\"?\w+\"?)?>", "", drawn)
    other = used.pick_step(result, 2, -1, 64)
    assert "Output piece 3" in other[used.summary] and other[used.attributions] != opened[used.attributions]
    alternative = other[used.alternative]["choices"][1][1]
    contrast = used.redraw(result, 2, alternative, 64)
    assert "Contrastive" in contrast[used.summary] and contrast[used.alternative]["value"] == alternative
    for bad, says in (((2, -1, 1000), "between 1 and 256"), ((999, -1, 64), "choose an output token")):
        with pytest.raises(gr.Error, match=says):
            used.redraw(result, *bad)


def test_inside_attention_views_for_every_kind_escape_hostile_tokens(page):
    hostile = "A <script>alert(1)</script> man & a <b>dog</b>."
    result = page.show_translation(defaults(page) | {page.panel.text: hostile})[page.result]
    inside = page.views["inside"]
    for kind in ("encoder", "decoder", "cross"):
        queries = axis_tokens(result.maps, kind)[0]
        query = next(i for i, t in enumerate(queries) if "<" in t)  # <unk> in the source, <s> in the target
        out = inside.redraw(result, kind, 1, 2, query)
        steps = out[inside.steps]
        assert base.labels(queries)[query] in steps and "<script" not in steps and "<unk>" not in steps
        assert out[inside.query]["value"] == query and len(figure(out[inside.plot]).data) >= 8
        assert "Equal to the Attention view's row to" in steps
    keys = list(figure(inside.redraw(result, "encoder", 0, 0, 0)[inside.plot]).data[1].y)
    # the vocabulary spells "<" and ">" in bytes (byte fallback): written as the characters (escaped), never <0x3C>
    assert any(k.endswith(" &lt;") for k in keys) and not any("0x" in k or "unk" in k or "<" in k for k in keys)
    assert inside.redraw(result, "cross", 0, 0, 999)[inside.query]["value"] == len(result.maps.target_tokens) - 1
    families = page.views["families"].fill(result, {})[page.views["families"].plot]
    heatmaps = [d for d in families.data if d.type == "heatmap"]  # six panels (the legend adds three squares)
    assert len(heatmaps) == 6 and not any("<script" in x for d in heatmaps for x in d.x)
    rollout = page.views["rollout"].fill(result, {})
    assert Path(rollout[page.views["rollout"].download]["value"]).is_file()


def test_an_unfamiliar_sentence_is_translated_and_the_page_says_it_lies_far_from_the_training_data(page):
    out = page.show_translation(defaults(page) | {page.panel.text: "Зебра xqzvwj kpqzjx 東京."})
    assert out[page.panel.translation] == out[page.result].translation.text  # the translation is still shown
    assert "never seen" in out[page.panel.notice] and "one unknown piece" in out[page.panel.notice]
    plain = page.show_translation(defaults(page) | {page.panel.text: "A man walks his dog in the park."})
    assert plain[page.panel.notice] == ""


def test_an_imported_opus_mt_model_appears_by_name_and_every_view_draws_for_it(with_imported):
    translators, problems = app.load_translators(with_imported, "cpu")
    assert not problems and set(translators) == {"en-de", "en-de-opus-mt"}
    page = app.build_page(translators)
    assert ("English → German (OPUS-MT)", "en-de-opus-mt") in page.panel.pair.choices
    values = defaults(page) | {page.panel.pair: "en-de-opus-mt", page.panel.text: "a dog runs in the park"}
    out = page.show_translation(values)
    assert out[page.panel.translation] == out[page.result].translation.text
    values = after(values, out)
    for name in registry.tabs():
        opened = open_tab(page, name, values)
        view = page.views[name]
        assert not notice(opened, view), (name, opened.get(view.about))
    card = open_tab(page, "card", values)[page.views["card"].card]
    assert "CC-BY 4.0" in card and "imported" in card


def test_compare_models_draws_both_translations_and_the_difference_where_the_tokens_allow(with_imported):
    translators, _ = app.load_translators(with_imported, "cpu")
    page = app.build_page(translators)
    compare = page.views["compare"]
    user, values = User("compare"), defaults(page) | {page.panel.text: "A dog runs in the park."}
    page.sessions.of(user).tab = "compare"
    translated = page.show_translation(values, user)  # the open tab is Compare models: drawn after the translation
    out, result = open_tab(page, "compare", after(values, translated), user), translated[page.result]
    specs = [s for _, s in model_choices(page.ctx, "en-de")]
    assert specs[:2] == ["pair:en-de-opus-mt", "int8:en-de"] and any(s.startswith("epoch:en-de:") for s in specs)
    epochs = [s for s in specs if s.startswith("epoch:en-de:")]
    early = [s for s in epochs if int(s.rsplit(":", 1)[1]) >= 4] or epochs  # the shipped timeline may keep epoch 1 only
    assert [s for _, s in out[compare.other]["choices"]] == specs and out[compare.other]["value"] == early[0]
    assert compare.plot in out and f"after epoch {early[0].rsplit(':', 1)[1]}" in out[compare.diff]  # its own pair
    other_pair = compare.redraw(result, "pair:en-de-opus-mt", "cross", 0)
    assert len(traces(other_pair[compare.plot])) == 2  # different tokens: each map on its own
    assert "English → German (OPUS-MT)" in other_pair[compare.diff]
    int8 = compare.redraw(result, "int8:en-de", "encoder", 1)  # same source tokens: the difference too
    drawn = traces(int8[compare.plot])
    assert len(drawn) == 3 and drawn[2]["colorscale"] and "in int8" in int8[compare.diff]
    epoch = compare.redraw(result, specs[-1], "cross", 0)
    assert "after epoch" in epoch[compare.diff]
    with pytest.raises(gr.Error, match="no model to compare with"):
        compare.redraw(result, "pair:xx-yy", "cross", 0)


def test_compare_models_opens_on_a_model_that_translates_otherwise_and_puts_two_languages_side_by_side(page):
    compare = page.views["compare"]
    user, values = User("compare-opens"), defaults(page) | {page.panel.text: "My sister plays the piano every evening."}
    values = after(values, page.show_translation(values, user))
    opened = open_tab(page, "compare", values, user)
    assert "0 pieces struck out, 0 pieces new" not in opened[compare.diff]  # something to see, where a model differs
    other = next(p for p in page.ctx.pairs if p != "en-de")  # French beside German: no word in common
    across = compare.redraw(values[page.result], f"pair:{other}", "cross", 0)
    assert "struck out" not in across[compare.diff] and across[compare.diff].count('class="card"') == 2
    french = page.ctx.translator(other).translate(values[page.panel.text]).text
    assert html.escape(french) in across[compare.diff] and "Two languages" in across[compare.diff]
    assert len(traces(across[compare.plot])) == 2  # each map on its own tokens, no difference map


def test_the_page_is_built_from_at_most_120_components(page):
    """Every component on the page costs each visitor's opening (Gradio copies its configuration into every session):
    the views and the class's own parts are built for the visitor who opens or needs them (docs/many-users.md)."""
    config = page.demo.get_config_file()
    assert len(config["components"]) <= 120
    on_page = {c["props"].get("elem_id") for c in config["components"]}
    assert not on_page & {"lesson-ask", "steps-ask", "class-card", "class-roster", "class-end", "class-nickname"}
    assert {"class-question", "class-following", "class-wall", "translate-button"} <= on_page  # polled by the page


def test_every_tab_bar_holds_only_tabs(page):
    """Anything else placed straight inside gr.Tabs (a State, say) shifts the browser's tabs: a click on one opened
    the next one's label over another."""
    config = page.demo.get_config_file()
    types = {c["id"]: c["type"] for c in config["components"]}

    def walk(node):
        if types.get(node["id"]) == "tabs":
            assert {types[child["id"]] for child in node.get("children", [])} == {"tabitem"}
        for child in node.get("children", []):
            walk(child)
    walk(config["layout"])


def test_the_page_warns_when_numbers_change_and_when_the_source_is_not_english(page):
    out = page.show_translation(defaults(page) | {page.panel.text: "12345 67890"})
    assert out[page.panel.translation] == out[page.result].translation.text  # shown all the same
    changed = doubts.changed_numbers("12345 67890", out[page.panel.translation])
    assert bool(changed) == ("Check the numbers" in out[page.panel.notice])
    assert all(n in out[page.panel.notice] for n in changed)
    german = page.show_translation(defaults(page) | {page.panel.text: "Ich habe morgen einen Mathetest."})
    assert "looks like German" in german[page.panel.notice]


def test_a_glance_box_opens_the_part_clicked(page):
    """A glance box fires its HTML's 'open' event with the view and the part it asks for ("view=...&kind=...&layer=...
    &step=..."): the view's tab opens and shows that kind of attention and layer, or that step."""
    link = lambda view, focus: gr.EventData(None, {"view": view, "focus": focus})  # noqa: E731  (what js sends)
    values = defaults(page) | {page.panel.text: "A girl in a red coat feeds a dog."}
    values = after(values, page.show_translation(values))
    result = values[page.result]
    attention, steps = page.views["attention"], page.views["steps"]
    value = lambda u: u["value"] if isinstance(u, dict) else u  # noqa: E731  (a menu's new choices come with it)

    def follow(user: User, values: dict, view: str, focus: str) -> dict:
        """The link's event (its tabs selected, the tab signalled), then the tab's drawing that the signal runs."""
        selected = page.show_part(values, user, link(view, focus))
        tab = registry.tab_of(view)
        assert page.tabs.signal in selected and page.sessions.of(user).tab == tab
        return page.tab_drawer()(values, user)  # the signal draws the tab the session has open

    user = User("glance-box")
    out = follow(user, values, "attention", "view=attention&kind=cross&layer=2&step=4")
    assert [value(out[c]) for c in (attention.kind, attention.layer, attention.head)] == ["cross", 2, "average"]
    assert out[attention.layer]["choices"][2] == ("3", 2)  # drawn for the first time: the menu shows layers from 1
    assert html.unescape(figure(out[attention.plot]).layout.title.text).endswith("layer 3, mean of heads")
    again = follow(user, after(values, out), "attention", "view=attention&kind=encoder&layer=1")
    assert (again[attention.kind], again[attention.layer]) == ("encoder", 1)  # drawn before: only the part
    out = follow(User("glance-step"), values, "steps", "view=steps&step=4")
    assert value(out[steps.index]) == 5 and figure(out[steps.detail]).layout.title.text.startswith("Step 5: chose")
    elsewhere = follow(User("elsewhere"), values, "inside", "view=attention&kind=cross&layer=0")
    assert attention.kind not in elsewhere  # a part of a view that is not open is not drawn
    assert len(result.translation.steps) > 5


def test_step_by_step_shows_when_each_piece_was_decided_as_the_lens_says(page):
    from transformer.interpret import analyses

    user = User("decided")
    values = defaults(page) | {page.panel.text: "Two dogs run on the beach."}
    values = after(values, page.show_translation(values, user))
    result, steps = values[page.result], page.views["steps"]
    drawn = open_tab(page, "steps", values, user)[steps.decided]
    made = analyses.commitment(page.ctx.translator(result.pair), result.text, result.translation)
    layers = re.findall(r"<span>(layer \d+|guarded|sampled|searched|not its first choice)</span>", drawn)
    guarded = [s.guarded for s in result.translation.steps] + [False]
    assert layers == [f"layer {k}" if k else "guarded" if g else "not its first choice"  # greedy: never "sampled"
                      for k, g in zip(made.settled, guarded)]
    assert len(layers) == len(result.translation.target_tokens) + 1  # every piece and the end
    assert f"of {made.encoder_total}" in drawn


def test_what_the_decoder_keeps_reads_the_cache_at_every_step_and_times_both_ways(page):
    user = User("cache")
    values = defaults(page) | {page.panel.text: "A man in a blue shirt is riding a bike down the street."}
    values = after(values, page.show_translation(values, user))
    result, cache = values[page.result], page.views["cache"]
    opened = open_tab(page, "cache", values, user)
    T = len(result.translation.target_tokens) + 1  # every piece and the end
    assert opened[cache.step]["maximum"] == T and opened[cache.step]["value"] == T  # it opens on the whole cache
    cfg = page.ctx.translator(result.pair).cfg
    assert f"{T} × {cfg.n_heads} × {cfg.d_head}" in opened[cache.sizes]
    third = cache.redraw(result, 3)
    assert f"3 × {cfg.n_heads} × {cfg.d_head}" in third[cache.sizes]
    assert figure(third[cache.plot]).layout.title.text.startswith("Step 3: the decoder read")
    timed = cache.timed(result)[cache.timing]
    assert "Both wrote the same translation" in timed and html.escape(result.translation.text) in timed


def test_a_brought_model_is_its_sessions_alone_and_goes_when_its_page_closes(page, tmp_path, tokenizer, monkeypatch):
    import zipfile

    from playground import uploads
    from transformer import Transformer, save_checkpoint
    from conftest import tiny_config

    torch.manual_seed(0)
    save_checkpoint(tmp_path / "m", Transformer(tiny_config(vocab_size=len(tokenizer))), tokenizer)
    with zipfile.ZipFile(tmp_path / "mine.zip", "w") as z:
        for f in (tmp_path / "m").iterdir():
            z.write(f, f.name)
    card, panel = page.views["card"], page.panel
    teacher, other = User("brings"), User("another")
    values = defaults(page) | {card.bring: str(tmp_path / "mine.zip")}
    out = page.bring_model(values, teacher)
    key = out[panel.pair]["value"]
    assert key.startswith(uploads.PREFIX) and ("Your model: mine", key) in out[panel.pair]["choices"]
    assert out[page.result].pair == key and "is loaded" in out[card.brought]  # translated with it at once
    assert key not in page.ctx.pairs  # no other page's menu lists it
    work = page.ctx.uploads.held[key].work
    page.forget_models(other)  # another page closing leaves it
    assert page.ctx.translator(key) is not None
    page.forget_models(teacher)  # its own page closing takes it, and its files
    with pytest.raises(InputError):
        page.ctx.translator(key)
    assert not work.exists()
    monkeypatch.setattr(uploads, "MOST", 0)  # the server holds as many as it may: said in place
    full = page.bring_model(values, teacher)
    assert "already holds 0 models" in full[card.brought] and panel.pair not in full


def test_only_the_named_endpoints_carry_api_schemas_and_the_browser_sees_the_same_components(page):
    """The page's events are private, so its components carry no API schemas (gradio copies the config into every
    visitor's session); the named endpoints keep theirs, and every component keeps gradio's own type and class id,
    which the browser loads it by."""
    from gradio.components import Component
    from gradio.components.api_component import Api

    config = page.demo.get_config_file()
    schemas = {c["type"] for c in config["components"] if "api_info" in c}
    assert schemas == {"api"}
    private = [b for b in page.demo.blocks.values() if isinstance(b, Component) and type(b).__module__.startswith("gradio")
               and type(b).__mro__[1].__module__.startswith("gradio") and type(b).__name__ == type(b).__mro__[1].__name__]
    components = [b for b in page.demo.blocks.values() if isinstance(b, Component) and not isinstance(b, Api)]
    assert len(private) > 30 and all(c.skip_api for c in components)
    for block in private:
        gradios = type(block).__mro__[1]
        assert block.skip_api and block.get_block_name() == gradios.__name__.lower()
        assert block.component_class_id == gradios.get_component_class_id()


def test_the_pages_html_is_made_once_per_address_and_each_address_gets_its_own():
    """SamePage sends the HTML made for the first visitor at an address to the next (those asking at once wait for
    it); another Host or X-Forwarded header (what the page's links are written from) gets a page of its own, never
    another address's; a deep link, a POST, an answer that sets a cookie or comes in parts pass untouched."""
    import asyncio
    import httpx
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.responses import HTMLResponse, StreamingResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient
    from playground.page import SamePage

    made = []

    async def page(request):
        made.append(request.url)
        await asyncio.sleep(0.05)  # Gradio takes a while: a class asking at once overlaps it
        root = request.headers.get("x-forwarded-host") or request.headers["host"]
        response = HTMLResponse(f"<html><head></head><body>root={root} n={len(made)}</body></html>")
        if "cookie" in request.query_params:
            response.set_cookie("c", "1")
        if "parts" in request.query_params:
            response = StreamingResponse(iter([b"a", b"b"]), media_type="text/html")
        return response

    server = Starlette(routes=[Route("/", page, methods=["GET", "POST"])], middleware=[Middleware(SamePage)])

    async def at_once(n: int) -> list[str]:  # a class opening the page together: it is made once
        async with httpx.AsyncClient(transport=httpx.ASGITransport(server), base_url="http://class.test") as client:
            return [r.text for r in await asyncio.gather(*(client.get("/") for _ in range(n)))]
    assert len(set(asyncio.run(at_once(12)))) == 1 and len(made) == 1
    made.clear()
    client = TestClient(server)
    first = client.get("/")
    assert client.get("/?class=AB12&lang=de").text == first.text and len(made) == 1
    assert int(client.get("/").headers["content-length"]) == len(first.content)
    other = client.get("/", headers={"x-forwarded-host": "class.example"})
    assert "root=class.example" in other.text and len(made) == 2
    assert client.get("/").text == first.text and "class.example" not in first.text
    assert client.get("/", headers={"x-forwarded-host": "class.example"}).text == other.text and len(made) == 2
    cookie = lambda: client.get("/?cookie=1", headers={"host": "c.example"})  # noqa: E731
    for passing in (lambda: client.get("/?deep_link=x"), lambda: client.post("/"), cookie,
                    lambda: client.get("/?parts=1", headers={"host": "p.example"})):
        before = len(made)
        passing(), passing()
        assert len(made) == before + 2
    assert client.get("/?parts=1", headers={"host": "p.example"}).text == "ab"
    assert client.get("/", headers={"host": "a.example"}).text.endswith(f"n={len(made)}</body></html>")
    for n in range(SamePage.KEPT):  # the oldest address goes when more are asked for
        client.get("/", headers={"host": f"h{n}.example"})
    before = len(made)
    client.get("/", headers={"host": "a.example"})
    assert len(made) == before + 1


def test_the_real_pages_html_at_another_address_links_to_that_address(server):
    """The page Gradio writes behind a balancer (X-Forwarded-Host) links to the balancer's address, and the page
    kept for the server's own address is not sent there, nor the other way round."""
    import httpx

    plain = httpx.get(server).text
    behind = httpx.get(server, headers={"x-forwarded-host": "class.example", "x-forwarded-proto": "https"}).text
    assert "https://class.example" in behind and "class.example" not in plain
    assert httpx.get(server).text == plain and "Transformer Playground" in plain
    assert httpx.get(server, headers={"x-forwarded-host": "class.example", "x-forwarded-proto": "https"}).text == behind
