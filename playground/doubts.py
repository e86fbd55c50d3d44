"""What a class can trust in a translation, free of gradio: the words the model was unsure of, marked (the panel,
the class's wall and its summary draw them the same way), and the warnings said under a translation (numbers and
names not as typed, a word left in English or made up, an article that does not fit, a source not in English, far
from the training data)."""
from __future__ import annotations

import functools
import html
import json
import re

from babel import Locale

from .i18n import ENGLISH, N_, Texts


def words_with_doubts(translations) -> list[tuple[str, bool]]:
    """The translations' words, each with whether it holds a piece the model was unsure of (Translation.unsure).
    Pieces are joined into words as the vocabulary writes them (▁ starts a word); symbols carried over are not the
    model's and are not among them."""
    said: list[list] = []
    for t in translations:
        for i, piece in enumerate(t.target_tokens):
            text, unsure = piece.replace("\u2581", " "), i in t.unsure
            if not said or text.startswith(" ") or not said[-1][0]:
                said.append([text.strip(), unsure])
            else:
                said[-1][0] += text
                said[-1][1] |= unsure
    return [(w, u) for w, u in said if w]


def marked(translations, _: Texts = ENGLISH) -> str:
    """The translations' words, those the model was unsure of marked, and the legend (in the language of `_`); ""
    when it was sure of every piece."""
    said = words_with_doubts(translations)
    if not any(u for u in (u for _w, u in said)):
        return ""
    line = " ".join(f'<mark class="unsure">{html.escape(w)}</mark>' if u else html.escape(w) for w, u in said)
    return (f'<p class="unsure-line">{line}</p><p class="unsure-legend"><mark class="unsure">' + _("word")
            + "</mark> " + _("the model was unsure here") + "</p>")


def marked_words(translation: str, unsure: list[str]) -> str:
    """The translation, escaped, with the words the model was unsure of marked."""
    doubts = set(unsure)
    return " ".join(f'<mark class="unsure">{html.escape(w)}</mark>' if w in doubts else html.escape(w)
                    for w in translation.split())


# -----------------------------------------------------------------------------
# Warnings a class can trust, said under the translation: a number or a name that did not come out as typed, a word
# left in English (transformer/words.py), a French article not elided, and a source that is not English. The
# translation is shown all the same; each warning says what to check.
#
# The language is told by py3langid (a small offline model inside the package, no download), among the languages a
# class is likely to type, and only when it is sure: short greetings ("Hi!") are too short to tell.


LANGUAGES = {"en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "nl": "Dutch",
             "pt": "Portuguese", "pl": "Polish", "tr": "Turkish", "sv": "Swedish", "da": "Danish", "ru": "Russian",
             "uk": "Ukrainian", "ar": "Arabic", "zh": "Chinese", "ja": "Japanese", "ko": "Korean", "el": "Greek"}
SURE = 0.8  # the language identifier's probability above which a source is called another language
CUT = N_("The text was longer than the model's positions and was cut to fit.")
# Capitalised words a translation rightly changes (Monday -> Montag, Germany -> Deutschland): never called names
TRANSLATED = set("""Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July
August September October November December Christmas Easter Halloween God English German French Spanish Italian
Portuguese Dutch Polish Russian Chinese Japanese Korean Arabic Turkish Greek Swedish European American African Asian
British Germany France Spain Italy Portugal Austria Switzerland Belgium Netherlands Holland Poland Russia China Japan
Korea India Turkey Greece Sweden Norway Denmark Finland Ireland Scotland England Britain Europe America Africa Asia
Australia Canada Mexico Brazil Egypt Morocco Algeria Tunisia Munich Cologne Vienna Rome Venice Florence Milan Naples
Lisbon Moscow Warsaw Prague Athens Brussels Geneva London Mr Mrs Ms Dr Mister Miss Sir Madam""".split())
ABBREVIATION = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|St)\.\s*$")  # a full stop that does not end a sentence
NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")  # 25, 1989, 10:45, 3.50, 2,000: one number, however it is written


@functools.lru_cache(maxsize=1)
def _identifier():
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_modelpath(MODEL_DIR / MODEL_FILE, norm_probs=True)
    identifier.set_languages(list(LANGUAGES))
    return identifier


def language(text: str) -> tuple[str, float]:
    """(ISO code, probability) of the language `text` is most likely written in, among LANGUAGES."""
    code, prob = _identifier().classify(text)
    return code, float(prob)


def foreign_language(text: str) -> str | None:
    """The code of the language `text` is surely written in when it is not English (two words or more), else None."""
    if len(re.findall(r"\w+", text)) < 2:
        return None
    code, prob = language(text)
    return None if code == "en" or prob < SURE else code


def language_name(code: str, _: Texts) -> str:
    """A language's name in the page's language: German, Deutsch, allemand."""
    return Locale.parse(code).get_display_name(_.language) if _.language != "en" else LANGUAGES[code]


def not_english(text: str, _: Texts = ENGLISH) -> str:
    """A sentence when `text` is surely not English (two words or more), else ""."""
    code = foreign_language(text)
    if code is None:
        return ""
    return _("This looks like {language}, not English: the model reads English only, so its translation will make "
             "little sense.", language=language_name(code, _))


def digits(number: str) -> str:
    return re.sub(r"\D", "", number)


# a one-digit number as the page's languages may write it in words, by the words' beginnings ("3 cats" -> "drei
# Katzen", "the 2nd" -> "der zweite"); "un" and "ein" begin many words, so a 1 is rarely doubted
DIGIT_WORDS = [("zero", "null", "zéro"), ("one", "first", "ein", "erst", "un", "premi"),
               ("two", "second", "zwei", "zwo", "deux"), ("three", "third", "drei", "dritt", "trois"),
               ("four", "vier", "quatr"), ("five", "fifth", "fünf", "cinq"), ("six", "sechs"),
               ("seven", "sieben", "siebt", "sept"), ("eight", "acht", "huit"),
               ("nine", "ninth", "neun", "neuf", "neuv")]


def changed_numbers(source: str, translation: str) -> list[str]:
    """The source's numbers whose digits the translation does not write, in order, as one of its own numbers
    (10:45 may come out as 10.45, 2,000 as 2.000); a one-digit number may instead be written as a word (DIGIT_WORDS),
    but not as a longer number (2 -> 12)."""
    written = {digits(n) for n in NUMBER.findall(translation)}
    words = re.findall(r"[^\W\d_]+", translation.lower())
    return [n for n in NUMBER.findall(source) if digits(n) not in written
            and not (len(digits(n)) == 1 and any(w.startswith(DIGIT_WORDS[int(n)]) for w in words))]


def lost_names(source: str, translation: str, tokenizer, framed: list[str] = ()) -> list[str]:
    """Names in the source the translation does not write unchanged: capitalised words, not the first of a sentence,
    that the model cuts into several pieces (a word it knows whole it may rightly translate), and not in TRANSLATED;
    and the names a name frame names in any case (`framed`: TrainingWords.framed_names), which the translation
    writes as typed or capitalised."""
    lost = [name for name in framed if name.capitalize() not in TRANSLATED  # "this is germany": Deutschland
            and not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", translation, re.IGNORECASE)]
    if source.upper() == source:
        return lost  # shouting: every word is capitalised
    for match in re.finditer(r"(?<![\w'’])[A-ZÀ-Þ][\w'’-]*", source):
        word = re.sub(r"['’]s$", "", match.group()).rstrip("'’-")
        before = source[: match.start()]
        first = not before.strip() or (re.search(r"[.!?:]\s*$", before) and not ABBREVIATION.search(before))
        if first or word == "I" or word in TRANSLATED or len(tokenizer.encode(word)) < 2:
            continue
        kept = re.search(rf"(?<!\w){re.escape(word)}(?:s|['’]s?)?(?!\w)", translation)  # Annas, Lukas'
        if not kept and word not in lost:
            lost.append(word)
    return lost


# French writes "l'écureuil", never "le écureuil": an article or a pronoun left whole before a vowel is a slip (none of
# our 1,581 written references has one); "de un à dix", "le onze", "le oui" and letters ("de A à B") are not
UNELIDED = re.compile(r"(?<![\w'’-])(le|la|de|je|me|te|se|ne|que|jusque|lorsque|puisque) +"
                      r"([aeiouàâäéèêëîïôöùûü][\w'’-]*)", re.IGNORECASE)
ELIDED_ANYWAY = {"un", "une", "onze", "onzième", "oui", "ouistiti", "ouate", "et", "ou"}


def missed_elisions(translator, translation: str) -> list[tuple[str, str]]:
    """(as written, as French writes it) for each article or pronoun a French translation left whole before a vowel
    ("le écureuil" -> "l'écureuil"); none for a model that does not translate into French (or does not say)."""
    if not translator.metrics.train_config.get("pair", "").endswith("-fr"):
        return []
    slips = []
    for match in UNELIDED.finditer(translation):
        word, after = match.groups()
        if after.lower() in ELIDED_ANYWAY or len(after) == 1 or after.isupper():
            continue
        slips.append((match.group(0), f"{word[:-1]}'{after}"))
    return slips


def findings(translator, source: str, translation: str) -> dict[str, list]:
    """What the checks found in one translated sentence, by kind: "foreign" (the source is not English: said
    instead of the names and words, which would name the source's own), "numbers", "names", "left" (in English),
    "made" (made up), "misfits" (articles), "slips" (French elisions)."""
    foreign = foreign_language(source)
    words = translator.words
    return {"foreign": [foreign] if foreign else [],  # its language's code
            "numbers": changed_numbers(source, translation),
            "names": [] if foreign else lost_names(source, translation, translator.tokenizer,
                                                   words.framed_names(source) if words else []),
            "left": words.left_in_english(source, translation) if words and not foreign else [],
            "made": words.made_up(source, translation) if words and not foreign else [],
            "misfits": words.misfits(translation) if words else [],
            "slips": missed_elisions(translator, translation)}


def say(translator, found: dict[str, list], _: Texts = ENGLISH) -> list[str]:
    """findings in plain words (in the language of `_`), one sentence a kind (several sentences' findings merged:
    each kind said once)."""
    return found_said(found, translator.words.language if translator.words else None, _)


def found_said(found: dict[str, list], target: str | None, _: Texts = ENGLISH) -> list[str]:
    """`say`, from what was found and the translation's language (a code), as a record keeps them (`noticed`)."""
    said = [_("This looks like {language}, not English: the model reads English only, so its translation will make "
              "little sense.", language=language_name(code, _)) for code in found["foreign"]]
    listed = {kind: ", ".join(items) for kind, items in found.items() if kind not in ("foreign", "slips")}
    if found["numbers"]:
        said.append(_("Check the numbers: {numbers} did not come out as typed.", numbers=listed["numbers"]))
    if found["names"]:
        said.append(_.plural("Check the names: {names} did not come out as typed (the model may not know it).",
                             "Check the names: {names} did not come out as typed (the model may not know them).",
                             len(found["names"]), names=listed["names"]))
    if found["left"]:
        said.append(_.plural("Check the words: {words} came out in English (the model may not know it, and copied "
                             "it).", "Check the words: {words} came out in English (the model may not know them, and "
                             "copied them).", len(found["left"]), words=listed["left"]))
    named = language_name(target, _) if target in LANGUAGES else ""  # the translation's language
    if found["made"]:
        said.append(_.plural("Check the words: {words} is in no {language} dictionary and in none of the "
                             "translations the model learned from (it may have made it up from pieces).",
                             "Check the words: {words} are in no {language} dictionary and in none of the "
                             "translations the model learned from (it may have made them up from pieces).",
                             len(found["made"]), words=listed["made"], language=named))
    if found["misfits"]:
        misfits, language = ", ".join(_.quoted(m) for m in found["misfits"]), named or _("translation")
        said.append(_.plural("Check the {language}: {words}: the article does not fit its noun (the model slipped "
                             "here).", "Check the {language}: {words}: the article does not fit their nouns (the "
                             "model slipped here).", len(found["misfits"]),
                             language=language, words=misfits))
    if found["slips"]:
        said.append(_("Check the French: {slips} (the model slipped here).",
                      slips=", ".join(_("{typed} is written {right}", typed=_.quoted(a), right=_.quoted(b))
                                      for a, b in found["slips"])))
    return said


def warnings(translator, source: str, translation: str) -> list[str]:
    """Every warning for one translated sentence, in plain words."""
    return say(translator, findings(translator, source, translation))


def warnings_under(translator, sources: str | list[str], translations, _: Texts = ENGLISH) -> list[str]:
    """What the page says under a translation (a Translation of `source`, or each sentence's of a text), in the
    language of `_`: the symbols carried over, text far from what the model knows, and every warning, each kind said
    once for all the sentences ("Check the words: Garik, Sämchen ..."); empty when there is nothing to say."""
    return said(noticed(translator, sources, translations), _)


def noticed(translator, sources: str | list[str], translations) -> dict:
    """What warnings_under says, as what it is rather than in words (JSON, any language can say it: `said`): per
    sentence the symbols carried over and how familiar its text is, the findings of every sentence merged, and the
    translation's language. The class's wall keeps this, so that every screen says it in its reader's language."""
    if isinstance(sources, str):
        sources, translations = [sources], [translations]
    found: dict[str, list] = {}
    for source, t in zip(sources, translations):
        for kind, items in findings(translator, source, t.text).items():
            found[kind] = list(dict.fromkeys(found.get(kind, []) + items))  # a word named once (JSON: pairs as lists)
    seen = [translator.familiarity(source) for source in sources]
    return {"carried": [list(t.carried) for t in translations],
            "familiar": [{"unknown": f.unknown, "far": f.far, "per_word": f.pieces_per_word} for f in seen],
            "found": found, "target": translator.words.language if translator.words else None}


def kept(record: dict, cut: bool = False) -> str:
    """A `noticed` record (and whether the text was cut to fit) as the class's wall keeps it: `notice_in` says it."""
    return json.dumps({"noticed": record, "cut": cut}, ensure_ascii=False)


def notice_in(stored: str, _: Texts = ENGLISH) -> str:
    """What the wall keeps under a sentence, in the language of `_`: a record (`kept`), said in it; a notice kept as
    words (a text of several sentences, as its sender read it) as it is."""
    try:
        record = json.loads(stored) if stored.startswith("{") else None
    except ValueError:
        record = None
    if not isinstance(record, dict) or "noticed" not in record:
        return stored
    return " ".join(([_(CUT)] if record.get("cut") else []) + said(record["noticed"], _))


def said(record: dict, _: Texts = ENGLISH) -> list[str]:
    """A `noticed` record in plain words, in the language of `_`: each kind said once."""
    out = [s for symbols, seen in zip(record["carried"], record["familiar"])
           for s in (carried_said(symbols, _), unfamiliar_said(seen, _)) if s]
    return list(dict.fromkeys(out + found_said(record["found"], record["target"], _)))


def carried(translation, _: Texts = ENGLISH) -> str:
    """A sentence naming the symbols set aside from the source and put back as typed (Translation.carried), else ""."""
    return carried_said(translation.carried, _)


def carried_said(symbols: list[str], _: Texts = ENGLISH) -> str:
    if not symbols:
        return ""
    one = len(symbols) == 1 and len(symbols[0]) == 1
    return _.plural("Carried over as typed: {symbols} (the model has no pieces for it, so it translated the words "
                    "around it).", "Carried over as typed: {symbols} (the model has no pieces for them, so it "
                    "translated the words around them).", 1 if one else 2, symbols=" ".join(symbols))


def unfamiliar(translator, text: str, _: Texts = ENGLISH) -> str:
    """A plain sentence when `text` lies far outside what the model was trained on, else "" (Translator.familiarity)."""
    seen = translator.familiarity(text)
    return unfamiliar_said({"unknown": seen.unknown, "far": seen.far, "per_word": seen.pieces_per_word}, _)


def unfamiliar_said(seen: dict, _: Texts = ENGLISH) -> str:
    if seen["unknown"]:
        return _("This text has characters the model has never seen (its vocabulary spells them byte by byte, or "
                 "reads each run of them as one unknown piece): it was trained on English picture captions and "
                 "everyday sentences, so expect a poor translation.")
    if seen["far"]:
        return _("The model splits these words into many small pieces ({n} per word): they are far from the picture "
                 "captions and everyday sentences it was trained on, so expect a poor translation.",
                 n=_.number(seen["per_word"], 1))
    return ""
