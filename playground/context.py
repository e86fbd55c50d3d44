"""The server's state: what every user shares (the loaded checkpoints, where downloads go, the caches: each value
computed once for everyone, failures never kept) and each browser session's page (`Session`)."""
from __future__ import annotations

import itertools
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from transformer import Translator
from transformer.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
PAIR_NAMES = {"en-de": "English → German", "en-fr": "English → French"}
TICKETS = itertools.count(1)  # every translate request's number, for every session


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

    translations: SharedCache  # results.Result (a translation and its hooked passes), by pair, text and settings
    views: SharedCache  # each view's drawn updates (figures serialized once) and the Lesson's steps
    analyses: SharedCache  # what a view computes before drawing (a lens, a comparison, an explanation)
    models: SharedCache  # models made from a loaded one (its int8 copy), by pair

    @classmethod
    def sized(cls, translations: int) -> "Caches":
        """Caches for `translations` translations at once: the views and analyses drawn from them, kept 30 minutes."""
        return cls(SharedCache(translations), SharedCache(8 * translations, ttl_s=1800),
                   SharedCache(5 * translations, ttl_s=1800), SharedCache(4))


@dataclass
class Context:
    """The server's state shared by every user: every checkpoint, loaded once, where downloads go, and the page's
    caches."""

    translators: dict[str, Translator]
    downloads: Path  # every download of the page (playground.downloads: one writer, pruned hourly)
    bertviz_scripts: str | list[str] = "inline"  # bertviz_document's scripts: "inline", "cdn" or their URLs
    caches: Caches = field(default_factory=lambda: Caches.sized(32))

    @property
    def pairs(self) -> list[str]:
        known = [p for p in PAIR_NAMES if p in self.translators]
        return known + [p for p in self.translators if p not in PAIR_NAMES]

    def label(self, pair: str) -> str:
        """What the page calls a loaded checkpoint: "English → German", or "English → German (OPUS-MT)" for a model
        imported into the folder en-de-opus-mt (any other folder name is shown as it is)."""
        imported = self.translators[pair].metrics.imported is not None
        name = pair.removesuffix("-opus-mt") if imported else pair
        return PAIR_NAMES.get(name, name) + (" (OPUS-MT)" if imported else "")

    def translator(self, pair: str) -> Translator:
        if pair not in self.translators:
            raise InputError(f"unknown language pair {pair!r}; available: {', '.join(self.pairs) or 'none'}")
        return self.translators[pair]


@dataclass
class Session:
    """One browser session's page, kept on the server: which view is open (and in each group), the newest translate
    request and the translation it landed with, what each view shows, and the part a link asked for. Set by the
    handlers that change it, read by those that need it; nothing of it travels with the page's events."""

    open: str  # the open tab's view key
    group_open: dict = field(default_factory=dict)  # group key -> the view open inside it
    ticket: int | None = None  # the newest translate request
    landed: weakref.ref | None = None  # the translation it landed with: the result lives in the shared cache and the
    # user's gr.State, never kept alive here
    shown: dict = field(default_factory=dict)  # view key -> {"pair": ..., "fill": result key}: what it shows now
    focus: tuple[str, dict] | None = None  # a link's (view key, part), drawn with its view

    def ask(self) -> int:
        """A new translate request: its number."""
        self.ticket = next(TICKETS)
        return self.ticket

    def stale(self, ticket: int) -> bool:
        """True for a translate request after which the user asked for a newer one."""
        return ticket != self.ticket

    def land(self, ticket: int, result) -> None:
        """Request `ticket` is answered with `result` (a results.Result): views drawn from another are now late."""
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
            return Session(self.first)
        with self.lock:
            session = self.sessions.get(key)
            if session is None:
                session = self.sessions[key] = Session(self.first)
                while len(self.sessions) > self.size:
                    self.sessions.popitem(last=False)
            self.sessions.move_to_end(key)
            return session
