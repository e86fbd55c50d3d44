"""Multi30k and Tatoeba reading, held-out splits with several references, and length-bucketed batches.

Shape legend: B batch, S source length, T target length (with <s> / </s>).
"""
from __future__ import annotations

import gzip
import hashlib
import random
from dataclasses import dataclass
from collections.abc import Iterator
from pathlib import Path

from torch import Tensor

from ..errors import InputError
from ..tokenizer import pad_batch
from ..config import ModelConfig

SPLITS = {"train": "train", "val": "val", "test": "test_2016_flickr"}


def read_lines(path: str | Path) -> list[str]:
    """One sentence per line from a plain or gzipped UTF-8 file."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def split_file(data_dir: str | Path, split: str, lang: str) -> Path:
    """`{split}.{lang}.gz` or `{split}.{lang}` under data_dir; split may be a key of SPLITS or a file stem."""
    stem = f"{SPLITS.get(split, split)}.{lang}"
    for name in (stem + ".gz", stem):
        if (Path(data_dir) / name).exists():
            return Path(data_dir) / name
    raise FileNotFoundError(f"no {stem}.gz or {stem} in {data_dir} (expected the Multi30k raw text files)")


def read_pair(data_dir: str | Path, split: str, src_lang: str, tgt_lang: str) -> tuple[list[str], list[str]]:
    src, tgt = read_lines(split_file(data_dir, split, src_lang)), read_lines(split_file(data_dir, split, tgt_lang))
    if len(src) != len(tgt):
        raise InputError(f"{split}: {len(src)} {src_lang} lines but {len(tgt)} {tgt_lang} lines")
    return src, tgt


# -----------------------------------------------------------------------------
# Corpora: Multi30k ships train/val/test files; Tatoeba ships train files only, and we hold out our own split

HELDOUT = {"test": 2000, "val": 1000}  # English sentences held out of a corpus that has train files only


@dataclass
class Corpus:
    """One folder of a pair's data. `split` gives (sources, reference streams) ready for sacreBLEU."""

    name: str  # the folder's name: "multi30k", "tatoeba"
    data_dir: Path
    src_lang: str
    tgt_lang: str

    @property
    def holds_out(self) -> bool:
        """True for the Tatoeba layout (<dir>/<pair>/train.<lang>.gz), which has no val or test files."""
        return (self.data_dir / f"{self.src_lang}-{self.tgt_lang}").is_dir()

    def pairs(self, split: str) -> tuple[list[str], list[str]]:
        """Aligned (source, target) lines of a split; a held-out split keeps every translation of its sentences."""
        if not self.holds_out:
            return read_pair(self.data_dir, split, self.src_lang, self.tgt_lang)
        src, tgt = read_pair(self.data_dir / f"{self.src_lang}-{self.tgt_lang}", "train", self.src_lang, self.tgt_lang)
        side = heldout_side(src)
        keep = [i for i in range(len(src)) if side[src[i]] == split]
        return [src[i] for i in keep], [tgt[i] for i in keep]

    def split(self, split: str) -> tuple[list[str], list[list[str | None]]]:
        """(unique sources, reference streams): stream k holds each source's k-th translation, or None."""
        src, tgt = self.pairs(split)
        return group_references(src, tgt)


def open_corpora(data_dirs: str | Path | list, pair: str) -> list[Corpus]:
    """One Corpus per --data-dir (a single folder or a list of them)."""
    dirs = [data_dirs] if isinstance(data_dirs, (str, Path)) else data_dirs
    src_lang, tgt_lang = pair.split("-")
    return [Corpus(Path(d).resolve().name, Path(d), src_lang, tgt_lang) for d in dirs]


def read_phrasebook(path: str | Path, lang: str) -> tuple[list[str], list[str]]:
    """(English, translation) pairs of a phrasebook for `lang`, one pair for each of its alternatives.

    The file is blocks of "EN: ...", "DE: ...", "FR: ..." lines; " | " separates alternatives; "#" a comment."""
    src, tgt, english = [], [], None
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        key, sep, text = line.partition(": ")
        if not sep or line.startswith("#"):
            continue
        if key == "EN":
            english = text.strip()
        elif key == lang.upper():
            if english is None:
                raise InputError(f"{path}:{n}: a {key} line before any EN line")
            for alternative in text.split(" | "):
                src.append(english)
                tgt.append(alternative.strip())
    return src, tgt


# The classroom corpus (data/classroom/): topic files in the phrasebook's format, and everyday words in short
# frames. One English sentence in HELD_OUT of each topic file, and one word in HELD_OUT with all its frames,
# never join the training: they are our own evaluation of what a class says (`split="heldout"`).
HELD_OUT = 8


def held_out(english: str) -> bool:
    """True for the sentences (and words) kept out of training: a fixed share, by the SHA-1 of the text."""
    return int(hashlib.sha1(english.encode("utf-8")).hexdigest(), 16) % HELD_OUT == 0


def read_classroom(paths: str, lang: str, split: str = "train") -> dict[str, tuple[list[str], list[str]]]:
    """{"phrasebook": pairs, "words": pairs}: the (English, translation) pairs of the phrasebooks in `paths`
    (comma-separated files or folders), and of the word lists' frames (word_frames), each oversampled on its own.

    A folder's *.txt files are topic phrasebooks and its *.tsv files word lists; a folder's sentences are split
    into train and heldout (a word's frames go with the word), a file named alone is all training: a *.tsv named
    alone is a part of its own, under its file's name ("data/more_words.tsv": "more_words")."""
    parts: dict[str, tuple[list[str], list[str]]] = {"phrasebook": ([], []), "words": ([], [])}

    def add(part: str, src: list[str], tgt: list[str], keys: list[str] | None) -> None:
        keep = [i for i in range(len(src)) if keys is None or held_out(keys[i]) == (split == "heldout")]
        parts[part][0].extend(src[i] for i in keep)
        parts[part][1].extend(tgt[i] for i in keep)

    for item in filter(None, (x.strip() for x in paths.split(","))):
        path = Path(item)
        if not path.is_dir():
            if split == "train" and path.suffix == ".tsv":
                parts.setdefault(path.stem, ([], []))
                add(path.stem, *word_frames(path, lang)[:2], None)
            elif split == "train":
                add("phrasebook", *read_phrasebook(path, lang), None)
            continue
        for file in sorted(path.glob("*.txt")):
            src, tgt = read_phrasebook(file, lang)
            add("phrasebook", src, tgt, src)
        for file in sorted(path.glob("*.tsv")):
            src, tgt, words = word_frames(file, lang)
            add("words", src, tgt, words)
    return parts


# Frames: (English, German, French) with {w} for the word, {an} for "a" or "an", and {a} / {d} for its article
# where German and French need one: a = indefinite, d = definite; German's accusative (a_acc, d_acc, w_acc) where
# the frame's verb takes an object
NOUN_FRAMES = [
    ("This is {an} {w}.", "Das ist {a} {w}.", "C'est {a} {w}."),
    ("I have {an} {w}.", "Ich habe {a_acc} {w_acc}.", "J'ai {a} {w}."),
    ("Where is the {w}?", "Wo ist {d} {w}?", "Où est {d}{w} ?"),
    ("I like the {w}.", "Ich mag {d_acc} {w_acc}.", "J'aime {d}{w}."),
    ("The {w} is here.", "{D} {w} ist hier.", "{D}{w} est ici."),
    ("I can see {an} {w}.", "Ich sehe {a_acc} {w_acc}.", "Je vois {a} {w}."),
]
MASS_FRAMES = [  # pasta, homework, music: no "a" (gender pl: a plural, "pl Nudeln", "pl pâtes")
    ("I like {w}.", "Ich mag {w}.", "J'aime {d}{w}."),
    ("Do you like {w}?", "Magst du {w}?", "Tu aimes {d}{w} ?"),
    ("We need {w}.", "Wir brauchen {w}.", "Nous avons besoin {p}{w}."),
]
ADJECTIVE_FRAMES = [
    ("It is {w}.", "Es ist {w}.", "C'est {w}."),
    ("That is so {w}!", "Das ist so {w}!", "C'est tellement {w} !"),
    ("The film was {w}.", "Der Film war {w}.", "Le film était {w}."),
]
VERB_FRAMES = [
    ("I want to {w}.", "Ich will {w}.", "Je veux {w}."),
    ("Can you {w}?", "Kannst du {w}?", "Tu peux {w} ?"),
    ("I would like to {w}.", "Ich möchte {w}.", "Je voudrais {w}."),
    ("Do you want to {w}?", "Willst du {w}?", "Tu veux {w} ?"),
]
GERMAN_ARTICLES = {"a": {"m": "ein", "f": "eine", "n": "ein"}, "a_acc": {"m": "einen", "f": "eine", "n": "ein"},
                   "d": {"m": "der", "f": "die", "n": "das", "pl": "die"},
                   "d_acc": {"m": "den", "f": "die", "n": "das", "pl": "die"}}


def french_article(kind: str, gender: str, word: str) -> str:
    """un / une; le / la / l' (before a vowel or a mute h: the word list writes an aspirated h as "'h")."""
    if kind == "a":
        return {"m": "un", "f": "une"}[gender]
    if gender == "pl":
        return "les "
    if word[0].lower() in "aeiouyéèêàâîôûœh":
        return "l'"
    return {"m": "le ", "f": "la "}[gender]


def word_frames(path: str | Path, lang: str) -> tuple[list[str], list[str], list[str]]:
    """(English, translation, English word) of every word of a word list in each of its frames. A line is
    `kind<TAB>English<TAB>German<TAB>French`: kind n (a noun: German and French written with their gender,
    "m Hund", "m chien"), mass (a noun without "a": "f Pizza", "f pizza"), adj or verb (written as they stand in
    the frame: "play football")."""
    src, tgt, words = [], [], []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            kind, en, de, fr = line.split("\t")
        except ValueError:
            raise InputError(f"{path}:{n}: expected kind, English, German, French separated by tabs") from None
        frames = {"n": NOUN_FRAMES, "mass": MASS_FRAMES, "adj": ADJECTIVE_FRAMES, "verb": VERB_FRAMES}.get(kind)
        if frames is None:
            raise InputError(f"{path}:{n}: the kind is n, mass, adj or verb, not {kind!r}")
        for frame in frames:
            src.append(frame[0].format(w=en, an="an" if english_vowel(en) else "a"))
            tgt.append(fill_frame(frame[1] if lang == "de" else frame[2], kind, de if lang == "de" else fr, lang))
            words.append(en)
    return src, tgt, words


def english_vowel(word: str) -> bool:
    """True where English says "an": a vowel sound first (an apple, an hour; a unicorn, a uniform). Capitals are
    read letter by letter: an ATM, an MP3 player; a USB stick."""
    first = word.split()[0]
    if len(first) > 1 and first.isupper():
        return first[0] in "AEFHILMNORSX"
    w = word.lower()
    return (w[0] in "aeiou" and not w.startswith(("uni", "use", "eu", "one"))) or w.startswith(("hour", "honest"))


def fill_frame(frame: str, kind: str, word: str, lang: str) -> str:
    """A target frame with the word in it; a noun is written with its gender ("m Löwe/Löwen": German's
    accusative after the slash, where it differs)."""
    if kind not in ("n", "mass"):
        return frame.format(w=word)
    gender, _, noun = word.partition(" ")
    if lang == "de":
        articles = {k: v.get(gender, "") for k, v in GERMAN_ARTICLES.items()}
        noun, _, accusative = noun.partition("/")
        return frame.format(w=noun, w_acc=accusative or noun, D=articles["d"].capitalize(), **articles)
    definite, partitive = french_article("d", gender, noun), "d'" if noun[0].lower() in "aeiouyéèêàâîôûœh" else "de "
    if noun.startswith("'"):  # "'haricot": an aspirated h takes "le", and is written without the mark
        noun, definite, partitive = noun[1:], french_article("d", gender, "x"), "de "
    indefinite = french_article("a", gender, noun) if gender != "pl" else "des"
    return frame.format(w=noun, a=indefinite, d=definite, D=definite.capitalize(), p=partitive)


def heldout_side(sources: list[str]) -> dict[str, str]:
    """Each distinct source sentence's side: "test", "val" or "train".

    The sentences are ordered by the SHA-1 of their text (a shuffle that no file order or seed can change);
    the first HELDOUT["test"] are test, the next HELDOUT["val"] val. All translations of a sentence share its side.
    """
    order = sorted(set(sources), key=lambda s: hashlib.sha1(s.encode("utf-8")).hexdigest())
    n_test, n_val = HELDOUT["test"], HELDOUT["val"]
    side = dict.fromkeys(order[n_test + n_val:], "train")
    side |= dict.fromkeys(order[:n_test], "test") | dict.fromkeys(order[n_test : n_test + n_val], "val")
    return side


def group_references(src: list[str], tgt: list[str]) -> tuple[list[str], list[list[str | None]]]:
    """Distinct sources in first-seen order, and reference streams padded with None (sacreBLEU's "no reference")."""
    refs: dict[str, list[str]] = {}
    for s, t in zip(src, tgt):
        refs.setdefault(s, []).append(t)
    most = max((len(r) for r in refs.values()), default=0)
    streams = [[r[k] if k < len(r) else None for r in refs.values()] for k in range(most)]
    return list(refs), streams


# -----------------------------------------------------------------------------
# Batching


def make_example(src_ids: list[int], tgt_ids: list[int], cfg: ModelConfig) -> tuple[list[int], list[int]]:
    """Source: ids + </s>. Target: <s> + ids + </s> (the decoder input is its prefix, the labels its suffix)."""
    return src_ids[: cfg.max_len - 1] + [cfg.eos_id], [cfg.bos_id] + tgt_ids[: cfg.max_len - 2] + [cfg.eos_id]


def bucket_batches(
    examples: list[tuple[list[int], list[int]]], max_tokens: int, seed: int | None
) -> list[list[int]]:
    """Group example indices into batches of similar lengths, each within `max_tokens` per side.

    Examples are sorted by source length, then by target length ascending for even source lengths and
    descending for odd ones, so that a batch straddling two source lengths still has similar targets.
    Ties are broken at random by the seed, and the batches are shuffled by it too (seed None: no shuffling).
    """
    order = list(range(len(examples)))
    rng = random.Random(seed)
    if seed is not None:
        rng.shuffle(order)

    def key(i: int) -> tuple[int, int]:
        S, T = len(examples[i][0]), len(examples[i][1])
        return S, T if S % 2 == 0 else -T

    order.sort(key=key)  # stable: shuffled ties stay shuffled
    batches, batch, longest = [], [], 0
    for i in order:
        n = max(len(examples[i][0]), len(examples[i][1]))
        if batch and max(longest, n) * (len(batch) + 1) > max_tokens:
            batches.append(batch)
            batch, longest = [], 0
        batch.append(i)
        longest = max(longest, n)
    if batch:
        batches.append(batch)
    if seed is not None:
        rng.shuffle(batches)
    return batches


def padding_waste(examples: list[tuple[list[int], list[int]]], batches: list[list[int]]) -> float:
    """Fraction of the padded (B, S) and (B, T) slots that hold padding."""
    slots = real = 0
    for batch in batches:
        for side in (0, 1):
            lengths = [len(examples[i][side]) for i in batch]
            slots += max(lengths) * len(lengths)
            real += sum(lengths)
    return 1 - real / slots


def batch_tensors(examples, batch: list[int], pad_id: int) -> tuple[Tensor, Tensor]:
    """src (B, S), tgt (B, T) for one batch of example indices."""
    return pad_batch([examples[i][0] for i in batch], pad_id), pad_batch([examples[i][1] for i in batch], pad_id)


def iterate_batches(examples, batches: list[list[int]], pad_id: int, start: int = 0) -> Iterator[tuple[Tensor, Tensor]]:
    for batch in batches[start:]:
        yield batch_tensors(examples, batch, pad_id)
