"""The first-minute, names and numbers sets (transformer/training/class_sets.py): their data and measures."""
from __future__ import annotations

import json
import re

import pytest

from transformer.training import class_sets
from transformer.training.augment import TEMPLATES, Names
from transformer.training.class_sets import (FIRST_MINUTE, NAME_FRAMES, NUMBERS, digits, held_out_names,
                                             is_right, judged, labelled, name_kept, rightness, stutters)
from transformer.training.data import read_classroom

from conftest import SHIPPED, shipped_pairs


def test_right_ignores_case_and_punctuation_but_not_words():
    assert is_right("hallo", ["Hallo!"])
    assert is_right("Je m’appelle Sofia", ["Je m'appelle Sofia."])
    assert is_right("Wie geht's", ["Wie geht’s?"])
    assert not is_right("Hallo Welt!", ["Hallo!"])
    assert not is_right("Sagt!", ["Hallo!", "Hi!"])


def test_stutters_are_repeated_letters_or_a_word_three_times_not_grammar_or_numbers():
    assert stutters("Mein Namen ist Ananananana.") and stutters("Mein Sititititititit ist unser Lehrer.")
    assert stutters("Wunnnnsch") and stutters("C'est une carte carte carte de cartes.")
    assert stutters("Où est la carte Carte carte carte ?")
    assert not stutters("Die Schifffahrt beginnt 1999.") and not stutters("Das kostet 1000000 Euro.")
    assert not stutters("Ananas") and not stutters("Das Kind, das das Bild malt.")
    assert not stutters("Nous nous levons tôt.") and not stutters("Nein, nein, nein!") and not stutters("1 1 1")


def test_numbers_are_kept_when_their_digits_come_out_in_order():
    assert digits("The train leaves at 10:45.") == digits("Der Zug fährt um 10.45 Uhr.")
    assert digits("It costs 3.50 euros.") == digits("Es kostet 3,50 Euro.")
    assert digits("It costs 25 euros.") != digits("Es kostet 255 Euro.")
    assert digits("12345 67890") != digits("12455509.")


def test_a_name_is_kept_only_as_a_word_of_its_own():
    assert name_kept("Anna", "Ich habe Anna gesehen.")
    assert not name_kept("Anna", "Ich habe Ananananana gesehen.") and not name_kept("Ann", "Anna")


def test_the_sets_are_big_enough_and_apart_from_training():
    items = json.loads(FIRST_MINUTE.read_text(encoding="utf-8"))["sentences"]
    assert len(items) >= 60 and all(it["de"] and it["fr"] for it in items)
    assert any(it["en"] == it["en"].lower() and it["en"][-1].isalpha() for it in items)  # typed as a class does
    numbers = json.loads(NUMBERS.read_text(encoding="utf-8"))["sentences"]
    assert len(numbers) >= 40 and all(re.search(r"\d\d", s) for s in numbers)
    names = held_out_names()
    assert len(names) >= 100 and len(set(names)) == len(names)
    train = Names.load("data/names.json")
    assert not set(names) & set(train.first["m"] + train.first["f"])
    templates = {t[0] for group in TEMPLATES.values() for t in group}
    assert not set(NAME_FRAMES) & templates
    assert not {it["en"] for it in items} & templates


def test_judged_translations_are_of_held_out_sentences_only_and_each_read_once():
    for lang in ("de", "fr"):
        held = {en: refs for en, refs in labelled(lang, with_judged=False)}
        right, wrong = judged(lang, "right"), judged(lang, "wrong")
        assert len(right) >= 50 and len(wrong) >= 50
        first = {it["en"] for it in json.loads(FIRST_MINUTE.read_text(encoding="utf-8"))["sentences"]}
        room = read_classroom("data/classroom", lang)
        trained = set(room["phrasebook"][0] + room["words"][0])
        for en, texts in list(right.items()) + list(wrong.items()):
            assert en in held and (en in first or en not in trained), en  # the classroom's: held out of training
            assert texts and not any(is_right(t, held[en]) for t in texts), en  # none is a written reference
        for en in right.keys() & wrong.keys():
            assert not {t.lower() for t in right[en]} & {t.lower() for t in wrong[en]}, en  # read one way only
        assert all(right.get(en, []) == refs[len(held[en]):] for en, refs in labelled(lang))  # counted as references


def test_rightness_counts_the_written_references_and_the_judged_translations_apart(monkeypatch, tmp_path):
    path = tmp_path / "judged.json"
    path.write_text(json.dumps({"de": {"right": {"Hi!": ["Servus!"]}, "wrong": {"Hi!": ["Tschüss!"]}}}))
    monkeypatch.setattr(class_sets, "JUDGED", path)
    items = [("Hi!", ["Hallo!"]), ("Hi!", ["Hallo!"]), ("Hi!", ["Hallo!"]), ("Bye!", ["Tschüss!"])]
    result = rightness(items, ["Hallo", "servus!", "Tschüss!", "Servus!"], "de")
    assert (result["right"], result["right_judged"], result["sentences"]) == (1, 2, 4)
    assert result["wrong"] == [("Hi!", "Tschüss!"), ("Bye!", "Servus!")]  # judged for another sentence: wrong
    assert judged("fr") == {}


@pytest.mark.slow
def test_the_measures_on_a_tiny_model(translator):
    result = class_sets.class_sets(translator, lang="de")
    fm, nm, nb = result["first_minute"], result["names"], result["numbers"]
    assert fm["sentences"] >= 60 and 0 <= fm["right"] <= fm["right_judged"] <= fm["sentences"]
    assert fm["right_judged"] == fm["sentences"] - len(fm["wrong"])
    assert nm["sentences"] == len(held_out_names()) * len(NAME_FRAMES) and nm["kept"] == nm["sentences"] - len(nm["lost"])
    assert nb["kept"] == nb["sentences"] - len(nb["changed"])
    assert "first minute" in class_sets.report(result)


FLOORS = json.loads((SHIPPED / "floors.json").read_text()) if (SHIPPED / "floors.json").is_file() else {}


@pytest.mark.slow
@pytest.mark.parametrize("pair", shipped_pairs())
def test_the_shipped_models_on_the_class_sets_stay_above_their_floors(translators, pair):
    result = class_sets.class_sets(translators[pair])
    floor = FLOORS[pair]
    assert result["first_minute"]["right"] >= floor["first_minute_right"], result["first_minute"]["wrong"]
    assert result["names"]["share"] >= floor["names_kept"], result["names"]["lost"][:10]
    assert result["numbers"]["share"] >= floor["numbers_kept"], result["numbers"]["changed"]
    assert result["classroom"]["right"] >= floor["classroom_right"], result["classroom"]["wrong"]
    said = {name: result[name]["stutters"] for name in ("first_minute", "names", "classroom", "everyday_words")}
    assert not any(said.values()), said  # decoding's stutter guard (RunGuard) leaves none on these sets
