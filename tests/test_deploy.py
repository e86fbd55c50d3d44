"""The balancer's configuration (deploy/haproxy.cfg through deploy/serve.py), checked by HAProxy itself, and what
a visitor gets when no replica answers. Quick: HAProxy alone on loopback, no app."""
from __future__ import annotations

import json
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
from serve import haproxy_config, main, wait_until_up  # noqa: E402

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
            except httpx.TransportError:  # not listening yet (or a connection that met itself: serve.wait_until_up)
                time.sleep(0.2)
        assert answer.status_code == 503 and "is restarting" in answer.text and "Reload this page" in answer.text
    finally:
        balancer.terminate()
        balancer.wait(timeout=10)


def test_serve_refuses_a_count_of_replicas_it_cannot_run(capsys):
    with pytest.raises(SystemExit):
        main(["--replicas", "0"])
    assert "--replicas: from 1 to 16" in capsys.readouterr().err


# -----------------------------------------------------------------------------
# Beyond one machine: the image and the Kubernetes manifest, checked as far as this machine can (no registry,
# no cluster): the manifest against Kubernetes' schemas, the Dockerfile by hadolint, the image's files by running
# the app's loading from a copy of exactly what the Dockerfile copies


def documents() -> list[dict]:
    yaml = pytest.importorskip("yaml")
    return list(yaml.safe_load_all((ROOT / "deploy" / "kubernetes.yaml").read_text()))


def dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) of deploy/Dockerfile, continuation lines joined."""
    text = (ROOT / "deploy" / "Dockerfile").read_text().replace("\\\n", " ")
    return [tuple(line.split(None, 1)) for line in text.splitlines() if line.strip() and not line.startswith("#")]


def test_the_kubernetes_manifest_is_valid_and_pins_sessions_by_cookie():
    kv = pytest.importorskip("kubernetes_validate")
    docs = {d["kind"]: d for d in documents()}
    for doc in docs.values():
        kv.validate(doc, "1.30.0", strict=True)  # raises on a field the schema does not know
    deployment, service, ingress = docs["Deployment"], docs["Service"], docs["Ingress"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["replicas"] >= 2 and service["spec"]["selector"] == labels
    notes = ingress["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert notes["nginx.ingress.kubernetes.io/proxy-buffering"] == "off"
    port = deployment["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"]
    cmd = json.loads(dict(dockerfile())["CMD"])
    assert cmd[cmd.index("--port") + 1] == str(port) and dict(dockerfile())["EXPOSE"] == str(port)


@pytest.mark.skipif(shutil.which("hadolint") is None, reason="needs hadolint (requirements-dev.txt)")
def test_hadolint_finds_nothing_in_the_dockerfile():
    lint = subprocess.run(["hadolint", str(ROOT / "deploy" / "Dockerfile")], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr


@pytest.mark.slow
def test_the_image_s_files_are_enough_to_load_the_app_with_its_command(tmp_path):
    copies = [args.split() for op, args in dockerfile() if op == "COPY"]
    for *sources, _ in copies:
        for source in sources:
            src = ROOT / source.rstrip("/")
            assert src.exists(), source
            (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / source.rstrip("/"))
    flags = json.loads(dict(dockerfile())["CMD"])[2:]  # after "python app.py"
    check = ("import sys, app; a = app.parse_args(sys.argv[1:]); t, p = app.load_translators(a.checkpoints, 'cpu'); "
             "assert not p and sorted(t) == ['en-de', 'en-fr'], (p, sorted(t)); app.build_demo(t, p); print('ok')")
    run = subprocess.run([sys.executable, "-c", check, *flags], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stderr[-2000:]


def test_a_replica_port_already_taken_is_replaced_by_a_free_one():
    import socket

    from serve import port_for

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        other = port_for(busy)
        assert other != busy and port_for(other) == other  # the free one is kept as asked


@pytest.mark.slow
def test_a_replica_whose_port_was_taken_after_it_was_chosen_is_started_again_on_another():
    """A replica exits when its port is taken between the moment it was chosen and the moment it listens (CI met
    it once): serve.replica_up starts it again on a port the system picks, and waits for that one."""
    import socket

    from serve import replica_up

    replica = ("import http.server, sys\n"  # a replica that serves /config, or exits as app.py does on a busy port
               "class Page(http.server.BaseHTTPRequestHandler):\n"
               "    def do_GET(self): self.send_response(200); self.end_headers(); self.wfile.write(b'{}')\n"
               "    def log_message(self, *args): pass\n"
               "http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), Page).serve_forever()\n")
    launched = []

    def launch(name: str, port: int) -> subprocess.Popen:
        launched.append(port)
        return subprocess.Popen([sys.executable, "-c", replica, str(port)], stderr=subprocess.DEVNULL)

    with socket.create_server(("127.0.0.1", 0)) as taken:  # someone took the chosen port meanwhile
        busy = taken.getsockname()[1]
        process, port = replica_up("r1", busy, launch("r1", busy), launch)
    try:
        assert port != busy and launched == [busy, port] and process.poll() is None
    finally:
        process.kill()


def test_waiting_for_a_replica_goes_on_past_an_answer_that_is_not_http():
    """A connection to a port nobody listens on yet may meet itself (the system gave it that port as its own) and
    read its own request back: wait_until_up keeps waiting, and returns once the page's config answers."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def answer():
        for reply in (b"GET /config HTTP/1.1\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"):
            connection, _ = listener.accept()
            with connection:
                connection.recv(4096)
                connection.sendall(reply)

    threading.Thread(target=answer, daemon=True).start()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        wait_until_up(port, alive, timeout=20)  # raised http.client.BadStatusLine before
    finally:
        alive.kill()
        listener.close()


@pytest.mark.slow
def test_the_app_says_at_start_what_a_teacher_needs_and_nothing_of_gradios(tmp_path):
    """`python app.py --host 0.0.0.0`: the address to open here, the one the class opens and how to get a public
    link; not gradio's "Running on local URL: http://0.0.0.0:…" (no browser opens it) nor its advice to edit
    launch()."""
    port = free_port()
    app = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--host", "0.0.0.0", "--port", str(port),
                            "--database-url", f"sqlite:///{tmp_path / 'c.sqlite3'}"], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        said = []
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and not any(line.startswith("For phones on another") for line in said):
            line = app.stdout.readline()
            if not line:
                break
            said.append(line.rstrip())
        assert f"Open it on this machine: http://127.0.0.1:{port}/" in said, said
        assert any(line.startswith(("The class's phones on this network open:", "No network address")) for line in
                   said), said
        assert httpx.get(f"http://127.0.0.1:{port}/config", timeout=10).status_code == 200
        text = "\n".join(said)
        assert "Running on" not in text and "share=True" not in text and "0.0.0.0" not in text, text
    finally:
        app.terminate()
        app.wait(timeout=30)
