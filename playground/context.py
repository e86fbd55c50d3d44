"""The server's state: what every user shares (the loaded checkpoints, where downloads go, the caches: each value
computed once for everyone, failures never kept), each browser session's page (`Session`), and the translations
with what the hooks saw (`Result`, `run`), made once and shared between users."""
from __future__ import annotations

import hashlib
import itertools
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from transformer.decoding import DecodeOptions
from transformer.errors import InputError
from transformer.interpret import analyses
from transformer.interpret.analyses import Inspection
from transformer.translator import Translation, Translator

from . import registry
from .i18n import N_, _l, language_of
from .uploads import Uploads

ROOT = Path(__file__).resolve().parents[1]
PAIR_NAMES = {"en-de": N_("English → German"), "en-fr": N_("English → French")}
TICKETS = itertools.count(1)  # every translate request's number, for every session
BUILDING = threading.Lock()  # Session.builds


class SharedCache:
    """A bounded map from keys to values that are the same for every user: each is computed once, even when many
    requests ask for it at the same moment (the others wait for the first); least recently used entries go first,
    and an entry older than `ttl_s` (when given) is computed again. Only successes are kept: when `make` raises,
    the requests waiting for it get the error and the next request computes it again."""

    def __init__(self, size: int, ttl_s: float | None = None):
        self.size, self.ttl_s = size, ttl_s
        self.entries: OrderedDict[Hashable, tuple[float, object]] = OrderedDict()  # key -> (made at, value)
        self.pending: dict[Hashable, Future] = {}
        self.lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: Hashable, make: Callable[[], object]):
        with self.lock:
            entry = self.entries.get(key)
            if entry is not None and (self.ttl_s is None or time.monotonic() - entry[0] < self.ttl_s):
                self.entries.move_to_end(key)
                self.hits += 1
                return entry[1]
            future, owner = self.pending.get(key), False
            if future is None:
                future, owner = self.pending.setdefault(key, Future()), True
                self.misses += 1
        if not owner:
            return future.result()  # another request is computing it: wait for that one
        try:
            value = make()
        except BaseException as e:
            with self.lock:
                self.pending.pop(key, None)
            future.set_exception(e)
            raise
        with self.lock:
            self.entries[key] = (time.monotonic(), value)
            self.entries.move_to_end(key)
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)
            self.pending.pop(key, None)
        future.set_result(value)
        return value


@dataclass
class Caches:
    """Everything the page keeps for later, in one place: each cache shared by every user, bounded, keeping
    successes only (SharedCache), and named for what it holds."""

    translations: SharedCache  # Result (a translation and its hooked passes), by pair, text and settings
    views: SharedCache  # each view's drawn updates (figures serialized once); what a view derives before drawing
    # lives with its translation (Result.derived)
    models: SharedCache  # models made from a loaded one (its int8 copy), by pair

    @classmethod
    def sized(cls, translations: int) -> "Caches":
        """Caches for `translations` translations at once: the views drawn from them, kept 30 minutes."""
        return cls(SharedCache(translations), SharedCache(8 * translations, ttl_s=1800), SharedCache(4))


@dataclass
class Context:
    """The server's state shared by every user: every checkpoint, loaded once, where downloads go, the page's
    caches, and each browser session's page."""

    translators: dict[str, Translator]
    downloads: Path  # every download of the page (playground.downloads: one writer, pruned hourly)
    bertviz_scripts: str | list[str] = "inline"  # bertviz_document's scripts: "inline", "cdn" or their URLs
    caches: Caches = field(default_factory=lambda: Caches.sized(32))
    batcher: GreedyBatcher = field(default_factory=lambda: GreedyBatcher())  # a class's greedy translations, batched
    public_url: str | None = None  # the address other machines open (links.shared_address), when known
    uploads: Uploads | None = None  # models teachers brought, each in its own session's menu only
    sessions: Sessions = field(default_factory=lambda: Sessions(registry.FIRST))  # each visitor's page (Session)

    @property
    def pairs(self) -> list[str]:
        known = [p for p in PAIR_NAMES if p in self.translators]
        return known + [p for p in self.translators if p not in PAIR_NAMES]

    def label(self, pair: str) -> str:
        """What the page calls a loaded checkpoint: "English → German", or "English → German (OPUS-MT)" for a model
        imported into the folder en-de-opus-mt (any other folder name is shown as it is), or an uploaded one's."""
        brought = self.uploads.label(pair) if self.uploads is not None else None
        if brought is not None:
            return brought
        imported = self.translators[pair].metrics.imported is not None
        name = pair.removesuffix("-opus-mt") if imported else pair
        return PAIR_NAMES.get(name, name) + (" (OPUS-MT)" if imported else "")

    def menu(self, extra: list[tuple[str, str]] = ()) -> list[tuple[str, str]]:
        """The language menu's (label, key) choices: every loaded checkpoint, then `extra` (a model brought)."""
        return [(_l(self.label(p)) if self.label(p) in PAIR_NAMES.values() else self.label(p), p)
                for p in self.pairs] + list(extra)

    def translator(self, pair: str) -> Translator:
        brought = self.uploads.translator(pair) if self.uploads is not None else None
        if brought is not None:
            return brought
        if pair not in self.translators:
            raise InputError(N_("unknown language pair {pair}; available: {pairs}"), pair=repr(pair),
                             pairs=", ".join(self.pairs) or "none")
        return self.translators[pair]


@dataclass
class Session:
    """One browser session's page, kept on the server: which view is open (and in each group), the newest translate
    request and the translation it landed with, what each view shows, and the part a link asked for. Set by the
    handlers that change it, read by those that need it; nothing of it travels with the page's events."""

    tab: str  # the view the visitor has open (its tab's key)
    group_tab: dict = field(default_factory=dict)  # group key -> the view the visitor has open inside it
    ticket: int | None = None  # the newest translate request
    landed: weakref.ref | None = None  # the translation it landed with: the result lives in the shared cache and the
    # user's gr.State, never kept alive here
    shown: dict = field(default_factory=dict)  # view key -> {"pair": ..., "fill": result key}: what it shows now
    focus: tuple[str, dict] | None = None  # a link's (view key, part), drawn with its view
    linked: str | None = None  # the view a link opened, until a group built for this visitor selects its tab
    panel_only: bool = False  # the panel and no views (a student's page in a class): no view drawn
    language: str = "en"  # what the server writes for it is in this language (playground.i18n.language_of)
    built: set = field(default_factory=set)  # the tabs built for this visitor (playground/page.py: build_tab)
    lesson_step: int = 1  # the Lesson's step shown (a link's lesson=N; its Back and Next), which the class is shown
    teaching: bool = False  # the page runs a class: its views are built with the teacher's parts

    def ask(self) -> int:
        """A new translate request: its number."""
        self.ticket = next(TICKETS)
        return self.ticket

    def builds(self, tab: str) -> bool:
        """True once only, for the first of the events that open tab `tab` at once (its select, its group's, the
        signal): that one builds its views for this visitor; a second build would take the first one's events
        away from the page."""
        with BUILDING:
            first = tab not in self.built
            self.built.add(tab)
        return first

    def stale(self, ticket: int) -> bool:
        """True for a translate request after which the user asked for a newer one."""
        return ticket != self.ticket

    def land(self, ticket: int, result) -> None:
        """Request `ticket` is answered with `result` (a context.Result): views drawn from another are now late."""
        if not self.stale(ticket):
            self.landed = weakref.ref(result)

    def newest(self, shown):
        """The translation a view should draw: the newest that landed, when `shown` (the one the event brought) is
        older and the newest is still kept; else `shown`. None: too late to draw."""
        newest = self.landed() if self.landed is not None else None
        if shown is None or self.landed is None:
            return shown
        return shown if newest is not None and newest.key == shown.key else newest


class Sessions:
    """Every browser session's `Session`, by Gradio's session hash; the least recently used go first (sessions long
    gone). Late answers are dropped or brought up to date through it: it covers races between listeners (a
    translation and a tab's drawing) that gradio's trigger_mode, which orders the events of one listener, does not."""

    def __init__(self, first: str, size: int = 10_000):
        self.first, self.size = first, size
        self.sessions: OrderedDict[str, Session] = OrderedDict()
        self.lock = threading.Lock()

    def of(self, request) -> Session:
        """The session of `request` (gr.Request); outside a browser session (a direct call), a new one each time."""
        key = getattr(request, "session_hash", None)
        if key is None:
            return Session(self.first, language=language_of(request))
        with self.lock:
            session = self.sessions.get(key)
            if session is None:
                session = self.sessions[key] = Session(self.first)
                while len(self.sessions) > self.size:
                    self.sessions.popitem(last=False)
            self.sessions.move_to_end(key)
            session.language = language_of(request)  # the browser's choice, as it is now
            return session


# -----------------------------------------------------------------------------
# One user's translation and everything its views read: what the hooks saw, made once and shared between users.
#
# Every map and every layer input comes from forward hooks (transformer.interpret.analyses.inspect); nothing is threaded
# through forward's return values.


# The three families panel runs the user's sentence in one batch with this one: the shorter of the two is padded
NEIGHBOUR = "Two dogs are running through a field of tall grass while a man watches."




@dataclass
class Result:
    """One user's current translation and what the hooks saw; lives in that user's gr.State.

    The passes only a few views read (Q/K/V internals, the padded batch) are made when first asked for, once,
    and kept here for every user who shares this result."""

    pair: str
    text: str
    translation: Translation
    inspection: Inspection
    options: DecodeOptions = DecodeOptions()
    translator: Translator | None = field(default=None, repr=False, compare=False)
    _lazy: dict = field(default_factory=dict, repr=False, compare=False)
    _making: dict = field(default_factory=dict, repr=False, compare=False)  # name -> the lock of its making
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def maps(self):
        return self.inspection.maps

    def derived(self, name: str, make):
        """What a view derives from this translation (a pass, a lens, a comparison, a Lesson step): made once, when
        first asked for, and kept with the translation for every user who shares it; a failure is not kept."""
        with self._lock:
            if name in self._lazy:
                return self._lazy[name]
            making = self._making.setdefault(name, threading.Lock())
        with making:  # two users opening One head at once run its pass once; another name is made meanwhile, and
            with self._lock:  # a make may ask for another (a Lesson step reads the Q/K/V pass)
                if name in self._lazy:
                    return self._lazy[name]
            value = make()
            with self._lock:
                self._lazy[name] = value
            return value

    @property
    def internals(self) -> dict:
        """Per kind and layer: Q, K, V, the mask, W^O's input and output (analyses.inspect(internals=True))."""
        return self.derived("internals", lambda: analyses.inspect(self.translator, self.text, self.translation,
                                                                internals=True).internals)

    @property
    def cache(self):
        """The decoder's KVCache read after every step of this translation (analyses.decoder_cache)."""
        return self.derived("cache", lambda: analyses.decoder_cache(self.translator, self.text, self.translation))

    @property
    def batch(self) -> list[dict]:
        """analyses.inspect_batch of [text, NEIGHBOUR]: the masks as a padded batch applies them."""
        return self.derived("batch", lambda: analyses.inspect_batch(
            self.translator, [self.text, NEIGHBOUR], [self.translation, self.translator.translate(NEIGHBOUR)]))

    @property
    def key(self) -> str:
        """The same for the same pair, text and decoding options: what caches of its views are keyed by."""
        return result_key(self.pair, self.text, self.options)


def result_key(pair: str, text: str, options: DecodeOptions) -> str:
    return hashlib.sha1(repr((pair, text, options)).encode("utf-8", "replace")).hexdigest()[:20]


def run(translator: Translator, pair: str, text: str, options: DecodeOptions = DecodeOptions(),
        cache: SharedCache | None = None, batcher: GreedyBatcher | None = None) -> Result:
    """Translate, then one hooked teacher-forced pass (maps and layer inputs); the Q/K/V internals and the padded
    batch wait until a view asks for them (Result.internals, Result.batch). Beam search keeps its tree.
    cache: results shared between users (every strategy is repeatable: sampling draws from its seed);
    batcher: greedy translations asked for at the same moment made as one batch (`GreedyBatcher`)."""
    if cache is not None:
        return cache.get(result_key(pair, text, options), lambda: run(translator, pair, text, options, None, batcher))
    if batcher is not None and options.strategy == "greedy":
        return batcher.result(translator, pair, text, options)
    translation = translator.translate(text, options, record_tree=options.strategy == "beam")
    inspection = analyses.inspect(translator, text, translation)
    return Result(pair, text, translation, inspection, options, translator)


class GreedyBatcher:
    """A class's translations, made together: greedy translations of one pair asked for at the same moment are
    translated as one batch and inspected in one padded hooked pass, the same results as one at a time. On a CPU the
    model's small operations of one sentence do not run two at once (two threads take as long as one after the
    other); a batch of sixteen costs about what three sentences cost alone. One batch runs at a time per process;
    the next one forms while it runs. A batch that fails is made again one sentence at a time, so one user's bad
    sentence never fails another's. Sampling (seeded per sentence) and beam search (its tree) go one at a time."""

    def __init__(self, size: int = 16, wait_s: float = 0.002):
        self.size, self.wait_s = size, wait_s  # wait_s: how long a first request waits for others to join it
        self.lock = threading.Lock()  # guards `forming`
        self.running = threading.Lock()  # one batch at a time
        self.forming: dict[tuple, list[tuple[str, Future]]] = {}  # (pair, options) -> the batch that waits to run
        self.batches = 0  # made so far (read by tests and the class's figures)

    def result(self, translator: Translator, pair: str, text: str, options: DecodeOptions) -> Result:
        key, mine = (pair, options), Future()
        with self.lock:
            batch = self.forming.get(key)
            leads = batch is None or len(batch) >= self.size
            if leads:
                batch = self.forming[key] = []
            batch.append((text, mine))
        if leads:  # this request makes the batch: others join it until it starts
            time.sleep(self.wait_s)
            with self.running:
                with self.lock:
                    if self.forming.get(key) is batch:
                        del self.forming[key]
                self.make(translator, pair, options, batch)
        return mine.result()

    def make(self, translator: Translator, pair: str, options: DecodeOptions, batch: list[tuple[str, Future]]) -> None:
        texts = [text for text, _ in batch]
        try:
            translations = translator.translate_batch(texts, options)
            inspections = analyses.inspect_many(translator, texts, translations)
        except Exception as e:
            if len(batch) == 1:
                batch[0][1].set_exception(e)
            else:  # each sentence alone: its own result, or its own error
                for one in batch:
                    self.make(translator, pair, options, [one])
            return
        self.batches += 1
        for (text, done), translation, inspection in zip(batch, translations, inspections):
            done.set_result(Result(pair, text, translation, inspection, options, translator))
