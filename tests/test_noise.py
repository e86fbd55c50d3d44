"""Text as a class types it (transformer/training/noise.py): each kind of typing noise, and the draw of the mix."""
from __future__ import annotations

import pytest

from transformer.training.noise import (NOISE_MIX, PERTURBATIONS, american, british, lower_names, no_apostrophes,
                                        noisy_sources, perturb)


def test_apostrophes_inside_words_are_dropped_and_quotes_kept():
    assert no_apostrophes("I don't like homework, I'm sure it's hard.") == "I dont like homework, Im sure its hard."
    assert no_apostrophes("Let’s go! What's up?") == "Lets go! Whats up?"
    assert no_apostrophes("He said 'hello'.") == "He said 'hello'."  # quotation marks are not in a word


def test_british_spellings_replace_american_ones_whole_words_only():
    assert british("What is your favorite color?") == "What is your favourite colour?"
    assert british("Favorite colors at the center") == "Favourite colours at the centre"
    assert british("We organized it and realize it.") == "We organised it and realise it."
    assert british("The prize has a big size.") == "The prize has a big size."  # not -ize verbs
    assert british("Colorado is a discolored state.") == "Colorado is a discolored state."  # whole words only


def test_american_spellings_undo_british_ones():
    assert american("My favourite colour is grey.") == "My favorite color is gray."
    assert american(british("my favorite color")) == "my favorite color"


def test_capitals_inside_a_sentence_go_missing_and_the_first_stays():
    assert lower_names("I live in Manchester with Anna.") == "I live in manchester with anna."
    assert lower_names("Hello, Lukas!") == "Hello, lukas!"
    assert lower_names("Tom and I went to NASA.") == "Tom and I went to NASA."  # a word in capitals stays


def test_the_evaluation_names_every_kind_and_refuses_others():
    assert {"none", "lower", "nopunct", "upper", "noapos", "british"} <= set(PERTURBATIONS)
    assert perturb("I don't know.", "noapos") == "I dont know."
    assert perturb("my favorite color", "british") == "my favourite colour"
    with pytest.raises(ValueError, match="noapos"):
        perturb("x", "typo")


def test_the_noise_perturbs_about_its_share_with_every_kind_and_repeats_by_seed():
    assert abs(sum(w for w, _ in NOISE_MIX) - 1.0) < 1e-9
    sources = ["I don't like my favorite color, Anna."] * 4000
    noisy = noisy_sources(sources, 0.3, seed=7)
    assert noisy == noisy_sources(sources, 0.3, seed=7) and noisy != noisy_sources(sources, 0.3, seed=8)
    changed = sum(n != s for n, s in zip(noisy, sources)) / len(sources)
    assert 0.25 < changed < 0.32  # a few draws leave this sentence as it was (american() of American text)
    seen = set(noisy)
    for kind in ("i don't like my favorite color, anna.", "I dont like my favorite color, Anna.",
                 "i dont like my favorite color, anna", "I don't like my favourite colour, Anna.",
                 "I don't like my favorite color, anna.", "I DON'T LIKE MY FAVORITE COLOR, ANNA."):
        assert kind in seen
    assert noisy_sources(sources, 0.0, seed=7) == sources
