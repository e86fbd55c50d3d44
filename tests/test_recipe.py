"""The recipes (recipes/*.toml, transformer/training/recipe.py): each file checked as it is read, and the smoke
recipe run end to end from the corpora: trained, averaged, evaluated, stamped, and opened in the page."""
from __future__ import annotations

import json

import pytest

from conftest import ROOT
from transformer.errors import InputError
from transformer.training import recipe

RECIPES = sorted((ROOT / "recipes").glob("*.toml"))


@pytest.mark.parametrize("path", RECIPES, ids=[p.stem for p in RECIPES])
def test_every_recipe_reads_and_is_stamped_with_its_own_hash(path, tmp_path):
    made = recipe.load(path)
    assert made.corpora and made.train.pair in ("en-de", "en-fr") and made.model.recipe == made.stamp
    assert made.stamp.startswith(f"{made.name} sha256:")
    changed = tmp_path / path.name
    changed.write_text(path.read_text() + "\n# one more line\n")
    assert recipe.load(changed).stamp != made.stamp  # another file, another stamp


@pytest.mark.parametrize("text, said", [
    ('[data]\ncorpora = ["multi30k"]\n[train]\nepoch = 3\n', "unknown key(s) epoch"),
    ('[data]\ncorpora = ["multi30k"]\n[model]\nd_modle = 64\n', "unknown key(s) d_modle"),
    ('[data]\ncorpora = ["multi30k"]\n[train]\nepochs = "three"\n', "epochs: a int is expected"),
    ('[train]\nepochs = 3\n', "needs `corpora`"),
    ('[data]\ncorpora = ["multi30k"]\n[schedule]\nwarmup = 3\n', "unknown table(s) schedule"),
    ('[data]\ncorpora = ["multi30k"]\n[[evaluate]]\ncorpus = "multi30k"\n', "needs `record`"),
    ("name = 'x\n", "is not a TOML file"),
])
def test_a_recipe_that_is_wrong_is_refused_with_what_to_fix(tmp_path, text, said):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(InputError, match=said.replace("(", r"\(").replace(")", r"\)")):
        recipe.load(path)


def test_the_command_refuses_flags_beside_a_recipe(tmp_path):
    from transformer.__main__ import main

    assert main(["train", "--recipe", str(ROOT / "recipes" / "smoke.toml"), "--epochs", "5",
                 "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_the_smoke_recipe_makes_a_checkpoint_the_page_opens(smoke_checkpoint):
    """One command from the corpora: trained, averaged, its words counted, evaluated, stamped; the page then loads
    it and translates with it."""
    out = smoke_checkpoint
    made = recipe.load(ROOT / "recipes" / "smoke.toml")
    config = json.loads((out / "config.json").read_text())
    assert config["recipe"] == made.stamp and config["d_model"] == 64
    metrics = json.loads((out / "metrics.json").read_text())
    assert [e["epoch"] for e in metrics["epochs"]] == [1, 2] and metrics["averaged_epochs"] == [1, 2]
    assert metrics["test"]["test2016_greedy"]["sentences"] == 100 and metrics["train_config"]["vocab_size"] == 1000
    assert (out / "words.json").exists() and sorted(p.name for p in (out / "timeline").iterdir())

    import app
    from playground import context
    from transformer import Translator
    from transformer.decoding import DecodeOptions

    translator = Translator.load(out)
    page = app.build_page({"en-de": translator})
    result = context.run(translator, "en-de", "A man is riding a bike.", DecodeOptions(),
                         page.ctx.caches.translations)
    assert result.translation.target_tokens and result.maps.cross is not None  # translated, its maps hooked
