"""A cache shared by every user of the page: each value computed once, failures never kept."""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future


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
