"""Decoding strategies as plain functions over `model.encode` and `model.decode_step`.

Any object with those two methods and a `cfg` with pad/bos/eos ids and n_decoder_layers can be decoded
(the tests use a hand-written probability table). The loops build the KVCache and pass it to `decode_step`, which
returns a new tensor that the loop may modify in place. Every strategy returns, per sentence, a Hypothesis whose
steps record the chosen token, its probability and the top alternatives at that step.

A RunGuard, when given, keeps a piece from being chosen more times in a row than its RunLimits allow (a stutter).

Shape legend: B batch, K beam size, S source length, V vocabulary, A alternatives kept per step.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from .errors import InputError

N_ALTERNATIVES = 5
STRATEGIES = ("greedy", "sample", "beam")
MAX_BEAM = 16  # bounds the work one request can ask for: beams cost memory and time linearly
MAX_TEMPERATURE = 100.0


def recording(model) -> bool:
    """True when a hook that keeps what it sees across calls watches any of `model`'s taps (Tap.recording) for the
    current caller."""
    return isinstance(model, nn.Module) and any(getattr(m, "recording", False) is True for m in model.modules())


# -----------------------------------------------------------------------------
# The KV cache: built and owned by the decoding loop, passed to the model, never stored on it


class KVCache:
    """Keys and values that incremental decoding reuses (§3.2.3, "auto-regressive").

    Self-attention keys/values grow by one position per decoded step; cross-attention keys/values
    are projected from the encoder memory once per sentence, on the first step.
    """

    def __init__(self, n_layers: int, src_mask: Tensor | None):
        self.src_mask = src_mask  # (B, S) True at real source tokens; None when nothing is padding
        self.self_k: list[Tensor | None] = [None] * n_layers  # each (B, H, t, Dh)
        self.self_v: list[Tensor | None] = [None] * n_layers
        self.cross_k: list[Tensor | None] = [None] * n_layers  # each (B, H, S, Dh)
        self.cross_v: list[Tensor | None] = [None] * n_layers
        self.prefix: Tensor | None = None  # (B, t): the tokens so far, for a model that reads them all again each step

    @property
    def length(self) -> int:
        """How many target positions are cached (the position of the next token)."""
        k = self.self_k[0]
        return 0 if k is None else k.size(2)

    def append(self, i: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add new positions' self-attention keys and values (B, H, T_new, Dh) to layer i; returns all of them."""
        if self.self_k[i] is not None:
            k = torch.cat([self.self_k[i], k], dim=2)  # (B, H, t, Dh)
            v = torch.cat([self.self_v[i], v], dim=2)
        self.self_k[i], self.self_v[i] = k, v
        return k, v

    def reorder(self, index: Tensor, cross: bool = False) -> None:
        """Keep rows `index` of the batch (beam search reorders hypotheses this way).

        Cross-attention entries only need reordering when rows move between sentences (`cross=True`);
        beams of one sentence share the same source.
        """
        for store in (self.self_k, self.self_v) + ((self.cross_k, self.cross_v) if cross else ()):
            for i, t in enumerate(store):
                if t is not None:
                    store[i] = t.index_select(0, index)
        if self.prefix is not None:
            self.prefix = self.prefix.index_select(0, index)
        if cross and self.src_mask is not None:
            self.src_mask = self.src_mask.index_select(0, index)

    @property
    def memory_mask(self) -> Tensor | None:
        return None if self.src_mask is None else self.src_mask[:, None, None, :]  # (B, 1, 1, S)


def new_cache(model, src: Tensor) -> KVCache:
    """An empty cache for decoding `src` (B, S) with `model`.

    The loops drop and reorder rows as sentences end and beams move, and a hook that records attention cannot follow
    them, so recording is refused when more than one row is decoded.
    """
    if src.size(0) > 1 and recording(model):
        raise InputError("attention can be recorded while decoding one sentence with greedy decoding or sampling; "
                         "for a batch or beam search, record a teacher-forced pass (analyses.inspect) instead")
    real = src.ne(model.cfg.pad_id)
    return KVCache(model.cfg.n_decoder_layers, None if bool(real.all()) else real)


class WithoutCache:
    """A model decoded without the KV cache, for comparison: every step runs the decoder again over the whole prefix
    (the cache keeps only the tokens so far). Decoded by the same loops, it must write the same translation."""

    def __init__(self, model):
        self.model, self.cfg = model, model.cfg

    def encode(self, src: Tensor) -> Tensor:
        return self.model.encode(src)

    def decode_step(self, tokens: Tensor, memory: Tensor, cache: KVCache) -> Tensor:
        cache.prefix = tokens if cache.prefix is None else torch.cat([cache.prefix, tokens], dim=1)  # (B, t)
        m, T = self.model, cache.prefix.size(1)
        x = m.decoder(m.positional(m.embed(cache.prefix)), memory, cache.memory_mask, m.causal_mask(T, tokens.device))
        return m.generator(x[:, -1])  # (B, t, D) -> the last position's (B, V)


# -----------------------------------------------------------------------------
# Options: one dataclass, checked once, used by the Translator, the CLI and the app


def _check_number(name: str, value, lo: float, hi: float, integer: bool = False):
    """value as an int or float if it is one from lo to hi, else a ValueError that says what was expected."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if ok and integer:
        ok = float(value).is_integer()
    if not ok or not lo <= value <= hi:
        kind = "a whole number" if integer else "a number"
        said = f"{value:g}" if ok else repr(value)  # 99, not 99.0
        raise InputError(f"{name} must be {kind} from {lo:g} to {hi:g}; got {said}")
    return int(value) if integer else float(value)


@dataclass(frozen=True)
class DecodeOptions:
    """How to decode. Built from user input anywhere; a bad value raises ValueError with a plain sentence."""

    strategy: str = "greedy"  # 'greedy', 'sample' or 'beam'
    temperature: float = 1.0  # sampling: softmax(logits / temperature); 0 is greedy
    top_k: int = 0  # sampling: keep the k most probable tokens (0: all)
    top_p: float = 1.0  # sampling: keep the smallest set of tokens holding probability top_p (1: all)
    seed: int = 0  # sampling: seeds a torch.Generator of its own, never the global RNG
    beam_size: int = 4
    length_penalty: float = 1.0  # beam: a finished hypothesis scores sum(log p) / length ** length_penalty
    max_len: int = 0  # generated tokens at most; 0: 1.5 x the source length + 10
    stutter_guard: bool = True  # no piece chosen more times in a row than the vocabulary's run limits allow

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise InputError(f"unknown strategy {self.strategy!r}: choose one of {', '.join(STRATEGIES)}")
        if not isinstance(self.stutter_guard, bool):
            raise InputError(f"stutter_guard must be true or false; got {self.stutter_guard!r}")
        checked = {
            "temperature": _check_number("temperature", self.temperature, 0, MAX_TEMPERATURE),
            "top_k": _check_number("top_k", self.top_k, 0, 2**31 - 1, integer=True),
            "top_p": _check_number("top_p", self.top_p, 1e-6, 1.0),
            "seed": _check_number("seed", self.seed, 0, 2**63 - 1, integer=True),
            "beam_size": _check_number("beam_size", self.beam_size, 1, MAX_BEAM, integer=True),
            "length_penalty": _check_number("length_penalty", self.length_penalty, 0.0, 5.0),
            "max_len": _check_number("max_len", 0 if self.max_len is None else self.max_len, 0, 2**31 - 1, integer=True),
        }
        for name, value in checked.items():  # "4" stays refused; 4.0 becomes 4
            object.__setattr__(self, name, value)

    def length_limit(self, source_length: int, model_max_len: int) -> int:
        """How many tokens to generate at most for a source of that many tokens."""
        limit = model_max_len - 1  # one position is the decoder's <s>
        if self.max_len > limit:
            raise InputError(f"max_len must be a whole number from 0 to {limit} for this model; got {self.max_len}")
        return self.max_len or min(limit, int(1.5 * source_length) + 10)


def decode(model, src: Tensor, options: DecodeOptions, rng: torch.Generator | None = None,
           record_tree: bool = False, run_limits: RunLimits | None = None) -> list[Hypothesis]:
    """Decode a batch src (B, S) with the strategy `options` names; sampling needs `rng`;
    record_tree: beam search keeps each sentence's search in Hypothesis.tree;
    run_limits: how many times in a row each piece may be chosen (a RunGuard's), used when options.stutter_guard."""
    lengths = src.ne(model.cfg.pad_id).sum(dim=1).tolist()  # (B,) real tokens per row, </s> included
    max_len = [options.length_limit(n, model.cfg.max_len) for n in lengths]  # per sentence: the same alone or batched
    limits = run_limits if options.stutter_guard else None
    if options.strategy == "greedy":
        return greedy(model, src, max_len, limits)
    if options.strategy == "sample":
        return sample(model, src, max_len, rng, options.temperature, options.top_k, options.top_p, limits)
    return beam_search(model, src, max_len, options.beam_size, options.length_penalty, record_tree,
                       run_limits=limits)


@dataclass
class Step:
    token: int
    prob: float  # the model's probability of `token` at this step (before temperature or truncation)
    alternatives: list[tuple[int, float]]  # the most probable tokens at this step that it could choose, best first
    removed: tuple[int, float] | None = None  # the piece the model ranked first, with its probability, where the
    # stutter guard (RunGuard) removed it

    @property
    def guarded(self) -> bool:
        return self.removed is not None


@dataclass
class BeamNode:
    """One candidate that beam search ranked at one step."""

    step: int  # the position of `token` in the output (0: the first generated token)
    parent: int  # index in BeamTree.nodes of the live hypothesis it extends; -1: it follows <s>
    token: int
    log_prob: float  # cumulative: the sum of log-probabilities along the path
    score: float  # log_prob / (step + 1) ** length_penalty, what finished hypotheses are compared by
    status: str  # "live": one of the K kept; "finished": ended with </s> and kept; "pruned": dropped here


@dataclass
class BeamTree:
    """What one sentence's beam search looked at: every step's ranked candidates (its 2K best), linked to parents."""

    beam_size: int
    length_penalty: float
    nodes: list[BeamNode] = field(default_factory=list)
    winner: int = -1  # the node where the chosen hypothesis ended

    def path(self, node: int) -> list[int]:
        """Node indices from the first step down to `node`."""
        out = []
        while node >= 0:
            out.append(node)
            node = self.nodes[node].parent
        return out[::-1]


@dataclass
class Hypothesis:
    tokens: list[int]  # generated ids, without <s> and </s>
    steps: list[Step] = field(default_factory=list)  # one per generated token, </s> included when reached
    score: float = 0.0  # sum of log-probabilities (beam search: divided by length ** length_penalty)
    tree: BeamTree | None = None  # beam search with record_tree=True: the search that found it


class StepLog:
    """Per-row record of the decoding steps, reordered with the beams.

    Steps are kept as the loop made them and joined into (B, t, ...) tensors only when rows are selected or
    read: a batch-1 greedy step then costs no tensor operation for its record.
    """

    def __init__(self, batch: int, device: torch.device):
        self.tokens = torch.empty(batch, 0, dtype=torch.long, device=device)  # (B, t)
        self.log_probs = torch.empty(batch, 0, device=device)  # (B, t)
        self.alt_ids = torch.empty(batch, 0, N_ALTERNATIVES, dtype=torch.long, device=device)  # (B, t, A)
        self.alt_log_probs = torch.empty(batch, 0, N_ALTERNATIVES, device=device)  # (B, t, A)
        self.removed = torch.empty(batch, 0, dtype=torch.long, device=device)  # (B, t) -1: nothing removed
        self.removed_log_probs = torch.empty(batch, 0, device=device)  # (B, t)
        self.pending: list[tuple[Tensor, ...]] = []  # steps not yet joined

    def append(self, chosen: Tensor, chosen_lp: Tensor, alt_ids: Tensor, alt_lp: Tensor,
               removed: tuple[Tensor, Tensor] | None = None) -> None:
        """One step per row: chosen (B,) and its log-probability (B,); alternatives (B, A) from `alternatives`;
        removed: the piece a RunGuard removed where the model ranked it first (B,), -1 elsewhere, and its
        log-probability (B,) (None: nowhere, as at nearly every step: nothing is made for it until the join)."""
        self.pending.append((chosen, chosen_lp, alt_ids, alt_lp, removed))

    FIELDS = ("tokens", "log_probs", "alt_ids", "alt_log_probs", "removed", "removed_log_probs")

    def _join(self) -> None:
        if self.pending:
            *columns, marks = zip(*self.pending)  # marks: each step's removed pieces, or None
            if all(m is None for m in marks):  # the usual case: one (B, t) of each for all the steps
                chosen = columns[0][0]
                shape = (chosen.size(0), len(marks))
                marks = [torch.full(shape, -1, dtype=torch.long, device=chosen.device),
                         torch.zeros(shape, dtype=columns[1][0].dtype, device=chosen.device)]
            else:
                filled = [(torch.full_like(c, -1), torch.zeros_like(lp)) if m is None else m
                          for m, c, lp in zip(marks, columns[0], columns[1])]
                marks = [torch.stack([f[k] for f in filled], dim=1) for k in (0, 1)]  # (B, t) each
            for name, steps in zip(self.FIELDS, columns):
                setattr(self, name, torch.cat([getattr(self, name), torch.stack(steps, dim=1)], dim=1))  # (B, t, ...)
            for name, joined in zip(self.FIELDS[4:], marks):
                setattr(self, name, torch.cat([getattr(self, name), joined], dim=1))  # (B, t)
            self.pending = []

    def select(self, index: Tensor) -> "StepLog":
        """A new log holding rows `index` of this one (how beams inherit their parents' history)."""
        self._join()
        out = StepLog(0, self.tokens.device)
        for name in self.FIELDS:
            setattr(out, name, getattr(self, name).index_select(0, index))
        return out

    def hypothesis(self, row: int, length: int, eos_id: int, score: float | None = None) -> Hypothesis:
        """The first `length` steps of `row` as a Hypothesis (tokens stop before </s>); score: the sum of
        the chosen tokens' log-probabilities unless given."""
        self._join()
        toks = self.tokens[row, :length].tolist()
        log_probs = self.log_probs[row, :length]
        score = float(log_probs.sum()) if score is None else score
        probs = log_probs.exp().tolist()
        alt_ids, alt_probs = self.alt_ids[row, :length].tolist(), self.alt_log_probs[row, :length].exp().tolist()
        removed = zip(self.removed[row, :length].tolist(), self.removed_log_probs[row, :length].exp().tolist())
        steps = [
            Step(t, p, [(a, q) for a, q in zip(ids, ps) if q > 0.0], (r, rp) if r >= 0 else None)
            for t, p, ids, ps, (r, rp) in zip(toks, probs, alt_ids, alt_probs, removed)
        ]
        return Hypothesis([t for t in toks if t != eos_id], steps, score)


def alternatives(log_probs: Tensor) -> tuple[Tensor, Tensor]:
    """The N_ALTERNATIVES most probable tokens per row: ids and log-probabilities, each (B, A)."""
    alt_lp, alt_ids = log_probs.topk(min(N_ALTERNATIVES, log_probs.size(-1)), dim=-1)  # (B, A)
    return _fill_alternatives(alt_ids, alt_lp)


def _fill_alternatives(alt_ids: Tensor, alt_lp: Tensor) -> tuple[Tensor, Tensor]:
    """Best-first (B, <=A) ids and log-probabilities, padded to A columns with impossible tokens."""
    if alt_ids.size(1) < N_ALTERNATIVES:  # a toy vocabulary smaller than A
        fill = N_ALTERNATIVES - alt_ids.size(1)
        alt_ids = torch.cat([alt_ids, alt_ids[:, :1].expand(-1, fill)], dim=1)
        alt_lp = torch.cat([alt_lp, torch.full_like(alt_lp[:, :1], float("-inf")).expand(-1, fill)], dim=1)
    return alt_ids, alt_lp


def _forbid(log_probs: Tensor, special: Tensor) -> Tensor:
    """Tokens `special` (<pad> and <s>) are never generated (in place: decode_step's output is ours to change)."""
    return log_probs.index_fill_(1, special, float("-inf"))


@dataclass
class RunLimits:
    """What a RunGuard holds each piece to (a vocabulary's: tokenizer.run_limits)."""

    limit: Tensor  # (V,) how many times in a row a piece may be chosen (0: no limit)
    repeating: dict[int, list[int]] = field(default_factory=dict)  # a piece -> the pieces that, once its run is full,
    # would say it once more: itself and the pieces that begin with it ("is·is" goes on with neither "is" nor
    # "issez"); a piece missing here: itself alone
    word_part: list[int] = field(default_factory=list)  # per piece: WORD_START ("▁St"), WORD_GOES_ON ("ate") or
    # 0 (punctuation, digits, bytes, special pieces: between words); empty: words of several pieces go unwatched
    letters: list[str] = field(default_factory=list)  # per piece: its letters ("▁Stef" -> "Stef", "," -> ""); with
    # beginning_with, keeps one letter from coming a fourth time in a row across pieces ("Stef·f·f·f"); empty: not
    beginning_with: dict[str, list[int]] = field(default_factory=dict)  # "ff" -> the pieces inside a word that
    # begin with it


WORD_START, WORD_GOES_ON = 1, 2
PHRASES = (2, 3)  # a phrase of so many words is not said twice in a row (RunGuard)
SAID = 2 * max(PHRASES) - 1  # the words before the one being said that a RunGuard keeps: enough to see one


class RunGuard:
    """Keeps each row from saying a piece more times in a row than its RunLimits allow, a word three times, a phrase
    of two or three words twice, or a letter four times.

    A model that has lost its way in a word it does not know may say one piece again and again ("Görs·ev·ev·ev");
    once a piece's run is full, the guard sets it, and the pieces that begin with it, to -inf for that row, which
    takes its next choice. A word of several pieces said twice in a row ("▁St·ate ▁St·ate") may not be finished a
    third time: once its first pieces are said again, its last piece is removed ("State State States" may follow).
    A phrase of two or three words (PHRASES) is not said again right after itself ("zu spät zu spät", "Shot Shon Shot
    Shot Shon Shot"): the piece that would finish its last word is removed (its first piece, for a word of one).
    No letter comes four times in a row inside a word, across pieces ("Stef·f·f" may not go on with "f").
    Like fairseq's and Hugging Face's no-repeat n-gram rule, it only removes candidates: what remains keeps the
    model's own probabilities.
    """

    def __init__(self, limits: RunLimits, rows: int, device: torch.device):
        self.limits, self.limit = limits, limits.limit.to(device)  # (V,)
        self.last = torch.zeros(rows, dtype=torch.long, device=device)  # (n,) each row's last piece
        self.run = torch.zeros(rows, dtype=torch.long, device=device)  # (n,) how many times in a row (0: none yet)
        # each row's words, when the vocabulary tells words apart: (the word being said, the last SAID words said
        # before it since punctuation or a number), words as tuples of pieces; kept on the CPU, a few per row
        self.words: list[tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]] = [((), ())] * rows
        # each row's last letter in the word being said and how many times in a row it came (across pieces)
        self.tails: list[tuple[str, int]] = [("", 0)] * rows
        # at the last forbid, where the guard removed a row's first choice: that piece (n,) (-1 in the other rows)
        # and its log-probability (n,); None where it removed no first choice (nearly every step)
        self.removed: tuple[Tensor, Tensor] | None = None

    def forbid(self, log_probs: Tensor) -> Tensor:
        """log_probs (n, V) with what would go on repeating each row's full run, or say a word a third time, at
        -inf (in place)."""
        limit = self.limit[self.last]  # (n,)
        full = ((limit > 0) & (self.run >= limit)).nonzero().view(-1)  # rows whose run is full: seldom any
        banned = [(row, self.limits.repeating.get(piece, [piece]))
                  for row, piece in zip(full.tolist(), self.last[full].tolist())]
        banned += [(row, [piece]) for row, piece in self.word_ends + self.phrase_ends] + self.letter_runs
        self.removed = None
        for row, removed in banned:
            first = int(log_probs[row].argmax())
            if first in removed:
                if self.removed is None:
                    self.removed = (torch.full_like(self.last, -1), log_probs.new_zeros(self.last.shape))
                self.removed[0][row], self.removed[1][row] = first, log_probs[row, first]
            log_probs[row, removed] = float("-inf")
        return log_probs

    def removed_at(self, rows: Tensor) -> tuple[Tensor, Tensor] | None:
        """What the last forbid removed (self.removed), for rows `rows` (n',) of it."""
        return None if self.removed is None else (self.removed[0][rows], self.removed[1][rows])

    def advance(self, chosen: Tensor, rows: Tensor | None = None) -> None:
        """Each row chose `chosen` (n,); rows (n,): the row of the previous step each one continues (beams move)."""
        last, run = (self.last, self.run) if rows is None else (self.last[rows], self.run[rows])
        self.run = torch.where(chosen.eq(last), run + 1, torch.ones_like(run))
        self.last = chosen
        if self.limits.word_part:
            parents = range(len(self.words)) if rows is None else rows.tolist()
            pieces = chosen.tolist()
            self.words = [self._next_word(self.words[r], piece) for r, piece in zip(parents, pieces)]
            if self.limits.letters:
                self.tails = [self._next_tail(self.tails[r], piece) for r, piece in zip(parents, pieces)]

    def _next_word(self, words: tuple[tuple[int, ...], tuple[tuple[int, ...], ...]], piece: int):
        """A row's (word being said, words said before it) after it says `piece`."""
        word, said = words
        part = self.limits.word_part[piece]
        if part == WORD_GOES_ON and word:
            return word + (piece,), said
        if word:  # the word is finished
            said = (said + (word,))[-SAID:]
        if part == 0:  # punctuation or a number between: "State, State" is no stutter
            return (), ()
        return (piece,), said

    def _next_tail(self, tail: tuple[str, int], piece: int) -> tuple[str, int]:
        """A row's last letter and its run after it says `piece` (a run goes on only inside a word)."""
        text = self.limits.letters[piece]
        if not text:
            return "", 0
        letter, times = tail if self.limits.word_part[piece] == WORD_GOES_ON else ("", 0)
        same = len(text) - len(text.rstrip(text[-1]))  # the piece's own last letter, how many times at its end
        return (letter, times + same) if same == len(text) and text[-1] == letter else (text[-1], same)

    @property
    def word_ends(self) -> list[tuple[int, int]]:
        """(row, piece): the rows about to finish, a third time in a row, a word of several pieces, and that word's
        last piece (seldom any)."""
        return [(row, said[-1][-1]) for row, (word, said) in enumerate(self.words)
                if len(said) >= 2 and said[-1] == said[-2] and len(said[-1]) > 1 and word == said[-1][:-1]]

    @property
    def phrase_ends(self) -> list[tuple[int, int]]:
        """(row, piece): the rows about to say again, right after it, a phrase of k words (k in PHRASES), and the
        piece that would: the last piece of its last word, where the word being said is that word but for it, or
        the first piece of a last word of one piece, where the word being said ends the phrase's k - 1 first words
        (seldom any)."""
        ends = []
        for row, (word, said) in enumerate(self.words):
            if not word or len(said) < 2:  # fewer than three words since punctuation: no phrase can come again yet
                continue
            done = said + (word,)  # the word being said, finished by the next word's first piece
            for k in PHRASES:
                phrase = said[-(2 * k - 1):-(k - 1)]  # (k words): the phrase said once, if the word being said
                # finishes its second time
                if len(phrase) == k and said[-(k - 1):] == phrase[:-1] and len(phrase[-1]) > 1 \
                        and word == phrase[-1][:-1]:
                    ends.append((row, phrase[-1][-1]))
                phrase = done[-(2 * k - 1):-(k - 1)]
                if len(phrase) == k and done[-(k - 1):] == phrase[:-1] and len(phrase[-1]) == 1:
                    ends.append((row, phrase[-1][0]))
        return ends

    @property
    def letter_runs(self) -> list[tuple[int, list[int]]]:
        """(row, pieces): the rows whose next piece could say their last letter a fourth time in a row, and those
        pieces (seldom any)."""
        after = self.limits.beginning_with
        return [(row, after[letter * (4 - times)]) for row, (letter, times) in enumerate(self.tails)
                if letter and letter * (4 - times) in after]

    def select(self, rows: Tensor) -> None:
        """Keep rows `rows` (finished sentences leave the batch)."""
        self.last, self.run = self.last[rows], self.run[rows]
        if self.limits.word_part:
            self.words = [self.words[r] for r in rows.tolist()]
            self.tails = [self.tails[r] for r in rows.tolist()]


# -----------------------------------------------------------------------------
# One token at a time: greedy and sampling share the loop


Choose = Callable[[Tensor, Tensor, Tensor], tuple[Tensor, Tensor]]
MaxLen = int | Sequence[int]  # generated tokens at most: one bound for every row, or one per row


def _per_row(max_len: MaxLen, B: int) -> list[int]:
    limits = [max_len] * B if isinstance(max_len, int) else list(max_len)
    assert len(limits) == B, f"{len(limits)} length bounds for {B} sentences"
    return limits


def _decode_one_path(model, src: Tensor, max_len: MaxLen, choose: Choose,
                     run_limits: RunLimits | None = None) -> list[Hypothesis]:
    """choose(log_probs (n, V), alt_ids (n, A), alt_lp (n, A)) -> the chosen tokens (n,) and their log-probabilities;
    run_limits: a RunGuard's, or None."""
    cfg = model.cfg
    B = src.size(0)
    limits = _per_row(max_len, B)
    memory = model.encode(src)  # (B, S, D)
    cache = new_cache(model, src)
    tokens = torch.full((B, 1), cfg.bos_id, dtype=torch.long, device=src.device)  # (B, 1)
    special = torch.tensor([cfg.pad_id, cfg.bos_id], device=src.device)
    log = StepLog(B, src.device)
    rows = list(range(B))  # which sentence each batch row is decoding
    hyps: list[Hypothesis | None] = [None] * B
    guard = None if run_limits is None else RunGuard(run_limits, B, src.device)
    for t in range(max(limits)):
        log_probs = _forbid(model.decode_step(tokens, memory, cache), special)  # (n, V)
        if guard is not None:
            guard.forbid(log_probs)
        alt_ids, alt_lp = alternatives(log_probs)  # (n, A) each
        chosen, chosen_lp = choose(log_probs, alt_ids, alt_lp)  # (n,) each
        log.append(chosen, chosen_lp, alt_ids, alt_lp, None if guard is None else guard.removed)
        if guard is not None:
            guard.advance(chosen)
        ids = chosen.tolist()
        ended = [i for i, tok in enumerate(ids) if tok == cfg.eos_id or t == limits[rows[i]] - 1]
        for i in ended:
            hyps[rows[i]] = log.hypothesis(i, t + 1, cfg.eos_id)
        if len(ended) == len(rows):
            break
        if ended:  # finished sentences leave the batch, their cache rows too
            kept = sorted(set(range(len(rows))) - set(ended))
            keep = torch.tensor(kept, device=src.device)  # (n',)
            memory, chosen = memory.index_select(0, keep), chosen[keep]
            rows = [rows[i] for i in kept]
            cache.reorder(keep, cross=True)
            log = log.select(keep)
            if guard is not None:
                guard.select(keep)
        tokens = chosen[:, None]  # (n, 1): only the new token; the cache holds the rest
    return hyps


@torch.inference_mode()
def greedy(model, src: Tensor, max_len: MaxLen, run_limits: RunLimits | None = None) -> list[Hypothesis]:
    """Pick the most probable token at every step (that a RunGuard of run_limits allows). src (B, S) -> one
    Hypothesis per row."""
    return _decode_one_path(model, src, max_len, lambda log_probs, alt_ids, alt_lp: (alt_ids[:, 0], alt_lp[:, 0]),
                            run_limits)


def filter_logits(log_probs: Tensor, temperature: float, top_k: int = 0, top_p: float = 1.0) -> Tensor:
    """Scaled logits with everything outside the top-k / nucleus (top-p) set at -inf. (B, V) -> (B, V)."""
    logits = log_probs / temperature
    if top_k > 0:
        kth = logits.topk(min(top_k, logits.size(-1)), dim=-1).values[:, -1:]  # (B, 1)
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, order = logits.sort(dim=-1, descending=True)  # (B, V)
        cum = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        outside = cum - sorted_logits.softmax(dim=-1) >= top_p  # mass before this token already reaches p
        sorted_logits = sorted_logits.masked_fill(outside, float("-inf"))
        logits = torch.full_like(logits, float("-inf")).scatter(1, order, sorted_logits)
    return logits


@torch.inference_mode()
def sample(
    model,
    src: Tensor,
    max_len: MaxLen,
    rng: torch.Generator,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    run_limits: RunLimits | None = None,
) -> list[Hypothesis]:
    """Random sampling from softmax(logits / temperature), optionally restricted to top-k / top-p.

    rng, a torch.Generator, makes samples repeatable (never the global RNG). Temperature 0 is greedy.
    run_limits: a RunGuard's, or None.
    """
    if temperature == 0:
        return greedy(model, src, max_len, run_limits)

    def choose(log_probs: Tensor, alt_ids: Tensor, alt_lp: Tensor) -> tuple[Tensor, Tensor]:
        probs = filter_logits(log_probs, temperature, top_k, top_p).softmax(dim=-1)  # (B, V)
        chosen = torch.multinomial(probs, 1, generator=rng)  # (B, 1)
        return chosen.squeeze(1), log_probs.gather(1, chosen).squeeze(1)

    return _decode_one_path(model, src, max_len, choose, run_limits)


# -----------------------------------------------------------------------------
# Beam search: a pure step, a loop over sentences, and an optional observer that records the tree


@dataclass
class BeamStep:
    """What one step of beam search chose, for n sentences of K beams: their 2K best candidates, best first."""

    scores: Tensor  # (n, 2K) cumulative log-probabilities (-inf: no such candidate)
    beams: Tensor  # (n, 2K) the beam (0..K-1) each candidate extends
    tokens: Tensor  # (n, 2K)
    token_log_probs: Tensor  # (n, 2K) the token's own log-probability
    ended: Tensor  # (n, 2K) bool: ends here and is kept as a finished hypothesis
    done: Tensor  # (n,) bool: the sentence stops after this step
    next_beams: Tensor  # (n, K) the candidates (0..2K-1) that continue as the next step's beams, best first
    next_scores: Tensor  # (n, K) their cumulative log-probabilities


def beam_step(scores: Tensor, log_probs: Tensor, eos_id: int, room: Tensor, last: Tensor) -> BeamStep:
    """One step of beam search, without state: what to keep, what ends, what continues.

    scores (n, K): each beam's cumulative log-probability; log_probs (n*K, V): the next token's.
    room (n,): how many more finished hypotheses each sentence takes; last (n,) bool: its last step.
    A candidate ending with </s> (every candidate, on the last step) is kept only when it ranks among the
    first K and the sentence has room; a sentence is done when its room is filled or at its last step.
    """
    n, K = scores.shape
    M = min(2 * K, log_probs.size(-1))  # a sentence's 2K best continuations are among its rows' 2K best tokens
    row_lp, row_ids = log_probs.topk(M, dim=-1)  # (n*K, M), best first
    cand = (scores[:, :, None] + row_lp.view(n, K, M)).view(n, K * M)  # (n, K*M)
    top_scores, top_idx = cand.topk(2 * K, dim=-1)  # (n, 2K): enough that K of them continue
    beams = top_idx // M  # (n, 2K)
    flat = (torch.arange(n, device=scores.device)[:, None] * K + beams) * M + top_idx % M  # (n, 2K) into row_ids
    tokens, token_lp = row_ids.view(-1)[flat], row_lp.view(-1)[flat]  # (n, 2K) each
    ending = tokens.eq(eos_id) | last[:, None]  # (n, 2K) candidates that cannot continue
    ends = ending & top_scores.isfinite()  # (n, 2K)
    ends[:, K:] = False  # an ending ranked below the beam is pruned
    ended = ends & (ends.cumsum(dim=1) <= room[:, None])  # (n, 2K) the first `room` endings of each sentence
    done = (ended.sum(dim=1) >= room) | last  # (n,)
    next_scores, next_beams = top_scores.masked_fill(ending, float("-inf")).topk(K, dim=-1)  # (n, K)
    return BeamStep(top_scores, beams, tokens, token_lp, ended, done, next_beams, next_scores)


class BeamObserver:
    """Told every step of beam search; the search itself never depends on it."""

    def step(self, t: int, sentences: list[int], step: BeamStep) -> None:
        """Step t of the sentences `sentences` (their index in the batch, one per row of `step`)."""

    def finish(self, hypotheses: list[Hypothesis], chosen: list[int]) -> None:
        """The search's answer per sentence, and which of its finished hypotheses it was (-1: none)."""


@dataclass
class _Growing:
    """One sentence's tree while it is being searched."""

    tree: BeamTree
    beams: list[int] = field(default_factory=list)  # the tree node of each current beam (-1: none)
    ends: list[int] = field(default_factory=list)  # the tree node of each finished hypothesis, in order


class TreeRecorder(BeamObserver):
    """Records each sentence's BeamTree: every step's 2K best candidates, which continued, ended or were pruned."""

    def __init__(self, batch: int, beam_size: int, length_penalty: float):
        self.sentences = [_Growing(BeamTree(beam_size, length_penalty)) for _ in range(batch)]

    def step(self, t: int, sentences: list[int], step: BeamStep) -> None:
        rows = zip(step.beams.tolist(), step.tokens.tolist(), step.scores.tolist(), step.ended.tolist(),
                   step.next_beams.tolist(), step.done.tolist())
        for b, (beams, tokens, scores, ended, continuing, done) in zip(sentences, rows):
            growing, node_of = self.sentences[b], {}
            continuing = [] if done else continuing
            for j, (k, token, lp, end) in enumerate(zip(beams, tokens, scores, ended)):
                if not math.isfinite(lp):
                    continue
                status = "finished" if end else "live" if j in continuing else "pruned"
                node_of[j] = len(growing.tree.nodes)
                growing.tree.nodes.append(BeamNode(t, growing.beams[k] if t else -1, token, lp,
                                                   lp / (t + 1) ** growing.tree.length_penalty, status))
                if end:
                    growing.ends.append(node_of[j])
            growing.beams = [node_of.get(j, -1) for j in continuing]

    def finish(self, hypotheses: list[Hypothesis], chosen: list[int]) -> None:
        for growing, hyp, h in zip(self.sentences, hypotheses, chosen):
            growing.tree.winner = growing.ends[h] if h >= 0 else -1
            hyp.tree = growing.tree


@dataclass
class _Sentence:
    """One sentence's search: its length bound and the hypotheses that have ended."""

    limit: int
    finished: list[Hypothesis] = field(default_factory=list)

    def best(self) -> int:
        """The index of the best finished hypothesis (-1: none)."""
        return max(range(len(self.finished)), key=lambda h: self.finished[h].score, default=-1)


@torch.inference_mode()
def beam_search(model, src: Tensor, max_len: MaxLen, beam_size: int = 4, length_penalty: float = 1.0,
                record_tree: bool = False, observer: BeamObserver | None = None,
                run_limits: RunLimits | None = None) -> list[Hypothesis]:
    """Batched beam search; a finished hypothesis scores sum(log p) / length ** length_penalty.

    A sentence stops when `beam_size` hypotheses have ended with </s> (or at max_len). The KV cache
    follows the surviving beams through `index_select`. record_tree: every hypothesis carries its
    sentence's BeamTree (a TreeRecorder observes the search); observer: any other BeamObserver.
    run_limits: a RunGuard's, each beam's runs followed as beams move; None: no guard.
    """
    cfg = model.cfg
    B, K, dev = src.size(0), beam_size, src.device
    sentences = [_Sentence(limit) for limit in _per_row(max_len, B)]
    if record_tree:
        if observer is not None:
            raise ValueError("record_tree is a TreeRecorder observing the search: pass one observer, not both")
        observer = TreeRecorder(B, K, length_penalty)
    memory = model.encode(src).repeat_interleave(K, dim=0)  # (B*K, S, D)
    cache = new_cache(model, src.repeat_interleave(K, dim=0))
    tokens = torch.full((B * K, 1), cfg.bos_id, dtype=torch.long, device=dev)  # (B*K, 1)
    special = torch.tensor([cfg.pad_id, cfg.bos_id], device=dev)
    log = StepLog(B * K, dev)  # the steps behind each beam
    scores = torch.zeros(B, K, device=dev)
    scores[:, 1:] = float("-inf")  # all beams start identical: keep only the first alive
    active = list(range(B))  # the sentences still decoding, in batch order; each owns K rows
    guard = None if run_limits is None else RunGuard(run_limits, B * K, dev)
    for t in range(max(s.limit for s in sentences)):
        n = len(active)
        log_probs = _forbid(model.decode_step(tokens, memory, cache), special)  # (n*K, V)
        if guard is not None:
            guard.forbid(log_probs)
        room = torch.tensor([K - len(sentences[b].finished) for b in active], device=dev)  # (n,)
        last = torch.tensor([t == sentences[b].limit - 1 for b in active], device=dev)  # (n,)
        step = beam_step(scores, log_probs, cfg.eos_id, room, last)
        alt_ids, alt_lp = alternatives(log_probs)  # (n*K, A)
        parent = (torch.arange(n, device=dev)[:, None] * K + step.beams).view(-1)  # (n*2K,) the row each extends

        def history(cands: Tensor) -> StepLog:
            """The steps of candidates `cands` (indices into the n*2K): their parent's, then this one."""
            rows = parent.index_select(0, cands)
            out = log.select(rows)
            out.append(step.tokens.view(-1)[cands], step.token_log_probs.view(-1)[cands], alt_ids[rows], alt_lp[rows],
                       None if guard is None else guard.removed_at(rows))
            return out

        for i, j in step.ended.nonzero().tolist():
            score = float(step.scores[i, j]) / (t + 1) ** length_penalty
            hyp = history(torch.tensor([i * 2 * K + j], device=dev)).hypothesis(0, t + 1, cfg.eos_id, score)
            sentences[active[i]].finished.append(hyp)
        if observer is not None:
            observer.step(t, active, step)
        keep = (~step.done).nonzero().view(-1)  # (n',) the sentences still decoding
        if keep.numel() == 0:
            break
        scores = step.next_scores[keep]  # (n', K)
        cands = (keep[:, None] * 2 * K + step.next_beams[keep]).view(-1)  # (n'*K,) the surviving candidates
        new_parent = parent.index_select(0, cands)  # (n'*K,)
        log = history(cands)
        if keep.numel() < n:  # rows leave the batch: the encoder side follows
            memory = memory.index_select(0, new_parent)
        cache.reorder(new_parent, cross=keep.numel() < n)
        tokens = step.tokens.view(-1)[cands][:, None]  # (n'*K, 1)
        if guard is not None:
            guard.advance(tokens[:, 0], new_parent)
        active = [active[i] for i in keep.tolist()]
    chosen = [s.best() for s in sentences]
    out = [s.finished[h] if h >= 0 else Hypothesis([]) for s, h in zip(sentences, chosen)]
    if observer is not None:
        observer.finish(out, chosen)
    return out
