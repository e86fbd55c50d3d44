"""What a class types: sets of our own, held out from training, and their measures.

- first minute (data/first_minute.json): greetings, introductions, school, family, ...; right when equal to a
  reference ignoring case and punctuation; chrF; and the stutters (a piece of letters repeated in a row).
- names (held-out names of data/names.json in NAME_FRAMES): the share where the name comes out unchanged.
- numbers (data/numbers.json): the share where the translation holds the source's digits, in order, and no other.
- classroom (data/classroom/, the eighth held out of training): its sentences and its everyday words in their
  frames, right as the first minute's are.

"right" compares with the references written with each set; "right_judged" also accepts the translations a reader
judged right where the written references lack them (data/judged.json, by English sentence: a model's translations
of these sets, read one by one; the ones judged wrong are kept too, so that none is read twice).

    python -m transformer evaluate --checkpoint checkpoints/en-de --class-sets [--record]
"""
from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

from sacrebleu.metrics import CHRF

from ..decoding import DecodeOptions
from .augment import Names
from .data import read_classroom

ROOT = Path(__file__).resolve().parents[2]
FIRST_MINUTE = ROOT / "data" / "first_minute.json"
NUMBERS = ROOT / "data" / "numbers.json"
CLASSROOM = ROOT / "data" / "classroom"
NAMES = ROOT / "data" / "names.json"
JUDGED = ROOT / "data" / "judged.json"
NAME_FRAMES = (  # none of them is a training template (augment.TEMPLATES)
    "I met {name} at the station.",
    "Yesterday {name} called me.",
    "{name} plays the guitar very well.",
)
NAMES_PER_GENDER = 60  # 120 held-out names, each in every frame
# Two or three letters said three or more times in a row ("Ananananana"), one letter four or more times
# ("Wunnnnsch"), or a word three or more times ("carte carte carte"): German's "fff" (Schifffahrt), a word twice
# ("die die", "nous nous": grammar) and numbers are no stutter
STUTTER = re.compile(r"([^\W\d_]{2,3})\1{2,}|([^\W\d_])\2{3,}|\b([^\W\d_]+)(?:\s+\3\b){2,}", re.IGNORECASE)


def normalized(text: str) -> str:
    """Lowercase, punctuation gone, spaces single: how "right" compares a translation with its references."""
    text = unicodedata.normalize("NFKC", text).replace("’", "'").lower()
    text = "".join(" " if unicodedata.category(c).startswith("P") and c != "'" else c for c in text)
    return " ".join(text.replace("'", " ").split())


def is_right(hypothesis: str, references: list[str]) -> bool:
    return normalized(hypothesis) in {normalized(r) for r in references}


def stutters(text: str) -> bool:
    return bool(STUTTER.search(text))


def digits(text: str) -> str:
    return "".join(re.findall(r"\d", text))


def judged(lang: str, verdict: str = "right") -> dict[str, list[str]]:
    """{English: its translations into `lang` a reader judged `verdict` ("right" or "wrong")} (data/judged.json)."""
    return json.loads(JUDGED.read_text(encoding="utf-8")).get(lang, {}).get(verdict, {})


def rightness(items: list[tuple[str, list[str]]], hyps: list[str], lang: str) -> dict:
    """How many of the translations `hyps` of `items` (English, references) are right by the references ("right"),
    and by them or a reader's judgement ("right_judged"); the wrong ones, by both ("wrong": (English, translation))."""
    accepted = judged(lang)
    written = [is_right(h, refs) for (_, refs), h in zip(items, hyps)]
    either = [w or is_right(h, accepted.get(en, [])) for w, (en, _), h in zip(written, items, hyps)]
    return {"right": sum(written), "right_judged": sum(either), "sentences": len(items),
            "wrong": [(en, h) for ok, (en, _), h in zip(either, items, hyps) if not ok]}


def name_kept(name: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def held_out_names(path: Path = NAMES, per_gender: int = NAMES_PER_GENDER) -> list[str]:
    """Names never drawn in training, spread evenly over the held-out lists (which run alphabetically)."""
    names = Names.load(path, side="heldout").first
    picked = []
    for gender in ("m", "f"):
        pool = names[gender]
        picked += [pool[i * len(pool) // per_gender] for i in range(min(per_gender, len(pool)))]
    return picked


# -----------------------------------------------------------------------------
# The three measures


def first_minute(translator, lang: str, options: DecodeOptions = DecodeOptions()) -> dict:
    items = json.loads(FIRST_MINUTE.read_text(encoding="utf-8"))["sentences"]
    hyps = [t.text for t in translator.translate_batch([it["en"] for it in items], options)]
    refs = [it[lang] for it in items]
    most = max(len(r) for r in refs)
    streams = [[r[k] if k < len(r) else None for r in refs] for k in range(most)]
    return rightness([(it["en"], r) for it, r in zip(items, refs)], hyps, lang) | {
        "chrf": CHRF().corpus_score(hyps, streams).score, "stutters": sum(stutters(h) for h in hyps)}


def names_kept(translator, options: DecodeOptions = DecodeOptions()) -> dict:
    names = held_out_names()
    sources = [(name, frame.format(name=name)) for name in names for frame in NAME_FRAMES]
    hyps = [t.text for t in translator.translate_batch([s for _, s in sources], options)]
    lost = [(s, h) for (name, s), h in zip(sources, hyps) if not name_kept(name, h)]
    return {"kept": len(sources) - len(lost), "sentences": len(sources), "names": len(names),
            "share": 1 - len(lost) / len(sources), "stutters": sum(stutters(h) for h in hyps), "lost": lost}


def numbers_kept(translator, options: DecodeOptions = DecodeOptions()) -> dict:
    sources = json.loads(NUMBERS.read_text(encoding="utf-8"))["sentences"]
    hyps = [t.text for t in translator.translate_batch(sources, options)]
    changed = [(s, h) for s, h in zip(sources, hyps) if digits(s) != digits(h)]
    return {"kept": len(sources) - len(changed), "sentences": len(sources),
            "share": 1 - len(changed) / len(sources), "changed": changed}


def labelled(lang: str, with_judged: bool = True) -> list[tuple[str, list[str]]]:
    """(English, its references) of the held-out sets a translation is right or wrong on: the first minute, then the
    classroom corpus's held-out sentences, then its held-out words in their frames; the references include the
    translations judged right unless `with_judged` is False."""
    items = [(it["en"], it[lang]) for it in json.loads(FIRST_MINUTE.read_text(encoding="utf-8"))["sentences"]]
    room = held_out_classroom(lang)
    items += room["phrasebook"] + room["words"]
    accepted = judged(lang) if with_judged else {}
    return [(en, refs + accepted.get(en, [])) for en, refs in items]


def held_out_classroom(lang: str) -> dict[str, list[tuple[str, list[str]]]]:
    """The classroom corpus's held-out part: {"phrasebook": its sentences, "words": its words in their frames},
    each as (English, its references into `lang`)."""
    out = {}
    for part, (src, tgt) in read_classroom(str(CLASSROOM), lang, "heldout").items():
        refs: dict[str, list[str]] = {}
        for s, t in zip(src, tgt):
            refs.setdefault(s, []).append(t)
        out[part] = list(refs.items())
    return out


def classroom(translator, lang: str, options: DecodeOptions = DecodeOptions()) -> dict:
    """The classroom corpus's held-out sentences and words (in their frames): how many come out right."""
    out, room = {}, held_out_classroom(lang)
    for part, name in (("phrasebook", "sentences"), ("words", "words")):
        hyps = [t.text for t in translator.translate_batch([en for en, _ in room[part]], options)]
        out[name] = rightness(room[part], hyps, lang) | {"stutters": sum(stutters(h) for h in hyps)}
    return out


def class_sets(translator, options: DecodeOptions = DecodeOptions(), lang: str = "") -> dict:
    """All four, for `lang` (default: the translator's target language)."""
    lang = lang or translator.metrics.pair.split("-")[1]
    room = classroom(translator, lang, options)
    return {"first_minute": first_minute(translator, lang, options), "names": names_kept(translator, options),
            "numbers": numbers_kept(translator, options), "classroom": room["sentences"],
            "everyday_words": room["words"]}


def report(result: dict) -> str:
    fm, nm, nb = result["first_minute"], result["names"], result["numbers"]
    lines = [f"first minute   {fm['right']} of {fm['sentences']} right ({fm['right_judged']} judged), chrF "
             f"{fm['chrf']:.1f}, {fm['stutters']} stutters",
             f"names kept     {nm['kept']} of {nm['sentences']} ({100 * nm['share']:.1f} %, {nm['names']} names), "
             f"{nm['stutters']} stutters",
             f"numbers kept   {nb['kept']} of {nb['sentences']} ({100 * nb['share']:.1f} %)"]
    for name in ("classroom", "everyday_words"):
        if name in result:
            r = result[name]
            lines.append(f"{name.replace('_', ' '):15s}{r['right']} of {r['sentences']} right ({r['right_judged']} "
                         f"judged), {r['stutters']} stutters")
    lines += [f"  wrong: {s!r} -> {h!r}" for s, h in fm["wrong"][:12]]
    lines += [f"  classroom wrong: {s!r} -> {h!r}" for s, h in result.get("classroom", {}).get("wrong", [])[:12]]
    lines += [f"  name lost: {s!r} -> {h!r}" for s, h in nm["lost"][:6]]
    lines += [f"  number changed: {s!r} -> {h!r}" for s, h in nb["changed"][:6]]
    return "\n".join(lines)
