"""Files written atomically: to a temporary name, then renamed into place, so a crash never leaves half a file."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def atomic_write(path: str | Path, write) -> None:
    """Call write(tmp_path), then rename tmp_path onto path (atomic on POSIX filesystems)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)  # mkstemp makes files 0600; checkpoints are meant to be shared
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_json(path: str | Path, obj) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_text(json.dumps(obj, indent=2) + "\n"))
