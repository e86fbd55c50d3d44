"""SharedCache (computed once for every user, failures never kept, expiry, LRU) and the lazy passes of a Result."""
from __future__ import annotations

import threading
import time

import pytest
import torch

from playground import context
from playground.context import SharedCache
from transformer.decoding import DecodeOptions
from transformer.errors import InputError
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


def test_translations_asked_for_at_the_same_moment_are_made_together_as_one_at_a_time(translator):
    texts = ["the dog runs", "a cat sleeps on the warm red sofa", "two men", "the girl reads a book in the park",
             "a boy", "the old man walks his small dog slowly", "three birds sing", "she runs"]
    together, start, got = context.GreedyBatcher(size=8, wait_s=0.5), threading.Barrier(len(texts)), {}

    def ask(text: str) -> None:
        start.wait()
        got[text] = together.result(translator, "xx-yy", text, DecodeOptions())

    threads = [threading.Thread(target=ask, args=(t,)) for t in texts]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert together.batches < len(texts)  # at least two of them in one batch
    for text in texts:
        alone, made = context.run(translator, "xx-yy", text), got[text]
        assert made.text == text and made.translation.target_ids == alone.translation.target_ids
        assert made.translation.unsure == alone.translation.unsure
        assert made.maps.source_tokens == alone.maps.source_tokens and made.maps.target_tokens == alone.maps.target_tokens
        for kind in ("encoder", "decoder", "cross"):  # cut to its own lengths: no padding rows or columns
            torch.testing.assert_close(getattr(made.maps, kind), getattr(alone.maps, kind), atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(made.inspection.target_input, alone.inspection.target_input)


def test_a_batch_that_fails_is_made_again_one_sentence_at_a_time(translator, monkeypatch):
    translate_batch = translator.translate_batch

    def refuses_the_bad_one(texts, options=None, **kwargs):
        if "bad" in texts:
            raise InputError("this sentence cannot be translated")
        return translate_batch(texts, options, **kwargs)

    monkeypatch.setattr(translator, "translate_batch", refuses_the_bad_one)
    together = context.GreedyBatcher(size=4, wait_s=0.5)
    start, got = threading.Barrier(3), {}

    def ask(text: str) -> None:
        start.wait()
        try:
            got[text] = together.result(translator, "xx-yy", text, DecodeOptions()).translation.target_ids
        except InputError as e:
            got[text] = str(e)

    threads = [threading.Thread(target=ask, args=(t,)) for t in ("the dog runs", "bad", "a cat sleeps")]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert got["bad"] == "this sentence cannot be translated"  # its own error, and only its own
    assert got["the dog runs"] == translator.translate("the dog runs").target_ids
    assert got["a cat sleeps"] == translator.translate("a cat sleeps").target_ids


def test_sampling_and_beam_search_are_not_batched(translator):
    together = context.GreedyBatcher(size=4, wait_s=0.0)
    for options in (DecodeOptions(strategy="sample", seed=3), DecodeOptions(strategy="beam", beam_size=2)):
        made = context.run(translator, "xx-yy", "the dog runs", options, batcher=together)
        assert made.translation.target_ids == translator.translate("the dog runs", options).target_ids
    assert together.batches == 0
