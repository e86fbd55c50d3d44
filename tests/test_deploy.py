"""The balancer's configuration (deploy/haproxy.cfg through deploy/serve.py), checked by HAProxy itself, and what
a visitor gets when no replica answers. Quick: HAProxy alone on loopback, no app."""
from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "deploy"))
sys.path.insert(0, str(ROOT / "tools"))
from classroom import free_port  # noqa: E402
from serve import haproxy_config, main  # noqa: E402

HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
needs_haproxy = pytest.mark.skipif(not Path(HAPROXY).exists(), reason="needs Debian's haproxy (.ci/run installs it)")


def test_the_configuration_names_every_replica_with_its_cookie():
    config = haproxy_config("0.0.0.0", 8080, [("r1", 8081), ("r2", 8082), ("r3", 8083)])
    assert "bind 0.0.0.0:8080" in config
    servers = [line.split() for line in config.splitlines() if line.strip().startswith("server ")]
    assert servers == [["server", f"r{i}", f"127.0.0.1:808{i}", "cookie", f"r{i}"] for i in (1, 2, 3)]
    assert "cookie TP_REPLICA insert" in config and "X-Replica %[srv_name]" in config
    errorfile = next(line.split()[2] for line in config.splitlines() if line.strip().startswith("errorfile 503"))
    assert Path(errorfile).is_file() and "{" not in config


@needs_haproxy
def test_haproxy_accepts_the_configuration(tmp_path):
    path = tmp_path / "haproxy.cfg"
    path.write_text(haproxy_config("127.0.0.1", free_port(), [("r1", free_port()), ("r2", free_port())]))
    check = subprocess.run([HAPROXY, "-c", "-f", str(path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


@needs_haproxy
def test_no_replica_up_gives_a_page_that_says_so(tmp_path):
    port = free_port()
    path = tmp_path / "haproxy.cfg"
    path.write_text(haproxy_config("127.0.0.1", port, [("r1", free_port())]))  # nobody listens there
    balancer = subprocess.Popen([HAPROXY, "-f", str(path), "-db"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):  # bounded: at most about 10 s
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
                break
            except httpx.ConnectError:
                time.sleep(0.2)
        assert answer.status_code == 503 and "is restarting" in answer.text and "Reload this page" in answer.text
    finally:
        balancer.terminate()
        balancer.wait(timeout=10)


def test_serve_refuses_a_count_of_replicas_it_cannot_run(capsys):
    with pytest.raises(SystemExit):
        main(["--replicas", "0"])
    assert "--replicas: from 1 to 16" in capsys.readouterr().err
