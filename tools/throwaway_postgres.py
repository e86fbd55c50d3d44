"""A throwaway PostgreSQL server on loopback, from Debian's `postgresql` package: for the class store's tests and
for `tools/classroom.py --database postgresql`. Its data lives in a temporary folder, gone when it stops.

    with throwaway_postgres.running() as url:   # postgresql+psycopg://postgres@127.0.0.1:PORT/postgres
        ...
"""
from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def binaries() -> Path | None:
    """The folder of Debian's initdb and pg_ctl (not on PATH there), or None when PostgreSQL is not installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).resolve().parent if on_path else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Url(str):
    """The server's SQLAlchemy URL, which can also restart it (a test of what a restart mid-lesson does)."""

    def __new__(cls, url: str, *server):
        made = super().__new__(cls, url)
        made.server = server
        return made

    def restart(self, down_s: float) -> None:
        """Stops the server at once (every connection dropped), waits `down_s`, starts it again."""
        as_user, bin_dir, data, options, log = self.server
        subprocess.run(as_user + [str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(down_s)
        subprocess.run(as_user + [str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-l", str(log),
                                  "start"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@contextlib.contextmanager
def running():
    """Starts a new cluster (trust authentication, loopback only, a free port) and yields its SQLAlchemy URL. The
    server refuses to run as root: as root it runs as Debian's `postgres` user."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    folder = Path(tempfile.mkdtemp(prefix="playground-postgres-"))
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_user:
        shutil.chown(folder, "postgres")
    data, port = folder / "data", free_port()
    run = dict(check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        subprocess.run(as_user + [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                                  "-E", "UTF8", "--no-sync"], **run)
        options = f"-h 127.0.0.1 -p {port} -k {folder} -c fsync=off -c max_connections=200"
        subprocess.run(as_user + [str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-l",
                                  str(folder / "log"), "start"], **run)
        try:
            yield Url(f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres", as_user, bin_dir, data, options,
                      folder / "log")
        finally:
            subprocess.run(as_user + [str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":  # a server to try things against, until Enter
    with running() as url:
        input(f"{url}\nEnter stops it. ")
