"""words.json: which English words a checkpoint's training pairs write, and which of them their references write too.

A translation that writes a word of its English source as typed, where the references the model learned from
would not ("Bananas are yellow." → "Bananas sind gelb."), has most likely met a word the model does not know: it
copied what it could not translate. Probabilities often miss it (a copy is an easy, confident choice), so the
page says it in words (playground/panel.warnings). Counted from the unique training pairs when a model is trained,
or for a checkpoint afterwards: `python -m transformer count-words`.

It also keeps every word the references write, so that a word no reference ever wrote and no dictionary of the
language knows ("Ich sehe einen Kokosnut.", "J'ai une pénette.") can be said to be one the model made up from
pieces: the dictionary (simplemma's word forms) lets a right word the references never wrote pass ("Kaulquappe",
"utilisait"), and in German a compound of written words ("Schokoladenstange": "schokoladen" + "stange") counts as
written. It keeps each noun's gender as the references' articles show it, so that an article that fits no
gender of its noun ("die Wasserhahn", "einen Lagerfeuer", "un route") can be said to be a slip; a German compound
takes its last word's ("Wasserhahn": "hahn").
"""
from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .files import write_json

WORDS = "words.json"
WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")  # letters, with an apostrophe or a hyphen inside
SHORTEST = 3  # shorter words ("an", "so", "am") are too often words of both languages by chance
AT_LEAST = 2  # a word counts when written at least this many times
SENTENCE_END = re.compile(r"[.!?:]\s*$")
# where a class writes a name, however it is cased ("my name is lukas"): after a frame that only a name follows, or
# after one that a name or a word may follow ("I am lukas", "I am tired"), where a word the English sources write in
# lowercase is a word
NAMED = re.compile(r"\b(?:(?:my|his|her|their|your|our)\s+names?\s+(?:is|are)|call\s+me|named)\s+"
                   r"([^\W\d_]+(?:['’-][^\W\d_]+)*)", re.IGNORECASE)
NAMED_OR_WORD = re.compile(r"\b(?:i\s+am|i['’]m|this\s+is|that\s+is|meet|called)\s+([^\W\d_]+(?:['’-][^\W\d_]+)*)",
                           re.IGNORECASE)
PARTS = re.compile(r"['’-]")  # "l'araignée", "Party-Hut": each part is a word of its own
PART = 4  # the shortest word a prefix or a compound builds on: shorter ones ("ate", "nus") build anything,
# except a compound's last word where the references show it a noun with its gender ("Partyhut": "hut", "Armbanduhr")
LINKS = {"de": ("", "s", "n", "en", "e", "es", "er")}  # what joins two words of a compound; no compounds in French
PREFIXES = {"de": ("ab", "an", "auf", "aus", "be", "bei", "da", "ein", "ent", "er", "ge", "her", "hin", "los", "mit",
                   "nach", "un", "ver", "vor", "weg", "zer", "zu", "zurück", "um", "über", "unter", "durch")}  # "abschalten"
# Articles and the genders each may go with, in any case: m(asculine), f(eminine), n(euter), p(lural); the word right
# after one is its noun (German: a capitalised word; French: any word, so an adjective's form counts too: "un grand")
ARTICLES = {"de": {"der": "mfp", "die": "fp", "das": "n", "den": "mp", "dem": "mn", "des": "mn", "ein": "mn",
                   "eine": "f", "einen": "m", "einem": "mn", "einer": "f", "eines": "mn"},
            "fr": {"le": "m", "la": "f", "un": "m", "une": "f", "du": "m", "au": "m", "ce": "m", "cet": "m",
                   "cette": "f", "mon": "mf", "ton": "mf", "son": "mf", "ma": "f", "ta": "f", "sa": "f"}}
NOUN = {"de": r"[A-ZÄÖÜ][^\W\d_]*(?:-[^\W\d_]+)*", "fr": r"[^\W\d_]+(?:-[^\W\d_]+)*"}
ARTICLE_NOUN = {lang: re.compile(rf"\b({'|'.join(articles)})\s+({NOUN[lang]})", re.IGNORECASE)
                for lang, articles in ARTICLES.items()}
SAME_PLURAL = ("er", "el", "en", "chen", "lein")  # German nouns whose plural may be spelt as the singular: "die Roboter"
GENDER_SEEN = 3  # a noun's gender is kept when articles go with it this many times or more,
GENDER_SHARE = 0.9  # and a gender fits this share of them or more ("der See", "die See": both kept)


def noun_of(word: str, language: str) -> str | None:
    """The noun a word after an article stands for (lowercase): German's is capitalised and, hyphenated, its last
    part ("Party-Hut": "hut"); French's is the whole word ("porte-monnaie"); None for a German word in lowercase."""
    if language == "de":
        return word.split("-")[-1].lower() if word[0].isupper() else None
    return word.lower()


@dataclass(frozen=True)
class TrainingWords:
    english: frozenset[str]  # words the English sources write in lowercase (lowercase, SHORTEST letters or more)
    both: frozenset[str]  # words (lowercased) both sides write, in any case: a translation may keep them as typed
    written: frozenset[str] = frozenset()  # every word part (lowercased) the references write, once is enough
    language: str = ""  # the references' language ("de", "fr"): how its words are built
    genders: dict[str, str] = field(default_factory=dict, hash=False)  # noun (lowercase) -> "m", "fp", ...

    @classmethod
    def count(cls, sources: Iterable[str], targets: Iterable[str], language: str = "",
              at_least: int = AT_LEAST) -> TrainingWords:
        """From aligned training pairs (each pair once), translated into `language`."""
        targets = list(targets)  # read twice: words, then genders
        lower, source_words, target_words, written = Counter(), Counter(), Counter(), set()
        for text in sources:
            found = WORD.findall(text)
            lower.update(w for w in found if w.islower() and len(w) >= SHORTEST)
            source_words.update(w.lower() for w in found)
        for text in targets:
            found = [w.lower() for w in WORD.findall(text)]
            target_words.update(found)
            written.update(part for w in found for part in PARTS.split(w))
        return cls(frozenset(w for w, n in lower.items() if n >= at_least),
                   frozenset(w for w, n in source_words.items() if n >= at_least and target_words[w] >= at_least),
                   frozenset(written), language, count_genders(targets, language))

    def framed_names(self, source: str) -> list[str]:
        """The words of `source` that a name frame names (NAMED, NAMED_OR_WORD), as typed, in any case: "lukas" in
        "my name is lukas", not "tired" in "I am tired"."""
        names = [m.group(1) for m in NAMED.finditer(source)]
        names += [m.group(1) for m in NAMED_OR_WORD.finditer(source)
                  if len(m.group(1)) >= SHORTEST and m.group(1).lower() not in self.english]
        return list(dict.fromkeys(names))

    def left_in_english(self, source: str, translation: str) -> list[str]:
        """The translation's words that are words of `source` written as typed, though the references would not
        keep them (not in `both`): a word the model most likely did not know. Of the source's words of SHORTEST
        letters or more, those in lowercase; a capitalised one only where capitals say nothing (opening a sentence,
        or all of it shouted) and the sources write it in lowercase elsewhere: any other may be a name, which
        translations keep (names are lost_names's), as is a word a name frame names, however it is cased."""
        shouting, names = source.upper() == source, {n.lower() for n in self.framed_names(source)}
        typed = set()
        for match in WORD.finditer(source):
            word, before = match.group(), source[: match.start()]
            lower = word.lower()
            if len(word) < SHORTEST or lower in self.both or lower in names:
                continue
            opening = not before.strip() or SENTENCE_END.search(before) is not None
            if word.islower() or ((opening or shouting) and lower in self.english):
                typed.add(lower)
        left = []
        for word in WORD.findall(translation):
            if word.lower() in typed and word not in left:
                left.append(word)
        return left

    def made_up(self, source: str, translation: str) -> list[str]:
        """The translation's words no reference of the training pairs writes, nor builds from written words, and no
        dictionary of the language knows (is_written), that are not words of `source` either (a name, a copy:
        lost_names and left_in_english say those); none where the references' words were not counted."""
        if not self.written:
            return []
        typed = {w.lower() for w in WORD.findall(source)}
        made = []
        for word in WORD.findall(translation):
            parts = [p for p in PARTS.split(word.lower()) if len(p) >= SHORTEST]  # "l'alien": "alien" typed
            if word in made or all(p in typed or self.is_written(p) for p in parts):
                continue
            made.append(word)
        return made

    def is_written(self, word: str, known: dict[str, bool] | None = None) -> bool:
        """`word` (lowercase) is written in the references or known to the language's dictionary (in_dictionary),
        or (German) built from written words: after a prefix ("ab" + "schalten") or as a compound of written words
        of PART letters or more. `known`: the answers for the word's tails so far (each tail is looked at once:
        "unter" * 30 would otherwise take years); the dictionary answers for the whole word only (it knows short
        words of other languages that would let anything pass as a compound: "snus")."""
        if known is None:
            known = {}
            if word not in self.written and in_dictionary(word, self.language):
                return True
        if word not in known:
            known[word] = self._builds(word, known)
        return known[word]

    def _builds(self, word: str, known: dict[str, bool]) -> bool:
        if word in self.written:
            return True
        if any(word.startswith(p) and len(word) - len(p) >= PART and self.is_written(word[len(p):], known)
               for p in PREFIXES.get(self.language, ())):
            return True
        for i in range(PART, len(word) - SHORTEST + 1):
            if word[:i] in self.written:
                rest = word[i:]
                if self._last_noun(rest) or any(rest.startswith(link) and len(rest) - len(link) >= PART
                                                and self.is_written(rest[len(link):], known)
                                                for link in LINKS.get(self.language, ())):
                    return True
        return False

    def _last_noun(self, tail: str) -> bool:
        """A compound's last word shorter than PART letters counts where it is a noun the references write with
        an article (a gender kept in `genders`) and follows a written word at once: "Partyhut", "Armbanduhr"; not
        any three letters ("ate", "nut"), nor after a joining letter ("Partyenhut"; "Partyshut" passes: the
        references write "Partys")."""
        return SHORTEST <= len(tail) < PART and tail in self.genders

    def misfits(self, translation: str) -> list[str]:
        """Each article followed at once by a noun whose gender it does not fit ("die Wasserhahn", "un route"), as
        written; a noun of unknown gender is left alone, and a German compound takes its last word's ("hahn")."""
        if self.language not in ARTICLES:
            return []
        articles, misfits = ARTICLES[self.language], []
        for match in ARTICLE_NOUN[self.language].finditer(translation):
            noun = noun_of(match.group(2), self.language)
            if noun is None:
                continue
            ends = range(len(noun) - PART + 1) if self.language == "de" else range(1)
            gender = next((self.genders[noun[i:]] for i in ends if noun[i:] in self.genders), None)
            if gender is not None and self.language == "de" and noun.endswith(SAME_PLURAL):
                gender += "p"  # "die Roboter", "die Flügel": the plural
            if gender is not None and not set(gender) & set(articles[match.group(1).lower()]) \
                    and match.group(0) not in misfits:
                misfits.append(match.group(0))
        return misfits

    def save(self, checkpoint: str | Path) -> None:
        write_json(Path(checkpoint) / WORDS, {"english": sorted(self.english), "both": sorted(self.both),
                                              "written": sorted(self.written), "language": self.language,
                                              "genders": dict(sorted(self.genders.items()))})

    @classmethod
    def load(cls, checkpoint: str | Path) -> TrainingWords | None:
        """A checkpoint's words.json; None where it has none (an imported model, or one trained before it)."""
        path = Path(checkpoint) / WORDS
        if not path.is_file():
            return None
        words = json.loads(path.read_text(encoding="utf-8"))
        return cls(frozenset(words["english"]), frozenset(words["both"]), frozenset(words.get("written", ())),
                   words.get("language", ""), words.get("genders", {}))


def in_dictionary(word: str, language: str) -> bool:
    """simplemma's dictionary of `language` holds `word` as one of its forms ("hundes", "utilisait", "Kaulquappe");
    False for a language it lacks. Low memory: about 20 MB for German and French, read at the first word asked.
    Imported here, not above: training counts words without it (a GPU machine's image lacks it)."""
    import simplemma
    from simplemma.strategies.dictionaries.dictionary_factory import SUPPORTED_LANGUAGES

    return language in SUPPORTED_LANGUAGES and simplemma.is_known(word, lang=language, low_memory=True)


def count_genders(targets: Iterable[str], language: str) -> dict[str, str]:
    """Each noun's genders (lowercase noun -> "m", "fp", ...): those that fit GENDER_SHARE of the articles written
    right before it, for a noun written GENDER_SEEN times or more after one; none for a language without ARTICLES."""
    if language not in ARTICLES:
        return {}
    seen: dict[str, Counter] = {}
    for text in targets:
        for article, word in ARTICLE_NOUN[language].findall(text):
            noun = noun_of(word, language)
            if noun is not None:
                seen.setdefault(noun, Counter())[article.lower()] += 1
    genders, articles = {}, ARTICLES[language]
    for noun, after in seen.items():
        total = sum(after.values())
        fit = "".join(g for g in "mfnp" if sum(n for a, n in after.items() if g in articles[a]) >= GENDER_SHARE * total)
        if total >= GENDER_SEEN and fit:
            genders[noun] = fit
    return genders
