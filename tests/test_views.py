"""What the views are built from: plots, bertviz pages, the ablation diff; none of it needs gradio."""
from __future__ import annotations

import html
import os
import subprocess
import sys

import pytest
import torch

from playground import plots
from playground.bertviz_view import TELL_HEIGHT, bertviz_document, iframe
from playground.views.common import token_diff
from transformer.training.schedule import checkpoint_schedule
from transformer.interpret.capture import AttentionMaps
from transformer.metrics import Metrics

from conftest import ROOT

M = Metrics.from_dict  # the tests write metrics.json as a dict, as a file holds it


def maps_with(tokens: list[str]) -> AttentionMaps:
    S, T = len(tokens), 3
    soft = lambda *shape: torch.rand(*shape).softmax(-1)
    return AttentionMaps(soft(2, 4, S, S), soft(2, 4, T, T).tril(), soft(2, 4, T, S), tokens, ["<s>", "▁ein", "▁b"])


def test_plots_never_import_gradio():
    code = "import sys, playground.plots, playground.figures, playground.bertviz_view; print('gradio' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr


def test_labels_count_from_1_write_pieces_as_the_glance_does_and_are_escaped():
    assert plots.labels(["<s>", "▁I", "ch", "▁a", "&", "</s>"]) == ["1 start", "2 I", "3 -ch", "4 a", "5 &amp;", "6 end"]
    fig = plots.attention_heatmap(torch.eye(3), ["<s>", "x", "x"], ["▁a", "</s>", "▁<img src=x>"], "t <b>")
    assert list(fig.data[0].x) == ["1 a", "2 end", "3 &lt;img src=x&gt;"]
    assert fig.layout.title.text == "t &lt;b&gt;"


def test_inline_bertviz_holds_its_scripts_and_keeps_tokens_inside_the_script():
    doc = bertviz_document(maps_with(["▁A", "</script><script>alert(1)</script>", "<!--", "</s>"]), "head")
    assert "require.min.js" not in doc and "window.requirejs" in doc and "d3.schemeCategory10 =" in doc
    body = doc[doc.index('<script type="text/javascript">'):doc.index(TELL_HEIGHT)]  # then ours, that sizes the frame
    assert body.count("</script>") == 1  # only the real end of bertviz's script: token text cannot close it
    assert "<\\/script><script>alert(1)<\\/script>" in body and "<\\!--" in body
    framed = iframe(doc)
    assert framed.startswith('<iframe class="bertviz-frame" sandbox="allow-scripts"')
    assert html.unescape(framed.split('srcdoc="', 1)[1].rsplit('"', 1)[0]) == doc  # attribute-escaped exactly


def test_bertviz_cdn_path_is_bertviz_own_page():
    doc = bertviz_document(maps_with(["▁A", "▁dog", "</s>"]), "model", scripts="cdn")
    assert 'src="https://cdnjs.cloudflare.com/ajax/libs/require.js/' in doc and "window.requirejs" not in doc


def test_bertviz_names_the_apps_script_files_and_sends_rounded_weights():
    import re

    from playground.bertviz_view import script_files

    urls = [f"gradio_api/file={p}" for p in script_files()]
    assert [p.name for p in script_files()] == ["jquery.min.js", "d3.js", "shim.js"]
    assert all(p.is_file() for p in script_files())
    maps = maps_with(["▁A", "▁dog", "</s>"])
    doc = bertviz_document(maps, "head", scripts=urls)
    tags = [doc.index(f'<script src="{u}"></script>') for u in urls]
    assert tags == sorted(tags) and "window.requirejs" not in doc  # named, in order, not inlined
    assert '<script src="https://' not in doc  # nothing from the network (require.config's paths go unused)
    assert doc.count('"attention": [') == 1  # bertviz's data once (its script carried a second copy in a comment)
    numbers = re.findall(r"\b0\.(\d+)", doc[doc.index('"attention"'):])
    assert numbers and max(len(n) for n in numbers) <= 3
    assert len(doc) < len(bertviz_document(maps, "head")) / 10  # the scripts are the bulk of an inlined page


def test_token_diff_marks_changes_and_escapes():
    out = token_diff(["▁Ein", "▁Hund", "<b>"], ["▁Ein", "▁Katze", "<b>"], "with every head", "<i>off</i>")
    assert out.count('"tok removed"') == 1 and out.count('"tok added"') == 1 and "2 tokens changed" in out
    assert out.count("&lt;b&gt;") == 2 and out.count("<b>") == 2  # the token escaped; only our two labels are bold
    assert "&lt;i&gt;off" in out  # labels escaped too


def test_step_and_pe_figures_are_built_from_data():
    from transformer.translator import TokenStep

    steps = [TokenStep("▁Ein", 0.9, [("▁Ein", 0.9), ("▁Der", 0.05)]), TokenStep("</s>", 0.8, [("</s>", 0.8)])]
    fig = plots.step_probabilities(steps)
    assert fig.data[0].z[0][0] == 0.9 and "<b>[Ein]</b>" == fig.data[0].text[0][0]
    assert list(fig.data[0].y) == ["1 Ein", "2 end"]  # steps counted from 1, pieces as the glance writes them
    assert fig.data[0].z[1][0] == 0.8 and fig.layout.width is None  # a row a step: as wide as its box
    pe = torch.randn(50, 8)
    assert len(plots.pe_curves(pe, [0, 3]).data) == 2
    torch.testing.assert_close(torch.tensor(plots.pe_similarity(pe, 10).data[0].z), pe[:10] @ pe[:10].t())


def test_every_download_goes_through_one_writer_that_prunes_old_files_of_any_kind(tmp_path, translator):
    import json

    from playground import downloads, results
    from transformer.decoding import DecodeOptions

    result = results.run(translator, "toy", "A dog runs.", DecodeOptions(max_len=6))
    first = downloads.write(tmp_path, "attention", downloads.attention_payload(result.maps))
    assert json.loads(first.read_text())["source_tokens"] == result.maps.source_tokens
    picture = tmp_path / "figure.png"
    picture.write_bytes(b"png")
    for old in (first, picture):
        os.utime(old, (0, 0))  # written in 1970: older than an hour
    second = downloads.write(tmp_path, "attention-rollout", {"rollout": []})
    assert not first.exists() and not picture.exists() and second.exists()
    # Another request removes a file between this one's listing and its look at it: this one still writes
    gone = tmp_path / "attention-gone.json"
    listing = lambda folder, pattern: iter([gone, second])
    with pytest.MonkeyPatch.context() as m:
        m.setattr(type(tmp_path), "glob", listing)
        third = downloads.write(tmp_path, "what-the-model-used", {})
    assert third.exists() and second.exists()


@pytest.mark.slow
def test_the_download_folder_is_removed_when_the_server_exits(tmp_path, translator):
    from transformer import save_checkpoint

    save_checkpoint(tmp_path / "en-de", translator.model, translator.tokenizer)
    code = ("import sys, app; translators, _ = app.load_translators(__import__('pathlib').Path(sys.argv[1]), 'cpu'); "
            "page = app.build_page(translators); print(page.ctx.downloads); assert page.ctx.downloads.is_dir()")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    folder = out.stdout.strip().splitlines()[-1]
    assert "transformer-playground-" in folder and not os.path.exists(folder)


def test_training_curve_draws_the_checkpoints_own_schedule_with_its_cool_down():

    epochs = [{"epoch": e, "step": 100 * e, "train_loss": 3.0, "val_loss": 2.0, "val_bleu": 10.0 * e} for e in (1, 2, 3, 4)]
    metrics = {"epochs": epochs, "model_config": {"d_model": 128},
               "train_config": {"warmup": 50, "lr_scale": 1.0, "epochs": 4, "cooldown_epochs": 2}}
    steps, rates = plots.training_curves(M(metrics)).data[0].x, plots.training_curves(M(metrics)).data[0].y
    by_step = dict(zip(steps, rates))
    # eq. 3 by hand: 128^-0.5 * min(step^-0.5, step * 50^-1.5); after the warm-up the first term is the smaller
    assert by_step[150] == pytest.approx(128**-0.5 * 150**-0.5)  # epoch 2: before the cool-down
    assert by_step[300] == pytest.approx(0.5 * 128**-0.5 * 300**-0.5)  # end of epoch 3: half-way down the cool-down
    assert by_step[400] == 0.0 and rates[-1] < 0.01 * max(rates)  # and at the last step it reaches 0
    metrics["train_config"]["hold_peak"] = True  # a run trained with --hold-peak: flat from warm-up to cool-down
    rate_trace = plots.training_curves(M(metrics)).data[0]
    by_step = dict(zip(rate_trace.x, rate_trace.y))
    assert by_step[101] == by_step[191] == pytest.approx(128**-0.5 * 50**-0.5)  # the peak, held
    noam = plots.noam_curves([(128, 50)], ("this checkpoint", M(metrics)))  # the LR view draws the same recipe
    assert [t.name for t in noam.data] == ["d_model=128, warmup=50", "this checkpoint: as trained"]
    assert list(noam.data[1].y) == list(rate_trace.y) and noam.data[1].y[-1] == 0.0 < noam.data[0].y[-1]


def test_a_second_stage_is_drawn_after_the_first_and_a_changed_recipe_from_its_recorded_rates():
    from transformer.training.schedule import learning_rate
    from transformer.config import TrainConfig

    first = {"warmup": 50, "lr_scale": 1.0, "epochs": 2, "cooldown_epochs": 1, "hold_peak": True}
    second = {"warmup": 10, "lr_scale": 0.5, "epochs": 2, "cooldown_epochs": 1, "hold_peak": True}
    peak2 = 0.5 * 32**-0.5 * 10**-0.5
    row = lambda e, step, lr, bleu: {"epoch": e, "step": step, "train_loss": 3.0, "val_loss": 2.0, "lr": lr,
                                     "val_bleu": bleu["m"], "val_bleu_by_corpus": bleu}
    metrics = {"model_config": {"d_model": 32}, "train_config": second, "first_stage": {"train_config": first},
               "epochs": [{"epoch": 1, "step": 100, "train_loss": 3.0, "val_loss": 2.0, "val_bleu": 5.0},
                          {"epoch": 2, "step": 200, "train_loss": 3.0, "val_loss": 2.0, "val_bleu": 9.0},
                          row(3, 40, peak2, {"m": 8.0, "t": 4.0}), row(4, 80, 0.0, {"m": 9.5, "t": 7.0})]}
    fig = plots.training_curves(M(metrics), mark_epoch=3)
    by_step = dict(zip(fig.data[0].x, fig.data[0].y))
    assert max(by_step) == 280  # the second stage's 80 steps follow the first stage's 200
    assert by_step[220] == pytest.approx(learning_rate(20, 0.5, 32, TrainConfig.from_dict(second)))
    assert by_step[220] == pytest.approx(peak2)  # its own recipe: warmed up again, to its own peak
    assert by_step[150] == pytest.approx(learning_rate(150, 1.5, 32, TrainConfig.from_dict(first)))
    assert 240 in [s.x0 for s in fig.layout.shapes]  # epoch 3 marked at its step counted over both stages
    assert [t.name for t in fig.data[3:]] == ["val BLEU, m (greedy)", "val BLEU, t (greedy)"]
    assert list(fig.data[4].y) == [None, None, 4.0, 7.0]
    # resumed with a longer schedule (a second cycle): its recipe no longer gives the rates it recorded
    metrics["train_config"] = dict(second, epochs=4)
    metrics["epochs"][-1]["lr"] = 0.0  # recorded: the stage fell to 0 at epoch 4, which epochs=4 would not do
    steps, rates = checkpoint_schedule(M(metrics))
    assert steps[-2:] == [240, 280] and rates[-2:] == [peak2, 0.0]


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


def test_training_curves_mark_the_chosen_epoch():
    metrics = {"train_config": {"epochs": 2, "warmup": 4, "lr_scale": 1.0, "cooldown_epochs": 0, "hold_peak": False},
               "model_config": {"d_model": 32},
               "epochs": [{"epoch": e, "step": 10 * e, "train_loss": 3.0 / e, "val_loss": 2.0 / e, "val_bleu": None}
                          for e in (1, 2)]}
    marks = lambda fig: sorted(s.x0 for s in fig.layout.shapes)
    assert marks(plots.training_curves(M(metrics))) == []
    assert marks(plots.training_curves(M(metrics), mark_epoch=2)) == [2, 2, 20]  # step axis, then both epoch axes


def test_the_model_card_says_what_data_the_model_knows_and_credits_tatoeba():
    from playground.views.card import TATOEBA_CREDIT, knows

    captions = knows(M({"command": "python -m transformer train --data-dir ../shared/data/multi30k"}))
    assert "picture captions only" in captions and "Tatoeba" not in captions
    both = knows(M({"command": "python -m transformer train --data-dir m --data-dir ../shared/data/tatoeba"}))
    assert "everyday sentences" in both and TATOEBA_CREDIT in both


def test_positional_figures_name_sines_and_cosines_by_the_models_layout():
    pe = torch.randn(100, 512)
    assert [t.name for t in plots.pe_curves(pe, [0, 1, 256], layout="interleaved").data] == [
        "dim 0 (sin)", "dim 1 (cos)", "dim 256 (sin)"]
    assert [t.name for t in plots.pe_curves(pe, [0, 1, 256], layout="halves").data] == [
        "dim 0 (sin)", "dim 1 (sin)", "dim 256 (cos)"]
    assert "Marian" in plots.pe_matrix(pe, layout="halves").layout.title.text


def test_a_second_stages_sparse_timeline_shows_the_last_recorded_epoch_before_the_one_asked():
    from transformer.training import timeline
    from playground.views.timeline import translations_table

    rows = [{"epoch": e, "translations": [f"t{e}"] if e in (1, 2, 4, 120, 121) else []} for e in range(1, 122)]
    metrics = {"epochs": rows, "timeline_sources": ["a dog"]}
    assert [timeline.nearest_recorded(M(metrics), e) for e in (1, 3, 50, 120, 121)] == [1, 2, 4, 120, 121]
    table = translations_table(timeline.translations_at(M(metrics), 4), 4, 50)
    assert "after epoch 4 (the last recorded before 50)" in table and "t4" in table and "t121" in table


def test_every_view_opens_with_at_most_two_plain_sentences_and_folds_the_rest():
    """A student who knows what attention is, and no more, reads the first lines: no section signs, paper names or
    hooks there; the mechanism and the references are folded below."""
    from playground.results import sentences
    from playground.views.common import EXPLAIN, folded

    research = ("§", "hook", "et al", "Vaswani", "BERT", "GPT", "ALTI", "Captum", "softmax", "eq.")
    for name, entry in EXPLAIN.items():
        plain = entry["plain"]
        assert len(sentences(plain)) <= 2, name
        assert not [w for w in research if w.lower() in plain.lower()], name
        assert entry["how"], name
    text = folded(EXPLAIN["steps"])
    assert text.count("<details>") == 2 and "How it works" in text and "References" in text
