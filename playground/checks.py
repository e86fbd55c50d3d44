"""Warnings a class can trust, said under the translation: a number or a name that did not come out as typed, and a
source that is not English. The translation is shown all the same; each warning says what to check.

The language is told by py3langid (a small offline model inside the package, no download), among the languages a
class is likely to type, and only when it is sure: short greetings ("Hi!") are too short to tell.
"""
from __future__ import annotations

import functools
import re

LANGUAGES = {"en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "nl": "Dutch",
             "pt": "Portuguese", "pl": "Polish", "tr": "Turkish", "sv": "Swedish", "da": "Danish", "ru": "Russian",
             "uk": "Ukrainian", "ar": "Arabic", "zh": "Chinese", "ja": "Japanese", "ko": "Korean", "el": "Greek"}
SURE = 0.8  # the language identifier's probability above which a source is called another language
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


def not_english(text: str) -> str:
    """A sentence when `text` is surely not English (two words or more), else ""."""
    if len(re.findall(r"\w+", text)) < 2:
        return ""
    code, prob = language(text)
    if code == "en" or prob < SURE:
        return ""
    return (f"This looks like {LANGUAGES[code]}, not English: the model reads English only, so its translation "
            "will make little sense.")


def digits(number: str) -> str:
    return re.sub(r"\D", "", number)


def changed_numbers(source: str, translation: str) -> list[str]:
    """The source's numbers of two or more digits whose digits the translation does not write, in order, as one of
    its own numbers (10:45 may come out as 10.45, 2,000 as 2.000; a small number may be written as a word)."""
    written = {digits(n) for n in NUMBER.findall(translation)}
    return [n for n in NUMBER.findall(source) if len(digits(n)) >= 2 and digits(n) not in written]


def lost_names(source: str, translation: str, tokenizer) -> list[str]:
    """Names in the source the translation does not write unchanged: capitalised words, not the first of a sentence,
    that the model cuts into several pieces (a word it knows whole it may rightly translate), and not in TRANSLATED."""
    if source.upper() == source:
        return []  # shouting: every word is capitalised
    lost = []
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


def warnings(translator, source: str, translation: str) -> list[str]:
    """Every warning for one translated sentence, in plain words."""
    said = []
    foreign = not_english(source)
    if foreign:
        said.append(foreign)
    numbers = changed_numbers(source, translation)
    if numbers:
        said.append(f"Check the numbers: {', '.join(numbers)} did not come out as typed.")
    names = lost_names(source, translation, translator.tokenizer)
    if names and not foreign:
        said.append(f"Check the names: {', '.join(names)} did not come out as typed (the model may not know "
                    f"{'it' if len(names) == 1 else 'them'}).")
    return said


def carried(translation) -> str:
    """A sentence naming the symbols set aside from the source and put back as typed (Translation.carried), else ""."""
    if not translation.carried:
        return ""
    them = "it" if len(translation.carried) == 1 and len(translation.carried[0]) == 1 else "them"
    return (f"Carried over as typed: {' '.join(translation.carried)} (the model has no pieces for {them}, so it "
            f"translated the words around {them}).")


def unfamiliar(translator, text: str) -> str:
    """A plain sentence when `text` lies far outside what the model was trained on, else "" (Translator.familiarity)."""
    seen = translator.familiarity(text)
    if seen.unknown:
        return ("This text has characters the model has never seen (its vocabulary spells them byte by byte, or "
                "reads each run of them as one <unk>): it was trained on English picture captions and everyday "
                "sentences, so expect a poor translation.")
    if seen.far:
        return (f"The model splits these words into many small pieces ({seen.pieces_per_word:.1f} per word): they "
                "are far from the picture captions and everyday sentences it was trained on, so expect a poor "
                "translation.")
    return ""
