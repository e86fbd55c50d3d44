"""Models a teacher brings to the page (a zip: a checkpoint from a recipe, or an OPUS-MT folder), checked and opened by
transformer.archive. Each belongs to the browser session that uploaded it: it is in that session's model menu only
(its key, random, is the only way to name it), one per session (a new one replaces it), at most MOST in the server at
once (they take memory), and it is removed with its files when that session's page closes."""
from __future__ import annotations

import secrets
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from transformer import Translator
from transformer.archive import ArchiveError, open_model

MOST = 4  # uploaded models held at once (an OPUS-MT model takes about 300 MB)
PREFIX = "upload-"  # an uploaded model's key: PREFIX and a random token


@dataclass
class Upload:
    key: str
    owner: str  # the session that uploaded it
    name: str  # what the menu calls it: the archive's name
    translator: Translator
    work: Path  # where it was unpacked (removed with it)
    at: float

    @property
    def label(self) -> str:
        return f"Your model: {self.name}"


class Uploads:
    def __init__(self, root: Path):
        self.root = root
        self.held: dict[str, Upload] = {}
        self.lock = threading.Lock()

    def add(self, owner: str, archive: str | Path, name: str) -> Upload:
        """Open `archive` for session `owner` (replacing the one it had); ArchiveError with a sentence when it is
        refused, or when the server holds MOST models of other sessions."""
        with self.lock:
            others = [u for u in self.held.values() if u.owner != owner]
        if len(others) >= MOST:
            raise ArchiveError(f"this server already holds {MOST} models that teachers uploaded: try again when one "
                               "of their pages has closed")
        work = self.root / secrets.token_hex(8)
        try:
            translator = open_model(archive, work)
        except Exception:
            shutil.rmtree(work, ignore_errors=True)
            raise
        upload = Upload(PREFIX + secrets.token_hex(8), owner, Path(name).stem[:40] or "model", translator, work,
                        time.time())
        self.drop(owner)
        with self.lock:
            self.held[upload.key] = upload
        return upload

    def translator(self, key: str) -> Translator | None:
        upload = self.held.get(key)
        return upload.translator if upload is not None else None

    def holds(self, translator: Translator) -> bool:
        return any(u.translator is translator for u in list(self.held.values()))

    def label(self, key: str) -> str | None:
        upload = self.held.get(key)
        return upload.label if upload is not None else None

    def of(self, owner: str) -> list[Upload]:
        with self.lock:
            return [u for u in self.held.values() if u.owner == owner]

    def drop(self, owner: str) -> None:
        """Remove session `owner`'s model and its files (its page closed, or it brought another)."""
        with self.lock:
            gone = [self.held.pop(u.key) for u in list(self.held.values()) if u.owner == owner]
        for upload in gone:
            shutil.rmtree(upload.work, ignore_errors=True)
