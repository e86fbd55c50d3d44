"""Translator: a loaded checkpoint with text in and text, tokens, steps and attention maps out."""
from __future__ import annotations

import math
import re
import unicodedata
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch

from . import decoding
from .checkpoint import load_checkpoint
from .decoding import DecodeOptions
from .errors import InputError
from .metrics import Metrics
from .model import Transformer
from .tokenizer import BYTE_PIECE, Tokenizer, american, length_sorted_batches, pad_batch, run_limits
from .words import TrainingWords

UNSURE_BELOW = 0.5  # a word the model gave less than this probability is marked unsure, until calibrated
CHARS_PER_POSITION = 16  # more characters than any subword needs; the rest cannot fit in the positions
FAR_PIECES_PER_WORD = 4.0  # held-out Tatoeba: 99 % of sentences under 3.7 pieces a word; nonsense words 4.5-6


def word_probabilities(pieces: Sequence[str], probs: Sequence[float]) -> list[tuple[list[int], float]]:
    """Each word of a translation (a piece that begins one, "▁", and the pieces that continue it): its pieces'
    indices and its probability, the probabilities of its pieces multiplied."""
    words: list[list[int]] = []
    for i, piece in enumerate(pieces[: len(probs)]):
        if piece.startswith("\u2581") or not words:
            words.append([i])
        else:
            words[-1].append(i)
    return [(word, math.prod(probs[i] for i in word)) for word in words]


def unsure_words(pieces: Sequence[str], probs: Sequence[float], below: float, several_below: float = 0.0,
                 several_words: int = 0) -> list[int]:
    """The indices of the pieces of each word the model was unsure of: a word whose probability (its pieces'
    multiplied) falls under `below`, and, in a translation of at most `several_words` words, every word under
    `several_below` when two or more are (one doubt may be a synonym; several in one short sentence seldom are; a
    long one has more words a synonym could replace, and was not calibrated). A word written in three fairly
    likely pieces is as doubtful as one unlikely piece (on our labelled sets it separates wrong translations from
    right ones at least as well as the lowest piece: tools/calibrate_unsure.py)."""
    words = word_probabilities(pieces, probs)
    several = len(words) <= several_words and sum(p < several_below for _, p in words) >= 2
    return [i for word, p in words if p < below or (several and p < several_below) for i in word]


@dataclass
class TokenStep:
    token: str
    prob: float
    alternatives: list[tuple[str, float]]  # the top-5 tokens at this step with their probabilities
    removed: tuple[str, float] | None = None  # the piece the model ranked first and its probability, where the
    # stutter guard removed it (decoding.RunGuard)

    @property
    def guarded(self) -> bool:
        return self.removed is not None


@dataclass
class Translation:
    text: str
    source_tokens: list[str]  # the encoder's input pieces, </s> included
    target_tokens: list[str]  # the generated pieces, </s> excluded
    target_ids: list[int]
    steps: list[TokenStep] = field(default_factory=list)
    score: float = 0.0
    truncated: bool = False  # the source was cut to the model's positions
    beam_tree: decoding.BeamTree | None = None  # beam search with record_tree=True: the search, step by step
    carried: list[str] = field(default_factory=list)  # symbols set aside from the source and put back (set_aside)
    unsure: list[int] = field(default_factory=list)  # indices into target_tokens the model was unsure of (unsure_words)
    source_ids: list[int] = field(default_factory=list)  # the encoder's input ids, </s> included: what a
    # teacher-forced pass over this translation reads (pair_tensors), not the text read again


def resolve_device(device: str) -> torch.device:
    """'auto' picks CUDA when present; 'cuda' without CUDA falls back to the CPU with a warning."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        warnings.warn("CUDA was requested but is not available; running on the CPU", stacklevel=2)
        return torch.device("cpu")
    return torch.device(device)


QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
                        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u00ab": '"', "\u00bb": '"'})


MAX_SENTENCES = 20  # the most sentences the page, the API and the CLI translate of one text: the model
# learned single sentences, so a text is cut into its sentences (`sentences`) and each translated alone


def sentences(text: str) -> list[str]:
    """The text's sentences (pySBD: "Mr. Smith" and "U.S.A." stay whole), stripped, empty ones dropped; a piece
    with no letter or digit (punctuation, an invisible mark pySBD cut off: "bike.\u2069") joins the one before.
    A segmenter per call (about a microsecond to make): one keeps the text it cuts, so one shared by the server's
    threads gave a text another's sentences, or none."""
    import pysbd

    parts: list[str] = []
    for part in (s.strip() for s in pysbd.Segmenter(language="en", clean=False).segment(text)):
        if parts and not any(c.isalnum() for c in part):
            parts[-1] = f"{parts[-1]} {part}".strip()
        elif part:
            parts.append(part)
    return parts


def clean_text(text: str) -> str:
    """Text as the tokenizer can take it: valid UTF-8 in NFKC form, straight quotes, one line, single spaces,
    no control or invisible format characters."""
    text = text.encode("utf-8", "replace").decode("utf-8")  # lone surrogates become '?'
    text = unicodedata.normalize("NFKC", text).translate(QUOTES)  # full-width letters, ligatures; ’ “ ” « »
    # Cc (NUL, newlines, escapes) becomes a space; Cf (zero-width spaces, bidi overrides) carries no words, but for
    # the joiner inside an emoji sequence (👨‍👩‍👧: one family, not three people), which set_aside carries over whole
    chars = (" " if unicodedata.category(c) == "Cc" else c for i, c in enumerate(text)
             if unicodedata.category(c) != "Cf" or (c == "\u200d" and emoji_joiner(text, i)))
    return " ".join("".join(chars).split())


def emoji_joiner(text: str, i: int) -> bool:
    """True when the zero-width joiner at text[i] joins two symbols (a variation selector may follow the first)."""
    before, after = text[i - 1: i].replace("\ufe0f", "") or text[i - 2: i - 1], text[i + 1: i + 2]
    return bool(before and after) and unicodedata.category(before)[0] == "S" and unicodedata.category(after)[0] == "S"


def fold_shouting(text: str) -> str:
    """A source typed in capitals ("GOOD MORNING"), read in lowercase: sentencepiece splits capitals into single
    letters, which the model reads far worse than lowercase (docs/training.md, Typed in a hurry). A sentence is
    shouting when it has at least 4 letters and 80 % of them are capitals; "I met the USA team" is left alone."""
    letters = [c for c in text if c.isalpha() and c.lower() != c.upper()]  # cased letters only
    upper = sum(c.isupper() for c in letters)
    return text.lower() if len(letters) >= 4 and upper >= 0.8 * len(letters) else text


def column_major_embedding(model: Transformer) -> None:
    """Store the shared (V, D) embedding column by column, in place; the values stay the same.

    The output projection computes x @ E^T, and on the CPU the product is faster when E^T is the contiguous
    one (docs/training.md, Speed, has the measurement). The embedding lookups of a few tokens per step do not mind
    the strides.
    """
    weight = model.embed.table.weight
    weight.data = weight.data.t().contiguous().t()  # (V, D) values, strides (1, V)


def quantize_int8(model: Transformer) -> Transformer:
    """A copy with dynamic int8 feed-forward layers and output projection (weights int8, activations per batch).

    Those are the large matrices, where int8 products pay for quantizing their input; the d_model x d_model
    attention projections stay fp32: too small for int8 to pay for quantizing their input (docs/training.md, Speed).
    CPU only.
    """
    names = {"output"} | {name for name, _ in model.named_modules() if name.endswith(("feed_forward.w_1", "feed_forward.w_2"))}
    with warnings.catch_warnings():  # torch.ao's deprecation notices; the eager API is what this torch offers
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(model, names, dtype=torch.qint8)


# -----------------------------------------------------------------------------
# Symbols the vocabulary lacks (emoji, ❤, ★): set aside before the model reads the text, put back where they stood.
# Spelled byte by byte, a single emoji is four or more pieces the model never saw together, and they set it writing
# nonsense; set aside, the words around them are translated as if they were not there.

JOINERS = {"\u200d", "\ufe0e", "\ufe0f", "\u20e3"}  # zero-width joiner, text / emoji presentation, keycap


@dataclass(frozen=True)
class Aside:
    text: str  # the run of symbols, as typed
    at: float  # where it stood: the share of the source's words before it (0: the start, 1: the end)


def set_aside(text: str, lacks: Callable[[str], bool]) -> tuple[str, list[Aside]]:
    """The text without its runs of symbols the vocabulary lacks (`lacks(char)`), and each run with where it stood.

    Only pictures are set aside (Unicode's "other symbols", So: emoji, ❤, ★, ☺), with what binds them (joiners,
    skin tones, variation selectors); math signs (< = +), currencies and letters of a script the model never saw
    stay where they are, for the model to read, and the page says when it never saw them."""
    def carried(c: str) -> bool:
        kind = unicodedata.category(c)
        return c in JOINERS or (kind == "So" or (kind == "Sk" and ord(c) >= 0x1F000)) and lacks(c)

    kept, runs, run = [], [], ""
    for c in text + " ":
        if carried(c):
            run += c
            continue
        if run:
            runs.append((len("".join(kept).split()), run))
            kept.append(" ")
            run = ""
        kept.append(c)
    rest = " ".join(re.sub(r"\s+([.!?,;:])", r"\1", "".join(kept)).split())
    words = max(1, len(rest.split()))
    asides = []
    for before, symbols in runs:
        tail = " ".join("".join(kept).split()[before:])
        at = 1.0 if not re.sub(r"[\W_]", "", tail) else before / words
        if asides and asides[-1].at == at:  # "🐶 ❤️": one run, as typed
            asides[-1] = Aside(asides[-1].text + " " + symbols.strip(), at)
        else:
            asides.append(Aside(symbols.strip(), at))
    return rest, [a for a in asides if a.text]


def put_back(text: str, asides: list[Aside]) -> str:
    """The translation with each set-aside run where it stood: first, last, or after the same share of its words."""
    words = text.split()
    for aside in sorted(asides, key=lambda a: a.at, reverse=True):
        words.insert(round(aside.at * len(words)), aside.text)
    return " ".join(words)


@dataclass(frozen=True)
class Familiarity:
    unknown: int  # runs of characters the vocabulary lacks (each one <unk>, or spelled byte by byte)
    pieces_per_word: float

    @property
    def far(self) -> bool:
        """True when the text lies far outside the training data (expect a poor translation)."""
        return self.unknown > 0 or self.pieces_per_word > FAR_PIECES_PER_WORD


class Translator:
    def __init__(self, model: Transformer, tokenizer: Tokenizer, metrics: Metrics | dict | None = None, name: str = "",
                 precision: str = "fp32"):
        self.model = model.eval()
        self.precision = precision  # "fp32", or "int8" for a quantize_int8 model
        self.tokenizer = tokenizer
        self.metrics = metrics if isinstance(metrics, Metrics) else Metrics.from_dict(metrics)
        self.name = name
        self.path: Path | None = None  # the checkpoint directory, when loaded from one (its timeline lives there)
        self.words: TrainingWords | None = None  # its training pairs' words (words.json), when it has them
        self.device = next(model.parameters()).device
        self._lacks: dict[str, bool] = {}  # character -> the vocabulary spells it in bytes or as <unk>
        vocab = [tokenizer.id_to_piece(i) for i in range(model.cfg.vocab_size)]  # what the output layer scores
        self.run_limits = run_limits(vocab)  # decoding's stutter guard (DecodeOptions.stutter_guard)

    @classmethod
    def load(cls, path: str | Path, device: str = "auto", int8: bool = False) -> "Translator":
        """Load a checkpoint directory; device is 'cpu', 'cuda' or 'auto'; int8: quantize_int8 (CPU)."""
        dev = resolve_device(device)
        model, tokenizer, metrics = load_checkpoint(path, dev)
        if dev.type == "cpu":
            column_major_embedding(model)
        if int8:
            if dev.type != "cpu":
                raise InputError("int8 quantization runs on the CPU only; use device='cpu'")
            model = quantize_int8(model)
        translator = cls(model, tokenizer, metrics, name=Path(path).name, precision="int8" if int8 else "fp32")
        translator.path, translator.words = Path(path), TrainingWords.load(path)
        return translator

    @property
    def cfg(self):
        return self.model.cfg

    @property
    def unsure_below(self) -> float:
        """The probability under which a word is marked unsure (unsure_words): the checkpoint's calibrated threshold
        (metrics.unsure, tools/calibrate_unsure.py), else UNSURE_BELOW."""
        return float(self.metrics.unsure.get("below", UNSURE_BELOW))

    @property
    def unsure_several(self) -> tuple[float, int]:
        """The probability under which two or more words are all marked, in a translation of at most so many words
        (unsure_words): calibrated with unsure_below (the longest labelled translation), else none."""
        return float(self.metrics.unsure.get("several_below", 0.0)), int(self.metrics.unsure.get("several_words", 0))

    # -- input checks ---------------------------------------------------------------

    def _bounded_ids(self, text: str, limit: int, source: bool = False) -> tuple[list[int], bool]:
        """At most `limit` token ids of `text`, and whether it was cut. The text is cut before any per-character
        work (cleaning, sentencepiece), so a megabyte costs no more than a sentence. A source is also read in
        lowercase when it is shouted (fold_shouting), and in American spelling (spelling.american)."""
        max_chars = CHARS_PER_POSITION * limit  # more than `limit` pieces ever need
        text = clean_text(text[: 2 * max_chars])
        text = american(fold_shouting(text)) if source else text
        ids = self.tokenizer.encode(text[:max_chars])
        return ids[:limit], len(ids) > limit or len(text) > max_chars

    def lacks(self, char: str) -> bool:
        """True when the vocabulary has no piece for `char` (it spells it in bytes, or reads it as <unk>)."""
        if char not in self._lacks:
            ids = self.tokenizer.encode(char)
            self._lacks[char] = any(i == self.cfg.unk_id or BYTE_PIECE.fullmatch(p) is not None
                                    for i, p in zip(ids, self.tokenizer.source_pieces(ids)))
        return self._lacks[char]

    def set_aside(self, text: str) -> tuple[str, list[Aside]]:
        """`text` cleaned, without the symbols the vocabulary lacks, and those symbols with where they stood."""
        if not isinstance(text, str):
            raise InputError(f"the text to translate must be a string, not {type(text).__name__}")
        return set_aside(clean_text(text[: 2 * CHARS_PER_POSITION * (self.cfg.max_len - 1)]), self.lacks)

    def source_ids(self, text: str) -> tuple[list[int], bool]:
        """The encoder's input for `text` (cleaned, symbols the vocabulary lacks set aside, cut to the model's
        positions, then </s>), and whether it was cut: the one way every caller builds source ids."""
        ids, cut, _ = self.source(text)
        return ids, cut

    def source(self, text: str) -> tuple[list[int], bool, list[Aside]]:
        """source_ids, and the symbols set aside (to be put back into the translation)."""
        rest, asides = self.set_aside(text)
        ids, cut = self._bounded_ids(rest, self.cfg.max_len - 1, source=True)  # one position is kept for </s>
        if not ids and asides:
            raise InputError(f"there is nothing here the model can read: it has no pieces for "
                             f"{' '.join(a.text for a in asides)}; type a sentence with words")
        if not ids:
            raise InputError("there is no text to translate: type a sentence first")
        return ids + [self.cfg.eos_id], cut, asides

    def familiarity(self, text: str) -> Familiarity:
        """How far `text` lies from what the model was trained on: runs of characters its vocabulary has never seen,
        and pieces per word (words broken into many small pieces are far from its training data)."""
        ids = self.tokenizer.encode(american(fold_shouting(self.set_aside(text)[0])))
        lacking = [i == self.cfg.unk_id or BYTE_PIECE.fullmatch(p) is not None
                   for i, p in zip(ids, self.tokenizer.source_pieces(ids))]
        runs = sum(now and not before for before, now in zip([False] + lacking, lacking))
        return Familiarity(runs, len(ids) / max(1, len(text.split())))

    # -- translation -----------------------------------------------------------------

    def translate(self, text: str, options: DecodeOptions | None = None, **overrides) -> Translation:
        """Translate one sentence; see translate_batch for the options and overrides (record_tree included)."""
        return self.translate_batch([text], options, **overrides)[0]

    def translate_batch(
        self,
        texts: Sequence[str],
        options: DecodeOptions | None = None,
        *,
        batch_size: int = 64,
        record_tree: bool = False,
        **overrides,
    ) -> list[Translation]:
        """Translate many sentences, in batches of similar length; results come back in input order.

        options: a DecodeOptions (default: greedy); overrides: any of its fields as keywords (strategy="beam",
        temperature, top_k, top_p, seed; beam_size, length_penalty; max_len), checked as DecodeOptions checks them.
        record_tree: beam search keeps its search in Translation.beam_tree (every step's ranked candidates).
        """
        if options is not None and not isinstance(options, DecodeOptions):
            raise InputError("options is a DecodeOptions; give a strategy by name as strategy=\"beam\"")
        opts = replace(options or DecodeOptions(), **overrides)
        read = [self.source(t) for t in texts]
        sources, asides = [(ids, cut) for ids, cut, _ in read], [a for _, _, a in read]
        rng = torch.Generator(device=self.device).manual_seed(opts.seed)
        results: list[Translation | None] = [None] * len(texts)
        for chunk in length_sorted_batches([ids for ids, _ in sources], batch_size):
            src = pad_batch([sources[i][0] for i in chunk], self.cfg.pad_id).to(self.device)  # (B, S)
            for i, hyp in zip(chunk, decoding.decode(self.model, src, opts, rng, record_tree, self.run_limits)):
                results[i] = self.to_translation(sources[i], hyp, asides[i])
        return results

    def to_translation(self, source: tuple[list[int], bool], hyp: decoding.Hypothesis,
                       asides: Sequence[Aside] = ()) -> Translation:
        piece = self.tokenizer.id_to_piece
        steps = [
            TokenStep(piece(s.token), s.prob, [(piece(a), p) for a, p in s.alternatives],
                      s.removed and (piece(s.removed[0]), s.removed[1])) for s in hyp.steps
        ]
        return Translation(
            text=put_back(self.tokenizer.decode(hyp.tokens), list(asides)),
            source_tokens=self.tokenizer.source_pieces(source[0]),
            target_tokens=self.tokenizer.pieces(hyp.tokens),
            target_ids=hyp.tokens,
            steps=steps,
            score=hyp.score,
            truncated=source[1],
            beam_tree=hyp.tree,
            carried=[a.text for a in asides],
            unsure=unsure_words(self.tokenizer.pieces(hyp.tokens), [s.prob for s in hyp.steps], self.unsure_below,
                                *self.unsure_several),
            source_ids=list(source[0]),
        )

    # -- teacher forcing: what the analyses (transformer.interpret.analyses) run the model on ---------------

    def pair_tensors(self, text: str, translation: str | Translation) -> tuple[torch.Tensor, torch.Tensor]:
        """The source ids (1, S) and the decoder's input (1, T): <s> and the translation, as a teacher-forced
        pass reads them. A Translation brings the ids its source was read as; a plain string is read here."""
        read = translation.source_ids if isinstance(translation, Translation) and translation.source_ids else None
        src = torch.tensor([read or self.source_ids(text)[0]], device=self.device)  # (1, S)
        return src, torch.tensor([self.decoder_input(translation)], device=self.device)  # (1, T)

    def decoder_input(self, translation: str | Translation) -> list[int]:
        """<s> then the translation's ids, cut to the model's positions."""
        if isinstance(translation, Translation):
            tgt_ids = translation.target_ids
        elif isinstance(translation, str):
            tgt_ids = self._bounded_ids(translation, self.cfg.max_len - 1)[0]
        else:
            raise InputError(f"the translation must be a string or a Translation, not {type(translation).__name__}")
        return [self.cfg.bos_id] + tgt_ids[: self.cfg.max_len - 1]

    def followers(self, tgt: torch.Tensor) -> list[int]:
        """What followed each position of the decoder's input tgt (1, T): the translation, then </s>."""
        return tgt[0, 1:].tolist() + [self.cfg.eos_id]
