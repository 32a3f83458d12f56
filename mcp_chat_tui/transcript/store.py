"""Where transcripts live and how they are written: atomically, from a thread that never blocks the screen."""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from mcp_chat_tui.core.paths import user_data_dir
from mcp_chat_tui.transcript.markers import ASSISTANT, USER, unescape_line


def conversations_dir() -> Path:
    return user_data_dir() / "conversations"


def new_transcript_path(first_prompt: str, folder: Path | None = None, when: datetime | None = None) -> Path:
    """A fresh file name: the date and time, then a few words of the first prompt."""
    folder = folder or conversations_dir()
    slug = "-".join(re.findall(r"[a-z0-9]+", first_prompt.lower())[:6])[:48] or "chat"
    stamp = (when or datetime.now()).strftime("%Y-%m-%d-%H%M%S")
    path = folder / f"{stamp}-{slug}.md"
    counter = 2
    while path.exists():
        path = folder / f"{stamp}-{slug}-{counter}.md"
        counter += 1
    return path


def write_atomically(path: Path, text: str) -> None:
    """Write to a temporary file beside ``path``, flush it to disk, then rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def read_transcript_text(path: Path) -> str:
    with open(path, encoding="utf-8", newline="") as file:
        return file.read()


class AutoSaver:
    """Saves the newest text given to it on a background thread; older pending texts are skipped.

    ``save(text)`` returns at once, so the screen never waits for the disk;
    ``flush()`` waits until everything given so far is on disk.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.error: Exception | None = None
        self._pending: str | None = None
        self._written = 0
        self._given = 0
        self._closed = False
        self._lock = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="transcript-saver", daemon=True)
        self._thread.start()

    def save(self, text: str) -> None:
        with self._lock:
            self._pending = text
            self._given += 1
            self._lock.notify_all()

    def flush(self, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._written < self._given and time.monotonic() < deadline:
                self._lock.wait(0.05)
            return self._written >= self._given

    def close(self) -> None:
        self.flush()
        with self._lock:
            self._closed = True
            self._lock.notify_all()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._closed and self._pending is None:
                    self._lock.wait()
                if self._pending is None:
                    return
                text, given = self._pending, self._given
                self._pending = None
            try:
                write_atomically(self.path, text)
                self.error = None
            except OSError as exc:
                self.error = exc
            with self._lock:
                self._written = max(self._written, given)
                self._lock.notify_all()


@dataclass(frozen=True)
class SavedConversation:
    path: Path
    first_question: str
    modified: datetime
    model: str


def describe(path: Path) -> SavedConversation:
    """The first question and the model of a saved conversation, read from the start of the file."""
    first_question, model = "", ""
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            for _, line in zip(range(400), file):
                line = line.rstrip("\n")
                if not first_question and line.startswith(USER):
                    first_question = unescape_line(line[len(USER):].strip())
                elif not model and line.startswith(ASSISTANT):
                    model = line[len(ASSISTANT):].strip().strip("[]")
                if first_question and model:
                    break
        modified = datetime.fromtimestamp(path.stat().st_mtime)
    except OSError:
        modified = datetime.fromtimestamp(0)
    return SavedConversation(path, first_question, modified, model)


def recent_conversations(folder: Path | None = None, limit: int = 50) -> list[SavedConversation]:
    folder = folder or conversations_dir()
    if not folder.is_dir():
        return []
    files = sorted(folder.glob("*.md"), key=lambda p: p.stat().st_mtime, reverse=True)[:limit]
    return [describe(path) for path in files]
