"""The server's state that every user shares: the loaded checkpoints, where downloads go, the caches (each value
computed once for everyone, failures never kept), and each session's newest translate request."""
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


class Newest:
    """Late answers, dropped or brought up to date: each session's newest translate request and the result it
    landed with, so that an answer the user no longer waits for sends nothing, and a tab drawn from an older
    translation draws the newest. It covers races between listeners (a translation and a tab's drawing) that
    gradio's trigger_mode, which orders the events of one listener, does not."""

    def __init__(self, sessions: int = 10_000):
        self.sessions = sessions  # kept at most: the oldest are sessions long gone
        # session -> (its newest translate request, a weak reference to the result it landed with): the result
        # lives in the shared cache and the user's state, never kept alive here
        self.requests: OrderedDict = OrderedDict()

    def asked(self, request) -> int | None:
        """A new translate request of this user's session: its number (None outside a browser session)."""
        session = getattr(request, "session_hash", None)
        if session is None:
            return None
        ticket = next(TICKETS)
        self.requests[session] = (ticket, None)
        self.requests.move_to_end(session)
        while len(self.requests) > self.sessions:
            self.requests.popitem(last=False)
        return ticket

    def landed(self, request, ticket: int | None, result) -> None:
        """Request `ticket` is answered with `result` (a results.Result): views drawn from another are now late."""
        if ticket is not None:
            self.requests[request.session_hash] = (ticket, weakref.ref(result))

    def stale(self, request, ticket: int) -> bool:
        """True for a translation after which the same user asked for a newer one."""
        session = getattr(request, "session_hash", None)
        return session in self.requests and ticket is not None and ticket != self.requests[session][0]

    def result(self, request, shown):
        """The translation a view should draw for this user: the session's newest that landed, when `shown` (the
        one the event brought) is older and the newest is still kept; else `shown`. None: too late to draw."""
        session = getattr(request, "session_hash", None)
        landed = self.requests[session][1] if session in self.requests else None
        if shown is None or landed is None:
            return shown
        newest = landed()
        return shown if newest is not None and newest.key == shown.key else newest
