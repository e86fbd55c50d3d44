"""Warnings under the translation (playground/doubts.py): numbers and names not as typed, a source not in English."""
from __future__ import annotations

from playground import doubts


def test_a_number_is_changed_unless_its_digits_come_out_as_one_number():
    assert doubts.changed_numbers("12345 67890", "12455509.") == ["12345", "67890"]
    assert doubts.changed_numbers("It costs 25 euros.", "Es kostet 255 Euro.") == ["25"]
    assert doubts.changed_numbers("The train leaves at 10:45.", "Der Zug fährt um 10.45 Uhr.") == []
    assert doubts.changed_numbers("It holds 2,000 people.", "Sie fasst 2.000 Leute.") == []
    assert doubts.changed_numbers("The train leaves at 10:45.", "Le train part à 10 heures.") == ["10:45"]
    assert doubts.changed_numbers("I have 3 cats.", "Ich habe drei Katzen.") == []  # a small number as a word
    assert doubts.changed_numbers("Bus 47 and bus 74.", "Bus 74 und Bus 47.") == []  # each kept, order of words free


def test_a_one_digit_number_is_checked_both_ways():
    assert doubts.changed_numbers("I am 2 years old.", "Ich bin 12 Jahre alt.") == ["2"]  # one digit became two
    assert doubts.changed_numbers("I am 12 years old.", "Ich bin 2 Jahre alt.") == ["12"]  # two became one
    assert doubts.changed_numbers("I have 3 cats.", "Ich habe Katzen.") == ["3"]  # lost
    assert doubts.changed_numbers("I have 3 cats.", "J'ai 4 chats.") == ["3"]
    assert doubts.changed_numbers("I have 3 cats.", "J'ai 3 chats.") == []
    assert doubts.changed_numbers("It is the 3rd day.", "C'est le troisième jour.") == []  # an ordinal in words
    assert doubts.changed_numbers("Room 7, please.", "Zimmer sieben, bitte.") == []


def test_a_name_is_lost_when_the_translation_does_not_write_it(tokenizer):
    # the tiny tokenizer knows the toy words only: any name is cut into several pieces
    assert doubts.lost_names("My name is Anna.", "Mein Name ist Ananananana.", tokenizer) == ["Anna"]
    assert doubts.lost_names("My name is Anna.", "Ich heiße Anna.", tokenizer) == []
    assert doubts.lost_names("Mrs. Smith is Anna's teacher.", "Frau Smith ist Annas Lehrerin.", tokenizer) == []
    assert doubts.lost_names("Mrs. Smith is here.", "Frau Sititit ist hier.", tokenizer) == ["Smith"]  # not a sentence start
    assert doubts.lost_names("Anna is here. Ben too.", "Sie ist hier.", tokenizer) == []  # sentence starts: unsure
    assert doubts.lost_names("We met on Monday in Germany.", "Wir trafen uns am Montag in Deutschland.", tokenizer) == []
    assert doubts.lost_names("WHERE IS ANNA?", "Wo ist sie?", tokenizer) == []


def test_a_source_in_another_language_is_named_only_when_the_identifier_is_sure():
    assert "German" in doubts.not_english("Ich habe morgen einen Mathetest.")
    assert "French" in doubts.not_english("Je voudrais un café, s'il vous plaît.")
    for english in ("I have a math test tomorrow.", "My name is Anna.", "Nice to meet you.", "see you later",
                    "Hi!", "Hello!", "A dog is running through the snow."):
        assert doubts.not_english(english) == "", english


def test_the_warnings_of_one_sentence_together(translator):
    said = doubts.warnings(translator, "Wo ist der Bahnhof, bitte? Gleis 12.", "Where 21.")
    assert any("German" in s for s in said) and any("12" in s for s in said)
    assert not any("names" in s for s in said)  # a foreign sentence's capitals are no names to check
    assert doubts.warnings(translator, "a man walks in the park", "ein mann geht im park") == []


def test_what_the_checks_found_is_kept_as_what_it_is_and_said_in_each_readers_language(translator):
    """A French phone's card on a German projector: the wall keeps what the checks found (a record, not words), and
    each screen says it in its own language, the words the page says under the translation; a notice kept as words
    (an older card, a text of several sentences) is shown as it is."""
    from types import SimpleNamespace

    from playground.classroom import pages
    from playground.classroom.store import ClassState
    from playground.i18n import Texts

    source, out = "I am 2 years old 東京.", SimpleNamespace(text="Ich bin 12 Jahre alt.", carried=["🐶"])
    stored = doubts.kept(doubts.noticed(translator, source, out), cut=True)
    for language, words in (("en", "Check the numbers"), ("de", "Prüfe die Zahlen"), ("fr", "Vérifie les nombres")):
        _ = Texts(language)
        said = doubts.notice_in(stored, _)
        assert said == " ".join([_(doubts.CUT)] + doubts.warnings_under(translator, source, out, _)), language
        assert words in said and "2" in said and "🐶" in said, said
        card = dict(id=1, nickname="", pair="en-fr", text=source, translation=out.text, unsure="[]", notice=stored)
        state = ClassState(id=1, code="ABCDEFGH", version=1, students=1, teacher={}, wall=[card], poll=None)
        wall = pages.wall_html(state, teacher=True, _=_)
        assert words in wall and '"noticed"' not in wall
    assert doubts.notice_in("Vérifie les nombres : 2.") == "Vérifie les nombres : 2."


def test_text_far_from_what_the_model_knows_is_said_in_plain_words(translator):
    assert "characters the model has never seen" in doubts.unfamiliar(translator, "a man walks 東京 the park")
    assert "per word" in doubts.unfamiliar(translator, "mwkbtp lrdgnh")
    assert doubts.unfamiliar(translator, "a man walks in the park") == ""


def test_symbols_carried_over_are_said_and_the_unsure_words_marked_with_a_legend():
    from types import SimpleNamespace

    from playground.doubts import marked

    t = SimpleNamespace(carried=["🐶❤️"], target_tokens=["▁Ich", "▁liebe", "▁mein", "en", "▁<b>", "."],
                        unsure=[3, 4])
    assert doubts.carried(t) == ("Carried over as typed: 🐶❤️ (the model has no pieces for them, so it translated "
                                 "the words around them).")
    assert doubts.carried(SimpleNamespace(carried=[])) == ""
    html_ = marked([t])
    assert 'Ich liebe <mark class="unsure">meinen</mark> <mark class="unsure">&lt;b&gt;.</mark>' in html_
    assert "the model was unsure here" in html_ and "<b>" not in html_  # escaped: a piece is never markup
    assert marked([SimpleNamespace(target_tokens=["▁Hallo", "!"], unsure=[])]) == ""  # sure of every piece: nothing


# English words of a toy training corpus: "pizza" and "Tom" both sides write; "bananas" only the English side
WORD_PAIRS = (["The bananas are yellow.", "the bananas are ripe", "A pizza is hot.", "A pizza is cold.", "Tom eats.",
               "Tom runs."],
              ["Die Bananen sind gelb.", "die Bananen sind reif", "Eine Pizza ist heiß.", "Eine Pizza ist kalt.",
               "Tom isst.", "Tom rennt."])


def test_a_word_left_in_english_is_one_the_training_references_would_not_keep():
    from transformer.words import TrainingWords

    words = TrainingWords.count(*WORD_PAIRS)
    assert {"bananas", "are", "pizza"} == words.english  # lowercase twice or more, three letters or more ("The": once)
    assert {"pizza", "tom"} == words.both
    left = words.left_in_english
    assert left("I like bananas.", "Ich mag Bananas.") == ["Bananas"]  # a lowercase word, in any case
    assert left("Bananas are yellow.", "Bananas sind gelb.") == ["Bananas"]  # opening a sentence: a word all the same
    assert left("BANANAS ARE YELLOW", "BANANAS SIND GELB") == ["BANANAS"]  # shouted
    assert left("Where is the tadpole?", "Wo ist die Tadpole?") == ["Tadpole"]  # never seen: left in English
    assert left("I like pizza. Tom too.", "Ich mag Pizza. Tom auch.") == []  # the references keep them too
    assert left("Sofia likes bananas.", "Sofia mag Bananen.") == []  # a word the sources never write in lowercase
    assert left("I met Bananas today.", "Ich traf Bananas heute.") == []  # capitalised within a sentence: a name
    assert left("an ox and bananas, bananas", "an ox und bananas, Bananas") == ["bananas", "Bananas"]  # short: not


def test_a_name_a_frame_names_is_meant_to_be_copied_in_any_case_and_a_word_after_i_am_is_still_a_word(translator,
                                                                                                   monkeypatch):
    """"my name is lukas": a name, however it is cased: copied, no warning; lost, the names' warning. "I am tired":
    a word the English sources write, still warned when copied; "I am lukas": a name."""
    from transformer.words import TrainingWords

    words = TrainingWords.count(WORD_PAIRS[0] + ["I am tired.", "You are tired.", "My name is Tom.", "This is my dog."],
                                WORD_PAIRS[1] + ["Ich bin müde.", "Du bist müde.", "Ich heiße Tom.", "Das ist mein Hund."])
    assert words.framed_names("my name is lukas and i am lukas too. This is Mia. I am tired.") == ["lukas", "Mia"]
    left = words.left_in_english
    assert left("my name is lukas", "ich heiße lukas") == []  # was ["lukas"]: "came out in English"
    assert left("i am lukas", "ich bin lukas") == [] and left("call me noor", "nenn mich noor") == []
    assert left("I am tired", "Ich bin tired") == ["tired"]  # not a name: the sources write it in lowercase
    assert left("my name is lukas and I like tadpoles", "ich heiße lukas und mag tadpoles") == ["tadpoles"]
    monkeypatch.setattr(translator, "words", words)
    assert doubts.warnings(translator, "my name is lukas", "Ich heiße Lukas.") == []
    assert "Check the names: lukas did not come out as typed (the model may not know it)." in doubts.warnings(
        translator, "my name is lukas", "Ich heiße lucas.")
    assert doubts.warnings(translator, "This is my dog.", "Das ist mein Hund.") == []  # "my": too short for a name
    assert not [w for w in doubts.warnings(translator, "this is germany", "Das ist Deutschland")  # rightly
                if "names" in w]  # translated, as a country's name is


def test_a_word_left_in_english_is_said_when_the_checkpoint_has_its_training_words(translator, monkeypatch):
    from transformer.words import TrainingWords

    assert translator.words is None  # not loaded from a checkpoint with words.json: nothing to say
    assert doubts.warnings(translator, "Bananas are yellow.", "Bananas sind gelb.") == []
    monkeypatch.setattr(translator, "words", TrainingWords.count(*WORD_PAIRS))
    assert doubts.warnings(translator, "Bananas are yellow.", "Bananas sind gelb.") == [
        "Check the words: Bananas came out in English (the model may not know it, and copied it)."]
    assert doubts.warnings(translator, "Bananas are yellow.", "Bananen sind gelb.") == []


GERMAN = ["Die Schokolade ist gut.", "Hund und Katze.", "Ich trinke Tee.", "Eine Stange Brot.", "Der Hund bellt.",
          "Ich sehe einen Kuchen.", "Anna-Lena lacht.", "Eine Schokolade.", "Die Schokolade schmilzt."]


def test_a_word_no_reference_writes_nor_dictionary_knows_is_made_up_unless_german_builds_it_from_written_words():
    from transformer.words import TrainingWords

    german = TrainingWords.count(["x"] * len(GERMAN), GERMAN, "de")
    assert {"schokolade", "stange", "hund", "anna", "lena"} <= german.written and german.language == "de"
    made = german.made_up
    assert made("I see a coconut.", "Ich sehe einen Kokosnut.") == ["Kokosnut"]
    assert made("I see a coconut.", "Ich sehe einen Kuchen.") == []
    assert made("a chocolate bar", "eine Schokoladenstange") == []  # a compound of written words, with its link
    assert made("the dogs", "Die Hunde, der Hundes") == []  # no reference writes them; the dictionary knows them
    assert made("a tadpole", "eine Kaulquappe, eine Kaulquapper") == ["Kaulquapper"]
    assert made("Anna is here.", "Anna-Lena ist Anna") == []  # each part written; a name typed in the source
    assert made("I see Görsev.", "Ich sehe Görsev und Görsevev, Görsevev.") == ["Görsevev"]  # said once
    assert made("dog tea", "eine Hundtee") == ["Hundtee"]  # "hund" + "tee": a part too short to build on
    nested = TrainingWords.count(["x"], ["unter dem Tisch"], "de")  # "unter": a prefix and a written word
    assert nested.made_up("x", "unter" * 40 + "xq") == ["unter" * 40 + "xq"]  # at once: each tail looked at once
    assert made("the dog barks", "Der Hund anbellt, zerbellt, bellt") == []  # a verb's prefix before a written word
    assert made("a hot dog", "eine Kokosnut-Hund") == ["Kokosnut-Hund"]  # one part nowhere written nor known
    assert made("dog snus", "eine Hundsnus") == ["Hundsnus"]  # the dictionary says whole words, not a compound's parts
    french = TrainingWords.count(["x"], ["J'aime l'araignée et la Schokolade et la stange."], "fr")
    assert french.made_up("I like the spider.", "J'aime l'araignée.") == []  # "l'": shorter than a word
    assert french.made_up("I like the alien.", "J'aime l'alien.") == []  # typed in the source
    assert french.made_up("chocolate bar", "la schokoladenstange") == ["schokoladenstange"]  # French: no compounds
    verbs = TrainingWords.count(["x"], ["Il faut utiliser la table."], "fr")
    assert verbs.made_up("He used the table.", "Il utilisait la table.") == []  # a form the dictionary knows
    assert verbs.made_up("He used the table.", "Il utilisfait la table.") == ["utilisfait"]
    assert verbs.made_up("a counter", "une comptère, ils comptèrent") == ["comptère"]  # a real stem's wrong form
    assert TrainingWords(frozenset(), frozenset()).made_up("a coconut", "ein Kokosnut") == []  # no words counted
    assert TrainingWords.count(["x"], ["Der Hund."], "xx").made_up("dogs", "Der Hunde") == ["Hunde"]  # no dictionary


def test_a_compounds_short_last_word_builds_it_where_the_references_show_that_word_a_noun():
    """"Partyhut": "hut" is shorter than a compound's parts may be, but the references write it as a noun with
    its articles (its gender kept): a compound of it is not made up. Three letters the references never write with
    an article ("tee" here, "nut") still build nothing, and nor does a joining letter before a short noun."""
    from transformer.words import TrainingWords

    german = TrainingWords.count(["x"] * 5, ["Die Party ist toll.", "Der Hut ist rot.", "Ich sehe einen Hut.",
                                             "Der Hut fliegt.", "Ich trinke Tee und Kokos."], "de")
    assert german.genders["hut"] == "m" and "tee" not in german.genders
    made = german.made_up
    assert made("a party hat", "ein Partyhut") == []
    assert made("party tea", "ein Partytee, eine Kokosnut") == ["Partytee", "Kokosnut"]
    assert made("a party hat", "ein Partyenhut") == ["Partyenhut"]  # "party" + "en" + "hut": no joining letter


def test_a_german_article_that_fits_no_gender_of_its_noun_is_a_misfit():
    from transformer.words import TrainingWords

    german = TrainingWords.count(["x"] * 9, ["Der Hahn kräht.", "Den Hahn sehe ich.", "Ein Hahn.", "Das Feuer.",
                                             "Ein Feuer.", "Das Feuer brennt.", "Das Band.", "Die Band.", "Das Band ist."],
                                 "de")
    assert german.genders == {"hahn": "m", "feuer": "n"}  # "band": das and die, no gender fits nine in ten
    assert german.misfits("Ich sehe die Hahn und einen Feuer.") == ["die Hahn", "einen Feuer"]
    assert german.misfits("Die Wasserhahn ist neu, das Lagerfeuer auch.") == ["Die Wasserhahn"]  # a compound's last
    assert german.misfits("Der Hahn, dem Feuer, des Hahns, die Hähne, die Band, die Wasser-Hahn") == ["die Wasser-Hahn"]
    assert german.misfits("Das ist die schöne Hahn. Ich sehe das hahn.") == []  # not right before, not a noun
    assert german.misfits("Die Feuer, das Hahn") == ["das Hahn"]  # "Feuer": its plural is spelt the same
    french = TrainingWords.count(["x"] * 6, ["La route.", "Une route.", "Sa route.", "Le porte-monnaie.",
                                             "Un porte-monnaie.", "Un porte-monnaie et la porte."], "fr")
    assert french.genders == {"route": "f", "porte-monnaie": "m"}  # French: the whole word ("porte": once)
    assert french.misfits("Un route, le porte-monnaie, ma route, la Route, du route") == ["Un route", "du route"]
    assert TrainingWords.count(["x"], ["Der Hahn."] * 3, "nl").misfits("De Hahn") == []  # no articles known


def test_a_made_up_word_is_said_when_the_checkpoint_has_its_training_words(translator, monkeypatch):
    from transformer.words import TrainingWords

    assert doubts.warnings(translator, "I see a coconut.", "Ich sehe einen Kokosnut.") == []  # no words.json
    monkeypatch.setattr(translator, "words", TrainingWords.count(["x"] * len(GERMAN), GERMAN, "de"))
    assert doubts.warnings(translator, "I see a coconut.", "Ich sehe einen Kokosnut.") == [
        "Check the words: Kokosnut is in no German dictionary and in none of the translations the model learned from "
        "(it may have made it up from pieces)."]
    assert doubts.warnings(translator, "I see the chocolate.", "Ich sehe einen Schokolade.") == [
        "Check the German: “einen Schokolade”: the article does not fit its noun (the model slipped here)."]
    assert doubts.warnings(translator, "Ich sehe einen Kokosnut.", "Ich sehe einen Kokosnut.") == [
        doubts.not_english("Ich sehe einen Kokosnut.")]  # not English: the source says why already


def test_what_several_sentences_set_off_is_said_once_a_kind_each_word_once(translator, monkeypatch):
    from types import SimpleNamespace

    from transformer.words import TrainingWords

    monkeypatch.setattr(translator, "words", TrainingWords.count(["x"] * len(GERMAN), GERMAN, "de"))
    sources = ["I see a coconut.", "I see a dog tea.", "I see a coconut and a cake.", "I see 12 dogs."]
    made = ["Ich sehe einen Kokosnut.", "Ich sehe einen Hundtee.", "Ich sehe einen Kokosnut und Kuchen.",
            "Ich sehe 13 Hunde."]
    said = doubts.warnings_under(translator, sources, [SimpleNamespace(text=t, carried=[]) for t in made])
    assert [s for s in said if s.startswith("Check")] == [
        "Check the numbers: 12 did not come out as typed.",
        "Check the words: Kokosnut, Hundtee are in no German dictionary and in none of the translations the model "
        "learned from (it may have made them up from pieces)."]
    assert doubts.warnings_under(translator, sources[0], SimpleNamespace(text=made[0], carried=[])) == \
        doubts.warnings_under(translator, sources[:1], [SimpleNamespace(text=made[0], carried=[])])  # one: as before


def test_training_words_saved_in_a_checkpoint_load_back_and_a_checkpoint_without_them_has_none(tmp_path):
    from transformer.words import TrainingWords

    words = TrainingWords.count(*WORD_PAIRS, "de")
    words.save(tmp_path)
    assert TrainingWords.load(tmp_path) == words and words.written and words.language == "de"
    assert TrainingWords.load(tmp_path / "elsewhere") is None


def test_a_french_article_left_whole_before_a_vowel_is_a_slip_to_check(translator, monkeypatch):
    from types import SimpleNamespace

    french = SimpleNamespace(metrics=SimpleNamespace(train_config={"pair": "en-fr"}))
    assert doubts.missed_elisions(french, "Où est le écureuil ?") == [("le écureuil", "l'écureuil")]
    assert doubts.missed_elisions(french, "La araignée et de elle.") == [("La araignée", "L'araignée"),
                                                                       ("de elle", "d'elle")]
    for right in ("Où est l'écureuil ?", "de un à dix", "le onze", "Tracez une ligne de A à B.", "ce que UNESCO dit",
                  "à côté de et sur la clôture", "le héros", "la yourte"):  # h and y: French keeps some whole
        assert doubts.missed_elisions(french, right) == [], right
    german = SimpleNamespace(metrics=SimpleNamespace(train_config={"pair": "en-de"}))
    assert doubts.missed_elisions(german, "le écureuil") == []  # only a model that writes French is held to it
    monkeypatch.setattr(translator.metrics, "train_config", {"pair": "en-fr"})
    assert doubts.warnings(translator, "The spider is here.", "La araignée est ici.") == [
        "Check the French: “La araignée” is written “L'araignée” (the model slipped here)."]
