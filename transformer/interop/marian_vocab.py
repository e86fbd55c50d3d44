"""An OPUS-MT model's own tokenizer (Marian's source.spm, target.spm and vocab.json) behind our Tokenizer interface.

Apart from the import (marian.py), so that loading a checkpoint (checkpoint.py) can use it without an import circle.
"""
from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path

import sentencepiece as spm

from ..errors import InputError

VOCAB, TARGET_VOCAB, SOURCE_SPM, TARGET_SPM = "vocab.json", "target_vocab.json", "source.spm", "target.spm"

class MarianVocab:
    """Marian's tokenizer behind our Tokenizer interface: source text -> source.spm pieces -> vocab.json ids;
    target ids -> pieces (target_vocab.json where the model has one) -> target.spm text. A piece missing from the
    vocabulary is <unk>, as in Marian."""

    def __init__(self, folder: str | Path):
        folder = Path(folder)
        self.folder = folder
        self.source_spm = spm.SentencePieceProcessor(model_file=str(folder / SOURCE_SPM))
        self.target_spm = spm.SentencePieceProcessor(model_file=str(folder / TARGET_SPM))
        self.source_vocab = json.loads((folder / VOCAB).read_text(encoding="utf-8"))
        separate = (folder / TARGET_VOCAB).is_file()
        self.target_vocab = json.loads((folder / TARGET_VOCAB).read_text(encoding="utf-8")) if separate else self.source_vocab
        self.separate = separate
        self.source_pieces_by_id = {i: p for p, i in self.source_vocab.items()}
        self.target_pieces_by_id = {i: p for p, i in self.target_vocab.items()}
        for name in ("<pad>", "</s>", "<unk>"):
            if name not in self.target_vocab or name not in self.source_vocab:
                raise InputError(f"{folder}: the vocabulary has no {name} piece, which every Marian model has")
        self.pad_id, self.eos_id, self.unk_id = (self.target_vocab[p] for p in ("<pad>", "</s>", "<unk>"))
        self.bos_id = self.pad_id  # Marian's decoder starts from <pad>

    @classmethod
    def load(cls, folder: str | Path) -> "MarianVocab":
        return cls(folder)

    def save(self, folder: str | Path) -> None:
        """Copy the tokenizer's files into a checkpoint directory."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for name in (SOURCE_SPM, TARGET_SPM, VOCAB) + ((TARGET_VOCAB,) if self.separate else ()):
            if (self.folder / name).resolve() != (folder / name).resolve():
                shutil.copyfile(self.folder / name, folder / name)

    def __len__(self) -> int:
        return max(self.target_pieces_by_id) + 1  # the target side's: what the output projection scores

    @property
    def source_size(self) -> int:
        return max(self.source_pieces_by_id) + 1

    def encode(self, text: str) -> list[int]:
        unk = self.source_vocab["<unk>"]
        return [self.source_vocab.get(p, unk) for p in self.source_spm.encode(text, out_type=str)]

    def decode(self, ids: Iterable[int]) -> str:
        skip = {self.pad_id, self.eos_id, self.unk_id}
        return self.target_spm.decode_pieces([self.target_pieces_by_id[int(i)] for i in ids if int(i) not in skip])

    def pieces(self, ids: Iterable[int]) -> list[str]:
        return [self.target_pieces_by_id.get(int(i), "<unk>") for i in ids]

    def source_pieces(self, ids: Iterable[int]) -> list[str]:
        return [self.source_pieces_by_id.get(int(i), "<unk>") for i in ids]

    def id_to_piece(self, i: int) -> str:
        return self.target_pieces_by_id.get(int(i), "<unk>")

    def piece_to_id(self, piece: str) -> int:
        return self.target_vocab.get(piece, self.unk_id)

    def sample(self, texts, alpha, seed):
        raise InputError("an imported Marian model is not trained here")


# -----------------------------------------------------------------------------
# The import
