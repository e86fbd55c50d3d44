"""SharedCache (computed once for every user, failures never kept, expiry, LRU) and the lazy passes of a Result."""
from __future__ import annotations

import threading
import time

import pytest

from playground import context
from playground.context import SharedCache
from transformer.interpret import analyses


def test_two_threads_asking_for_one_key_compute_it_once():
    cache, calls, started, release = SharedCache(4), [], threading.Event(), threading.Event()

    def make():
        calls.append(1)
        started.set()
        release.wait(5)  # the second thread asks while this one is still computing
        return "value"

    got = []
    first = threading.Thread(target=lambda: got.append(cache.get("k", make)))
    first.start()
    started.wait(5)
    second = threading.Thread(target=lambda: got.append(cache.get("k", make)))
    second.start()
    time.sleep(0.2)  # the second request is now waiting on the first's computation
    release.set()
    first.join(5), second.join(5)
    assert got == ["value", "value"] and len(calls) == 1
    assert (cache.misses, cache.hits) == (1, 0)  # the second waited for the first, it did not find a finished entry


def test_a_failure_reaches_every_waiter_and_is_not_kept():
    cache, started, release, errors, calls = SharedCache(4), threading.Event(), threading.Event(), [], []

    def broken():
        calls.append(1)
        started.set()
        release.wait(5)
        raise RuntimeError("no")

    def ask():
        try:
            cache.get("k", broken)
        except RuntimeError as e:
            errors.append(str(e))

    threads = [threading.Thread(target=ask)]
    threads[0].start()
    started.wait(5)
    threads.append(threading.Thread(target=ask))
    threads[1].start()
    time.sleep(0.2)  # the second request is now waiting on the failing computation
    release.set()
    for t in threads:
        t.join(5)
    assert errors == ["no", "no"] and len(calls) == 1  # one computation, its error passed to both
    assert "k" not in cache.entries and not cache.pending
    assert cache.get("k", lambda: "fixed") == "fixed"  # the next request computes it again


def test_entries_expire_after_their_time(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(context.time, "monotonic", lambda: now[0])
    cache, made = SharedCache(4, ttl_s=10), []
    make = lambda: made.append(1) or len(made)
    assert cache.get("k", make) == 1
    now[0] += 9
    assert cache.get("k", make) == 1  # still fresh
    now[0] += 2
    assert cache.get("k", make) == 2 and len(made) == 2


def test_the_least_recently_used_entry_is_evicted():
    cache = SharedCache(2)
    cache.get("a", lambda: 1)
    cache.get("b", lambda: 2)
    cache.get("a", lambda: pytest.fail("a is cached"))  # a is now the most recently used
    cache.get("c", lambda: 3)
    assert list(cache.entries) == ["a", "c"]


def test_a_result_runs_the_passes_few_views_need_only_when_asked_and_once(translator, monkeypatch):
    calls = {"internals": 0, "batch": 0}
    inspect, inspect_batch = analyses.inspect, analyses.inspect_batch

    def counted_inspect(*args, internals=False, **kwargs):
        calls["internals"] += internals
        return inspect(*args, internals=internals, **kwargs)

    def counted_batch(*args, **kwargs):
        calls["batch"] += 1
        return inspect_batch(*args, **kwargs)

    monkeypatch.setattr(analyses, "inspect", counted_inspect)
    monkeypatch.setattr(analyses, "inspect_batch", counted_batch)
    result = context.run(translator, "en-de", "the dog runs")
    assert calls == {"internals": 0, "batch": 0}  # a translation alone runs neither
    assert set(result.internals) == {"encoder", "decoder", "cross"} and len(result.batch) == 2
    result.internals, result.batch
    assert calls == {"internals": 1, "batch": 1}
