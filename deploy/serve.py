"""Several replicas of the app behind HAProxy, on one port, with cookie affinity; stopped together.

    python deploy/serve.py --replicas 2 --port 8080 [--host 127.0.0.1] [--threads 1] [-- APP FLAGS...]

Starts N processes of `python app.py` on the ports after --port (8081, 8082, ...; a free one where another program
already listens, or takes the port before the replica listens), waits until each answers, then runs HAProxy
(Debian's `haproxy` package) in the foreground on --port with deploy/haproxy.cfg. Every response carries
`X-Replica: r1` (r2, ...), the replica that served it. Ctrl-C or SIGTERM stops the balancer and every replica. A
replica that exits leaves the rotation within 2 s; the others go on.
"""
from __future__ import annotations

import argparse
import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = Path(__file__).with_name("haproxy.cfg")


def haproxy_config(host: str, port: int, replicas: list[tuple[str, int]]) -> str:
    """deploy/haproxy.cfg with its address and one `server` line per (name, port) replica."""
    servers = "\n".join(f"    server {name} 127.0.0.1:{p} cookie {name}" for name, p in replicas)
    return (TEMPLATE.read_text(encoding="utf-8").replace("{bind}", f"{host}:{port}").replace("{servers}", servers)
            .replace("{deploy}", str(TEMPLATE.parent)))


def port_for(preferred: int) -> int:
    """`preferred` when nothing listens there, else a free port the system picks (a replica's port is internal)."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", preferred))
            return preferred
        except OSError:
            pass
    return free_port()


def free_port() -> int:
    """A port nothing uses now, picked by the system."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(port: int, process: subprocess.Popen, what: str = "the replica", timeout: float = 300.0) -> None:
    """Returns once the page's config answers on `port` (through the balancer too); exits if `process` ends first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{what} on port {port} exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/config", timeout=5):
                return
        except (OSError, http.client.HTTPException):  # not listening yet; or no HTTP answer: while nothing listens on
            # an ephemeral port, a connection to it may get that very port as its own and meet itself ("GET /config"
            # read back as the status line)
            time.sleep(0.2)
    raise SystemExit(f"{what} on port {port} did not answer within {timeout:.0f} s")


def replica_up(name: str, port: int, process: subprocess.Popen, launch,
               tries: int = 3) -> tuple[subprocess.Popen, int]:
    """(replica `name`'s process, its port) once it answers. A replica that exits before it answers, its port taken
    after it was chosen (a port is free when chosen, and any connection may get a free port as its own meanwhile), is
    started again by `launch(name, port)` on a port the system picks, `tries` times in all."""
    for _ in range(tries - 1):
        try:
            wait_until_up(port, process)
            return process, port
        except SystemExit as e:
            if process.poll() is None:  # it did not answer in time: no other port will help
                raise
            print(f"{e}; started again on another port", flush=True)
        port = free_port()
        process = launch(name, port)
    wait_until_up(port, process)
    return process, port


def stop(processes: list[subprocess.Popen]) -> None:
    for p in processes:
        if p.poll() is None:
            p.terminate()
    for p in processes:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()


def interrupted(signum, frame) -> None:
    raise KeyboardInterrupt  # SIGTERM stops everything as Ctrl-C does


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--port", type=int, default=8080, help="the balancer's port; replicas take the next ones")
    parser.add_argument("--host", default="127.0.0.1", help="the balancer's address (0.0.0.0: every interface)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per replica")
    parser.add_argument("app_flags", nargs="*", help="more flags for every app.py (after --)")
    args = parser.parse_args(argv)
    if not 1 <= args.replicas <= 16:
        parser.error("--replicas: from 1 to 16")
    haproxy = shutil.which("haproxy") or next((p for p in ("/usr/sbin/haproxy",) if Path(p).exists()), None)
    if haproxy is None:
        parser.error("HAProxy is not installed: `apt-get install haproxy` (Debian's package)")

    replicas = [(f"r{i + 1}", port_for(args.port + i + 1)) for i in range(args.replicas)]
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False"}
    processes: list[subprocess.Popen] = []
    signal.signal(signal.SIGTERM, interrupted)

    def launch(name: str, port: int) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--port", str(port), "--threads",
                                 str(args.threads), "--trusted-proxy", "127.0.0.1", *args.app_flags], cwd=ROOT,
                                env={**env, "PLAYGROUND_REPLICA": name})

    try:
        processes += [launch(name, port) for name, port in replicas]  # all at once: they load together
        for i, (name, port) in enumerate(replicas):
            processes[i], port = replica_up(name, port, processes[i], launch)
            replicas[i] = (name, port)
            print(f"replica {name} pid {processes[i].pid} port {port}", flush=True)
        config = Path(tempfile.mkdtemp(prefix="playground-haproxy-")) / "haproxy.cfg"
        config.write_text(haproxy_config(args.host, args.port, replicas), encoding="utf-8")
        balancer = subprocess.Popen([haproxy, "-f", str(config), "-db"])
        processes.insert(0, balancer)
        wait_until_up(args.port, balancer, "the balancer", timeout=30)  # "serving" means a visitor gets the page
        print(f"serving http://{args.host}:{args.port}/ with {args.replicas} replicas", flush=True)
        return balancer.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        stop(processes)


if __name__ == "__main__":
    sys.exit(main())
