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
from ..batching import pad_batch
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
