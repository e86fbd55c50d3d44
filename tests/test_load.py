"""Many users at once on one model: no errors, and nobody's hooks leak into anybody else's results.

pytest runs a short form. The full run is a script against a server you start:
    python app.py --port 7860 &   python tests/test_load.py --url http://127.0.0.1:7860/ --users 16 --seconds 60
Traffic goes to the loopback address only; the run stops by itself.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import threading
import time
from urllib.parse import urlparse

import pytest

SENTENCES = [
    "A man in a blue shirt is riding a bike down the street.",
    "Two young girls are playing with a dog in the park.",
    "A woman is cooking food in a kitchen.",
    "A black dog is running through the snow.",
]


def requests_for(pair: str, n_heads: int) -> list[tuple[str, tuple, dict]]:
    """The mix each user draws from: (api_name, args, kwargs)."""
    mix = []
    for s in SENTENCES:
        mix.append(("/translate", (s, pair, "greedy"), {}))
        mix.append(("/translate", (s, pair, "beam"), {"beam_size": 3}))
        mix.append(("/attention", (s, pair), {}))
        off = ",".join(f"cross:0:{h}" for h in range(n_heads)) + ",encoder:0:0"
        mix.append(("/translate", (s, pair, "greedy"), {"ablate": off}))  # an ablation in progress
        mix.append(("/attention", (s, pair), {"ablate": off}))
    return mix


def key(api: str, args: tuple, kwargs: dict) -> str:
    return json.dumps([api, args, sorted(kwargs.items())])


def run_load(url: str, pair: str, n_heads: int, users: int = 16, seconds: float = 60.0, seed: int = 0) -> dict:
    """Serial answers first, then `users` threads for `seconds`; every answer must equal the serial one."""
    from gradio_client import Client

    assert urlparse(url).hostname in ("127.0.0.1", "localhost"), "load tests only target this machine"
    mix = requests_for(pair, n_heads)
    serial_client = Client(url, verbose=False)
    expected = {key(*r): serial_client.predict(*r[1], api_name=r[0], **r[2]) for r in mix}
    latencies: list[float] = []
    errors: list[str] = []
    mismatches: list[str] = []
    counts = {"requests": 0}
    lock = threading.Lock()
    stop_at = time.time() + seconds

    def user(i: int) -> None:
        rng = random.Random(seed + i)
        client = Client(url, verbose=False)
        while time.time() < stop_at:
            api, args, kwargs = rng.choice(mix)
            t0 = time.perf_counter()
            try:
                got = client.predict(*args, api_name=api, **kwargs)
            except Exception as e:  # counted and reported, never swallowed
                with lock:
                    errors.append(f"{api}: {type(e).__name__}: {e}")
                continue
            dt = time.perf_counter() - t0
            with lock:
                counts["requests"] += 1
                latencies.append(dt)
                if got != expected[key(api, args, kwargs)]:
                    mismatches.append(f"{api} {args} {kwargs}")

    threads = [threading.Thread(target=user, args=(i,)) for i in range(users)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 120)
    return {
        "users": users, "seconds": seconds, "requests": counts["requests"], "errors": len(errors),
        "mismatches": len(mismatches), "p50_s": statistics.median(latencies) if latencies else None,
        "p95_s": sorted(latencies)[int(0.95 * (len(latencies) - 1))] if latencies else None,
        "first_errors": errors[:5], "first_mismatches": mismatches[:5],
    }


@pytest.mark.slow
def test_sixteen_users_for_a_few_seconds(server, translators):
    pair = sorted(translators)[0]
    report = run_load(server, pair, translators[pair].cfg.n_heads, users=16, seconds=8)
    assert report["errors"] == 0, report["first_errors"]
    assert report["mismatches"] == 0, report["first_mismatches"]  # maps and ablations stayed with their user
    assert report["requests"] >= 16


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="http://127.0.0.1:7860/")
    parser.add_argument("--pair", default="en-de")
    parser.add_argument("--heads", type=int, default=4, help="heads per layer of that checkpoint")
    parser.add_argument("--users", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args()
    print(json.dumps(run_load(args.url, args.pair, args.heads, args.users, args.seconds), indent=2))
