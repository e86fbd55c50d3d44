"""A sentencepiece model over both languages of a pair (one joint vocabulary, §5.1 / §3.4); how a source text is
read before it is cut into pieces (British spellings as American); padded batches of ids."""
from __future__ import annotations

import io
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import sentencepiece as spm
import torch
from torch import Tensor

from .decoding import WORD_GOES_ON, WORD_START, RunLimits

PAD, BOS, EOS, UNK = 0, 1, 2, 3  # the ids every checkpoint's ModelConfig repeats
BYTE_PIECE = re.compile(r"<0x([0-9A-F]{2})>")  # a byte of a character the vocabulary lacks (byte_fallback)


class Tokenizer:
    """text <-> ids <-> pieces. Ids exclude <s>/</s>; the model code adds them.

    The interface every tokenizer of a checkpoint offers (an imported model's too, transformer.marian): encode
    (source text), decode (target ids), pieces (target ids), source_pieces, id_to_piece,
    piece_to_id, len(), and the special ids below."""

    pad_id, bos_id, eos_id, unk_id = PAD, BOS, EOS, UNK

    def __init__(self, model_proto: bytes):
        self.proto = model_proto
        self.sp = spm.SentencePieceProcessor(model_proto=model_proto)
        assert (self.sp.pad_id(), self.sp.bos_id(), self.sp.eos_id(), self.sp.unk_id()) == (PAD, BOS, EOS, UNK)

    @classmethod
    def train(cls, sentences: Iterable[str], vocab_size: int, model_type: str = "unigram",
              byte_fallback: bool = False, split_digits: bool = False) -> "Tokenizer":
        """byte_fallback: a character the vocabulary lacks becomes its UTF-8 bytes, never <unk>;
        split_digits: every digit its own piece, so that a number is copied digit by digit."""
        buf = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(sentences),
            model_writer=buf,
            vocab_size=vocab_size,
            model_type=model_type,
            character_coverage=1.0,  # Multi30k's alphabet is small; keep every character (ä, é, ß, ...)
            pad_id=PAD, bos_id=BOS, eos_id=EOS, unk_id=UNK,
            pad_piece="<pad>", bos_piece="<s>", eos_piece="</s>", unk_piece="<unk>",
            byte_fallback=byte_fallback,
            split_digits=split_digits,
            num_threads=2,
            minloglevel=2,
        )
        return cls(buf.getvalue())

    def __reduce__(self):
        """Pickled as its model's bytes (sentencepiece's processor is not): how a drawing process receives it."""
        return type(self), (self.proto,)

    @classmethod
    def load(cls, path: str | Path) -> "Tokenizer":
        return cls(Path(path).read_bytes())

    def save(self, path: str | Path) -> None:
        Path(path).write_bytes(self.proto)

    def __len__(self) -> int:
        return self.sp.get_piece_size()

    def encode(self, text: str) -> list[int]:
        return self.sp.encode(text)

    def sample(self, texts: list[str], alpha: float, seed: int) -> list[list[int]]:
        """One segmentation of each text drawn from all of the unigram model's (Kudo 2018), repeatable by seed.

        α sharpens the distribution (0.2: about a third more pieces than the best segmentation on Multi30k).
        One thread keeps the draws seeded; sentencepiece releases the GIL, so a thread can draw while training runs.
        """
        spm.set_random_generator_seed(seed)
        return self.sp.encode(texts, enable_sampling=True, alpha=alpha, nbest_size=-1, num_threads=1)

    def decode(self, ids: Iterable[int]) -> str:
        return self.sp.decode([i for i in ids if i not in (PAD, BOS, EOS)])

    def pieces(self, ids: Iterable[int]) -> list[str]:
        return [self.sp.id_to_piece(int(i)) for i in ids]

    def source_pieces(self, ids: Iterable[int]) -> list[str]:
        return self.pieces(ids)  # one vocabulary for both sides

    def id_to_piece(self, i: int) -> str:
        return self.sp.id_to_piece(int(i))

    def piece_to_id(self, piece: str) -> int:
        return self.sp.piece_to_id(piece)


# -----------------------------------------------------------------------------
# British and American spellings of the words a class types. The corpora and our classroom corpus write
# American; training turns some sources British (transformer/training/noise.py), and the translator reads a British
# spelling as its American twin, a rule like reading capitals in lowercase: the model cuts "favourite colour" into
# rare pieces and writes a made-up word for it, while it knows "favorite color" (measured: git log -p docs/training.md).


# American -> British, whole words (noise.py also turns -ize / -yze verbs into -ise / -yse)
BRITISH = {
    "color": "colour", "colors": "colours", "colorful": "colourful", "favorite": "favourite",
    "favorites": "favourites", "flavor": "flavour", "honor": "honour", "humor": "humour", "neighbor": "neighbour",
    "neighbors": "neighbours", "neighborhood": "neighbourhood", "behavior": "behaviour", "labor": "labour",
    "center": "centre", "centers": "centres", "theater": "theatre", "meter": "metre", "meters": "metres",
    "liter": "litre", "kilometer": "kilometre", "kilometers": "kilometres", "traveled": "travelled",
    "traveling": "travelling", "canceled": "cancelled", "jewelry": "jewellery", "gray": "grey", "mom": "mum",
    "moms": "mums", "defense": "defence", "license": "licence", "catalog": "catalogue",
    "dialog": "dialogue", "pajamas": "pyjamas",
}
AMERICAN = {b: a for a, b in BRITISH.items()}


def run_limits(pieces: Sequence[str]) -> RunLimits:
    """How many times in a row decoding may choose each of a vocabulary's pieces (decoding.RunGuard): a piece of
    letters inside a word twice ("Görs·ev·ev"), a single letter three times (German's "Schiff·f·f·ahrt"); once its
    run is full, neither it nor a piece that begins with it comes next ("Cho·is·is·issez", "Kleid·er·ma·t·t·t·ter").
    So no word says two or three letters three times over, or one letter four times, by repeating pieces
    (class_sets.STUTTER counts what is left). A piece that is a whole word of letters ("▁sehr", "▁carte") twice:
    "die die" and "nous nous" are grammar, "carte carte carte" never; a word of several pieces is held to two in a
    row by the guard itself ("▁St·ate" twice), which reads here where a word of letters begins and goes on, and
    one letter at most three times in a row across pieces ("Schiff·f·ahrt", never "Stef·f·f·f").
    Digits, punctuation and special pieces have no limit."""
    inner = {i: p for i, p in enumerate(pieces) if p.isalpha()}  # "▁", "<s>", "<0x41>", "3" are not alpha
    beginning_with: dict[str, list[int]] = {}  # a text -> the inner pieces that begin with it
    for i, p in inner.items():
        for k in range(1, len(p) + 1):
            beginning_with.setdefault(p[:k], []).append(i)
    limit = torch.zeros(len(pieces), dtype=torch.long)
    for i, p in inner.items():
        limit[i] = 2 if len(p) > 1 else 3
    word_parts = [WORD_GOES_ON if i in inner else 0 for i in range(len(pieces))]
    for i, p in enumerate(pieces):
        if p.startswith("\u2581") and p[1:].isalpha():
            limit[i] = 2  # itself alone: "carte carte" may go on with "cartes"
        if p.startswith("\u2581") and (p[1:].isalpha() or p == "\u2581"):
            word_parts[i] = WORD_START
    letters = [text if text.isalpha() else "" for text in (p.lstrip("\u2581") for p in pieces)]
    return RunLimits(limit, {i: beginning_with[p] for i, p in inner.items()}, word_parts, letters,
                     {text: ids for text, ids in beginning_with.items() if len(set(text)) == 1})


def american(text: str) -> str:
    """British spellings written American ("my favourite colour" -> "my favorite color"), capitals kept."""
    def word(m: re.Match) -> str:
        w = m.group(0)
        new = AMERICAN.get(w.lower())
        if new is None:
            return w
        return new.upper() if w.isupper() and len(w) > 1 else new.capitalize() if w[0].isupper() else new

    return re.sub(r"[A-Za-z]+", word, text)


# -----------------------------------------------------------------------------
# Padded batches of token ids: the padding id always comes from the model's config (an imported model's differs).
#
# Shape legend: B batch, N longest sequence.


def pad_batch(seqs: list[list[int]], pad_id: int) -> Tensor:
    """Right-pad id lists with the model's pad id into a (B, N) tensor."""
    n = max(len(s) for s in seqs)
    return torch.tensor([s + [pad_id] * (n - len(s)) for s in seqs], dtype=torch.long)  # (B, N)


def length_sorted_batches(seqs: list[list[int]], batch_size: int) -> list[list[int]]:
    """Indices of `seqs` in batches of at most batch_size, shortest first, so that a batch holds similar lengths."""
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    return [order[k : k + batch_size] for k in range(0, len(order), batch_size)]
