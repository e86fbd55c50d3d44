"""Names and numbers drawn anew (transformer/training/augment.py) and the names file they are drawn from."""
from __future__ import annotations

import random
import re

import pytest

from transformer.training.augment import (DATA_NAMES, TEMPLATES, Names, augment, swap_names, swap_numbers,
                                          template_pair)

NAMES = Names(first={"m": ["Lukas", "Diego"], "f": ["Anna", "Oluwaseun"]}, surnames=["Nakamura"])


def draws(n: int = 40) -> list[random.Random]:
    return [random.Random(seed) for seed in range(n)]


def test_a_name_is_replaced_on_both_sides_by_one_of_its_gender():
    for rng in draws():
        src, tgt = swap_names("Tom gave Mary Tom's book.", "Tom gab Maria Toms Buch.", "de", NAMES, rng)
        he, she = re.fullmatch(r"(\w+) gave (\w+) \1's book\.", src).groups()
        assert he in NAMES.first["m"] and she in NAMES.first["f"]
        genitive = he + ("'" if he.endswith("s") else "s")  # Lukas' Buch, Diegos Buch
        assert tgt == f"{he} gab {she} {genitive} Buch."


def test_a_pair_whose_target_does_not_write_the_name_is_left_alone():
    pair = ("Tom is tired.", "Er ist müde.")
    assert all(swap_names(*pair, "de", NAMES, rng) == pair for rng in draws())
    pair = ("Ask Mary.", "Frag sie.")
    assert all(swap_names(*pair, "fr", NAMES, rng) == pair for rng in draws())


def test_french_elision_follows_the_new_name():
    outs = {swap_names("I think Tom is here.", "Je pense que Tom est ici.", "fr", NAMES, rng)[1] for rng in draws()}
    assert outs == {"Je pense que Lukas est ici.", "Je pense que Diego est ici."}
    outs = {swap_names("It's Alice's.", "C'est celui d'Alice.", "fr", NAMES, rng)[1] for rng in draws()}
    assert outs == {"C'est celui d'Anna.", "C'est celui d'Oluwaseun."}


def test_numbers_change_on_both_sides_and_keep_their_kind():
    seen = set()
    for rng in draws():
        src, tgt = swap_numbers("The train leaves at 10:45 in 1989, with 250 seats.",
                                "Der Zug fährt 1989 um 10:45 Uhr mit 250 Plätzen.", rng)
        time, year, seats = re.fullmatch(r"The train leaves at (\d+:\d\d) in (\d{4}), with (\d+) seats\.", src).groups()
        assert tgt == f"Der Zug fährt {year} um {time} Uhr mit {seats} Plätzen."
        assert int(time.split(":")[0]) <= 12 and int(time.split(":")[1]) < 60 and 1800 <= int(year) <= 2030
        assert len(seats) == 3 and not seats.startswith("0")
        seen.add(src)
    assert len(seen) > 30  # drawn anew


def test_drawn_numbers_often_write_a_digit_twice_in_a_row():
    """What the fifth stage's models lost ("1887" -> "187"): a uniform draw writes a digit twice in a row in about a
    quarter of four-digit numbers; the drawn ones do it in about half, and still span their kind."""
    from transformer.training.augment import digits, year

    doubled = re.compile(r"(\d)\1")
    rng = random.Random(0)
    numbers = [digits(4, rng) for _ in range(2000)]
    years = [year(rng) for _ in range(2000)]
    uniform = [str(rng.randrange(1000, 10_000)) for _ in range(2000)]
    share = {name: sum(bool(doubled.search(t)) for t in texts) / 2000
             for name, texts in [("numbers", numbers), ("years", years), ("uniform", uniform)]}
    assert share["numbers"] > share["uniform"] + 0.15 and share["years"] > share["uniform"] + 0.1
    assert all(len(t) == 4 and t[0] != "0" for t in numbers) and len(set(numbers)) > 1500
    assert all(1800 <= int(t) <= 2030 for t in years) and {t[:2] for t in years} == {"18", "19", "20"}


def test_numbers_the_target_writes_otherwise_are_left_alone():
    for pair in [("This hall holds 2,000 people.", "Diese Halle fasst 2000 Leute."),
                 ("He is 12 weeks old.", "Er ist zwölf Wochen alt.")]:
        assert all(swap_numbers(*pair, rng) == pair for rng in draws())


def test_an_epoch_is_drawn_from_its_seed_and_adds_its_share_of_templates():
    src = ["Tom is here.", "Mary has 25 cats.", "A dog runs."] * 100
    tgt = ["Tom ist hier.", "Maria hat 25 Katzen.", "Ein Hund rennt."] * 100
    one = augment(src, tgt, "de", NAMES, swap=0.5, templates=0.1, seed=7)
    assert one == augment(src, tgt, "de", NAMES, swap=0.5, templates=0.1, seed=7)
    assert one != augment(src, tgt, "de", NAMES, swap=0.5, templates=0.1, seed=8)
    new_src, new_tgt = one
    assert len(new_src) == len(new_tgt) == 300 + 30
    changed = sum(a != b for a, b in zip(new_src, src))
    assert 40 < changed < 140  # half of the 200 pairs with a name or a number, some keeping their names
    assert new_src[2::3][:100] == src[2::3][:100]  # nothing to draw: unchanged
    assert augment(src, tgt, "de", NAMES, swap=0.0, templates=0.0, seed=1) == (src, tgt)


@pytest.mark.parametrize("lang", ["de", "fr"])
def test_template_pairs_fill_every_slot_in_both_languages(lang):
    for rng in draws(200):
        src, tgt = template_pair(lang, NAMES, rng)
        assert "{" not in src + tgt
        for name in NAMES.first["m"] + NAMES.first["f"] + NAMES.surnames:
            assert (name in src) == (name in tgt), (src, tgt)
        assert re.sub(r"\D", "", src) == re.sub(r"\D", "", tgt), (src, tgt)  # digits copied in order
    gendered = [t for group in TEMPLATES.values() for t in group if len(t) == 4]
    assert {t[3] for t in gendered} == {"m", "f"}


def test_the_names_file_holds_many_names_and_keeps_the_held_out_ones_apart():
    train, held = Names.load("data/names.json"), Names.load("data/names.json", side="heldout")
    for gender in "mf":
        assert len(train.first[gender]) > 2000 and len(held.first[gender]) >= 100
        assert not set(train.first[gender]) & set(held.first[gender])
        assert not set(train.first[gender]) & set(DATA_NAMES)
    assert not set(train.first["m"]) & set(train.first["f"])  # a name of either gender has no sure pronoun
    assert not set(train.surnames) & set(held.surnames)


def test_copy_pairs_are_their_own_translation_and_of_every_kind():
    from transformer.training.augment import copy_pair

    pairs = [copy_pair(NAMES, rng) for rng in draws(200)]
    assert all(src == tgt for src, tgt in pairs)
    texts = [src for src, _ in pairs]
    assert any(t in NAMES.first["m"] + NAMES.first["f"] for t in texts)  # a name
    assert any(t.endswith(" Nakamura") for t in texts)  # a full name
    assert any(re.fullmatch(r"[A-Z]+[- ]?\d+", t) for t in texts)  # a code
    assert any(t.isdigit() for t in texts)  # a number


def test_cities_take_each_language_s_own_name_for_them():
    from transformer.training.augment import CITIES

    london = ("London", "London", "Londres")
    assert london in CITIES and ("Munich", "München", "Munich") in CITIES
    for rng in draws(300):
        src, tgt = template_pair("fr", NAMES, rng)
        if "London" in src:
            assert "Londres" in tgt and "London" not in tgt
        assert "de A" not in tgt and "de O" not in tgt  # elided: "d'Amsterdam", "d'Osaka"
        src, tgt = template_pair("de", NAMES, rng)
        if "Munich" in src:
            assert "München" in tgt


def test_copies_add_their_share_of_pairs():
    src, tgt = ["Tom is here."] * 200, ["Tom ist hier."] * 200
    new_src, new_tgt = augment(src, tgt, "de", NAMES, 0.0, 0.0, seed=1, copies=0.05)
    assert len(new_src) == 210 and new_src[200:] == new_tgt[200:]


def test_the_clock_is_said_as_each_language_says_it():
    from transformer.training.augment import HOURS

    seen = set()
    for rng in draws(3000):
        for lang in ("de", "fr"):
            src, tgt = template_pair(lang, NAMES, rng)
            said = re.search(r"(half past|a quarter past|a quarter to|at|It's) (\w+)(?: o'clock)?[.!]", src)
            if not said or said.group(2) not in HOURS["en"]:
                continue
            kind, h = said.group(1), HOURS["en"].index(said.group(2)) + 1
            seen.add((lang, kind))
            if lang == "de":  # "half past seven" is "halb acht"; one o'clock "ein Uhr"
                want = {"half past": f"halb {HOURS['de'][h]}", "a quarter past": f"Viertel nach {HOURS['de'][h - 1]}",
                        "a quarter to": f"Viertel vor {HOURS['de'][h - 1]}"}.get(kind, f" {'ein' if h == 1 else HOURS['de'][h - 1]} Uhr")
            else:  # "sept heures et demie", "une heure moins le quart"
                hours = HOURS["fr"][h - 1] + (" heure" if h == 1 else " heures")
                want = hours + {"half past": " et demie", "a quarter past": " et quart",
                                "a quarter to": " moins le quart"}.get(kind, "")
            assert want in tgt, (src, tgt)
    assert len(seen) == 10  # every way (half past, a quarter past and to, it's and at o'clock), in both languages


def test_jobs_and_friends_take_the_gender_of_the_person():
    from transformer.training.augment import JOBS

    women = set(NAMES.first["f"])
    checked = 0
    for rng in draws(3000):
        src, tgt = template_pair("de", NAMES, rng)
        job = next((j for j in JOBS if re.search(rf" {j[0]}\.$", src)), None)
        if job is None:
            continue
        woman = src.split()[0] in women or src.startswith(("My aunt", "Her mother", "My sister"))
        assert re.search(rf"\b{job[1][woman]}\b", tgt), (src, tgt)
        checked += 1
    assert checked > 50


def test_no_new_template_frame_is_a_held_out_sentence():
    """The clock and people templates and the calendar's were written after reading the held-out sentences' errors:
    none of their frames, whatever fills them, may be one of those sentences, so the held-out sets stay a fair test."""
    from transformer.training.augment import HOURS, JOBS, MONTHS, SEASONS
    from transformer.training.class_sets import labelled

    names = Names.load("data/names.json")
    drawn = set(names.first["m"] + names.first["f"])  # what fills {name}: the training side's names
    month, season = "|".join(m[0] for m in MONTHS), "|".join(s[0] for s in SEASONS)
    slots = {"name": r"(?P<name>\S+)", "hour": "|".join(HOURS["en"]), "a_job": "|".join(j[0] for j in JOBS),
             "month": month, "month_before": month, "season": f"(?i:{season})"}
    frames = [re.compile(re.sub(r"\\\{(\w+)\\\}", lambda m: f"({slots[m.group(1)]})", re.escape(t[0])) + "$")
              for t in TEMPLATES["clock and people"] + TEMPLATES["calendar"]]
    for lang in ("de", "fr"):
        for english, _ in labelled(lang):
            for frame in frames:
                made = frame.match(english)
                assert not made or ("name" in frame.groupindex and made.group("name") not in drawn), english


def test_the_calendar_says_each_month_and_season_in_the_target_language(monkeypatch):
    """Each calendar pair writes the month (and, in "comes after", the month before it) or the season the English
    names, in the target language: the frames teach months, not copies of English words."""
    from transformer.training import augment

    monkeypatch.setattr(augment, "TEMPLATES", {"calendar": TEMPLATES["calendar"]})
    seen = set()
    for rng in draws(600):
        for lang in ("de", "fr"):
            src, tgt = template_pair(lang, NAMES, rng)
            for en, de, fr in augment.MONTHS:
                if re.search(rf"\b{en}\b", src):
                    assert re.search(rf"\b{de if lang == 'de' else fr}\b", tgt, re.IGNORECASE), (src, tgt)
                    assert en in (de, fr) or not re.search(rf"\b{en}\b", tgt), (src, tgt)  # not copied
                    seen.add((lang, en))
            for en, de, fr_in, fr_subject in augment.SEASONS:
                if re.search(rf"\b{en}\b", src, re.IGNORECASE):
                    assert de in tgt if lang == "de" else (fr_in in tgt or fr_subject in tgt.lower()), (src, tgt)
                    seen.add((lang, en))
    assert len(seen) == 2 * (12 + 5)  # every month and season, in both languages


def test_no_calendar_frame_shares_most_of_its_words_with_a_held_out_sentence():
    """As for the classroom corpus (data/README.md): a training sentence that shares 60 % or more of its words with
    a held-out one would make that one an easy test."""
    from transformer.training.augment import MONTHS, SEASONS
    from transformer.training.class_sets import labelled

    words = lambda text: set(re.findall(r"[a-z']+", text.lower()))  # noqa: E731
    held = [words(en) for en, _ in labelled("de")]
    for english, *_ in TEMPLATES["calendar"]:
        for (month, *_), (before, *_), (season, *_) in zip(MONTHS, MONTHS[-1:] + MONTHS[:-1], SEASONS * 3):
            frame = words(english.format(month=month, month_before=before, season=season))
            near = max(held, key=lambda h: len(h & frame) / max(len(h), len(frame)))
            assert len(near & frame) / max(len(near), len(frame)) < 0.6, (english, near)
