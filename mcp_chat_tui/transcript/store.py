"""Where transcripts live and how they are written: atomically, from a thread that never blocks the screen."""

from __future__ import annotations

import errno
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from mcp_chat_tui.core.files import (
    TEMPORARY_SUFFIX,
    RefusedFile,
    existing_mode,
    open_regular,
    read_regular,
    regular_file,
    replace_file,
)
from mcp_chat_tui.core.paths import PROMPT_CACHE_SUFFIX, is_partial_cache, remove_partial, user_data_dir
from mcp_chat_tui.transcript.format import TranscriptError, reply_model
from mcp_chat_tui.transcript.lock import TranscriptLock
from mcp_chat_tui.transcript.markers import ASSISTANT, USER, decode_unholdable, unescape_line


def conversations_dir() -> Path:
    return user_data_dir() / "conversations"


def new_transcript_path(first_prompt: str, folder: Path | None = None, when: datetime | None = None) -> Path:
    """A fresh file name: the date and time, then a few words of the first prompt."""
    folder = folder or conversations_dir()
    slug = "-".join(re.findall(r"[a-z0-9]+", first_prompt.lower())[:6])[:48] or "chat"
    stamp = (when or datetime.now()).strftime("%Y-%m-%d-%H%M%S")
    path = folder / f"{stamp}-{slug}.md"
    counter = 2
    while os.path.lexists(path):  # a dangling link is taken too: the name is never written through
        path = folder / f"{stamp}-{slug}-{counter}.md"
        counter += 1
    return path


RETRY_INTERVAL = 2.0  # seconds between attempts while saving fails
MAX_TRANSCRIPT_BYTES = 1 << 30  # a conversation file larger than this is not read (memory, not the format)


def write_atomically(path: Path, text: str, *, create_folder: bool = True) -> None:
    """Write to a new temporary file beside ``path``, flush it to disk, then rename it over ``path``
    (``core.files.replace_file``).

    A file that exists keeps its permission bits; a read-only one is never replaced
    (``PermissionError``), nor a link or anything but a regular file (``RefusedFile``).
    ``create_folder`` False: a missing folder is an error, not made again.
    """
    mode = existing_mode(path)
    if mode is not None and (not mode & 0o222 or not os.access(path, os.W_OK)):
        raise PermissionError(errno.EACCES, "the file is read-only", str(path))
    if create_folder:
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not path.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, "its folder no longer exists", str(path.parent))
    replace_file(path, text.encode("utf-8"), mode)


def write_export(path: Path, text: str, *, replace: bool) -> None:
    """Write a copy of a conversation at ``path`` (its folder made first).

    A file that exists is replaced only when ``replace`` (else ``FileExistsError``), and never one
    another running mcp-chat-tui holds (``TranscriptInUse``): its next save would undo the copy.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = TranscriptLock.acquire(path)
    try:
        if not replace and os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, "a file is already there; export again to replace it", str(path))
        write_atomically(path, text)
    finally:
        lock.release()


def read_transcript_text(path: Path) -> str:
    """The text of a transcript; a file that is not text (not UTF-8, NUL bytes, a folder) is a
    ``TranscriptError`` naming the line, like any other bad file."""
    try:
        data = read_regular(path, MAX_TRANSCRIPT_BYTES)
    except RefusedFile as exc:
        if exc.errno == errno.EISDIR:
            raise TranscriptError(path, None, "is a folder, not a transcript file") from None
        raise TranscriptError(path, None, f"cannot be read: {exc.strerror}") from None
    except OSError as exc:
        raise TranscriptError(path, None, f"cannot be read ({exc.strerror or exc})") from None
    nul = data.find(b"\0")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if 0 <= nul < exc.start:
            raise _not_text(path, data, nul, "a NUL byte") from None
        raise _not_text(path, data, exc.start, f"byte 0x{data[exc.start]:02x} is not UTF-8") from None
    if nul >= 0:
        raise _not_text(path, data, nul, "a NUL byte")
    return text


def _not_text(path: Path, data: bytes, offset: int, what: str) -> TranscriptError:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return TranscriptError(
        path,
        line,
        f"{what} (byte {column} of the line): a transcript is UTF-8 text; save the file as UTF-8 or open another one",
    )


def save_problem(path: Path, error: BaseException) -> str:
    """One line saying why ``path`` could not be saved; the same failure says the same line at every try."""
    if isinstance(error, OSError):
        reason = error.strerror or str(error)
        return f"cannot save {path}: {reason}" + _where(path, error.filename)
    return f"cannot save {path}: {error}"


def _where(path: Path, filename: object) -> str:
    """`` (where)`` when a failure is about another file than ``path``; a temporary file is named by
    what it is, not by its random name (new at every try)."""
    if not filename or str(filename) == str(path):
        return ""
    other = Path(str(filename))
    name = other.name
    if other.parent == path.parent and name.startswith(f".{path.name}.") and name.endswith(TEMPORARY_SUFFIX):
        return " (its temporary copy, written beside it first)"
    return f" ({filename})"


class AutoSaver:
    """Saves the newest text given to it on a background thread; older pending texts are skipped.

    ``save(text)`` returns at once, so the screen never waits for the disk; ``flush()`` waits
    until everything given so far was tried. A write that fails sets ``error``, calls
    ``on_change(error)`` from the saver's thread (and ``on_change(None)`` once saving works
    again), and is retried every ``retry_interval`` seconds and at the next ``save``.
    The saver holds the file's lock (``TranscriptLock``) until ``close``.
    """

    def __init__(
        self,
        path: Path,
        *,
        on_change: Callable[[Exception | None], None] | None = None,
        retry_interval: float = RETRY_INTERVAL,
    ) -> None:
        self.path = path
        self.error: Exception | None = None
        self.on_change = on_change
        self.retry_interval = retry_interval
        self._lock_handle = _lock_for_saving(path)
        self._pending: str | None = None
        self._retry: tuple[str, int] | None = None  # the text that failed, and its number
        self._next_retry = 0.0
        self._written = 0  # the number of the last text written
        self._tried = 0  # the number of the last text tried (written or failed)
        self._given = 0
        self._wrote_once = False
        self._closed = False
        self._lock = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="transcript-saver", daemon=True)
        self._thread.start()

    @property
    def saved(self) -> bool:
        """Everything given so far is on disk."""
        with self._lock:
            return self._written >= self._given

    @property
    def problem(self) -> str | None:
        """Why saving fails now, in one line (None while it works)."""
        return self._problem(self.error)

    @property
    def unsaved(self) -> str | None:
        """Why some of what was given is not on disk, in one line (None: all of it is saved)."""
        if self.saved:
            return None
        return self.problem or f"cannot save {self.path}"

    def _problem(self, error: Exception | None) -> str | None:
        return None if error is None else save_problem(self.path, error)

    def save(self, text: str) -> None:
        with self._lock:
            self._pending = text
            self._given += 1
            self._lock.notify_all()

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every text given was tried; True when all of it is on disk."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._tried < self._given and time.monotonic() < deadline:
                self._lock.wait(0.05)
            return self._written >= self._given

    def close(self, timeout: float = 10.0) -> bool:
        """Save what is left (one last try after a failure), stop, release the file; True when saved."""
        self.flush(timeout)
        with self._lock:
            self._closed = True
            self._lock.notify_all()
        self._thread.join(timeout=timeout)
        if self._lock_handle is not None:
            self._lock_handle.release()
            self._lock_handle = None
        return self.saved

    def _next_text(self) -> tuple[str, int] | None:
        """Under the lock: the text to write next, waiting for one (None: closed, nothing to do)."""
        while True:
            if self._pending is not None:
                text, self._pending = self._pending, None
                return text, self._given
            if self._retry is not None and (self._closed or time.monotonic() >= self._next_retry):
                return self._retry
            if self._closed:
                return None
            wait = None if self._retry is None else max(0.0, self._next_retry - time.monotonic())
            self._lock.wait(wait)

    def _run(self) -> None:
        while True:
            with self._lock:
                job = self._next_text()
            if job is None:
                return
            text, number = job
            try:
                write_atomically(self.path, text, create_folder=not self._wrote_once)
                error: Exception | None = None
                self._wrote_once = True
            except Exception as exc:  # noqa: BLE001 - any failure is reported to the user, the thread lives on
                error = exc
            with self._lock:
                changed = self._problem(error) != self.problem
                self.error = error
                self._tried = max(self._tried, number)
                if error is None:
                    self._written = max(self._written, number)
                    self._retry = None
                else:
                    self._retry = (text, number)
                    self._next_retry = time.monotonic() + self.retry_interval
                last_try = error is not None and self._closed and self._pending is None
                self._lock.notify_all()
            if changed and self.on_change is not None:
                self.on_change(error)
            if last_try:
                return


def _lock_for_saving(path: Path) -> TranscriptLock | None:
    """The file's lock, its folder made first; a folder that cannot be made shows as a save failure later."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return TranscriptLock.acquire(path)
    except OSError:
        return None


@dataclass(frozen=True)
class SavedConversation:
    path: Path
    first_question: str
    modified: datetime
    model: str


DESCRIBED_BYTES = 256 * 1024  # of each file in the list of conversations, the start is read for its question and model


def describe(path: Path) -> SavedConversation:
    """The first question and the model of a saved conversation, read from the start of the file
    (a link, a FIFO or anything but a regular file is listed with neither)."""
    first_question, model = "", ""
    try:
        descriptor = open_regular(path, os.O_RDONLY)
        with os.fdopen(descriptor, "rb") as file:
            modified = datetime.fromtimestamp(os.fstat(descriptor).st_mtime)
            head = file.read(DESCRIBED_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return SavedConversation(path, first_question, datetime.fromtimestamp(0), model)
    for line in decode_unholdable(head).split("\n")[:400]:
        if not first_question and line.startswith(USER):
            first_question = unescape_line(line[len(USER) :].strip())
        elif not model and line.startswith(ASSISTANT):
            model = reply_model(line[len(ASSISTANT) :])
        if first_question and model:
            break
    return SavedConversation(path, first_question, modified, model)


def recent_conversations(folder: Path | None = None, limit: int = 50) -> list[SavedConversation]:
    """The newest conversations in ``folder`` (regular files, not links); the model caches of those
    deleted or renamed go first."""
    folder = folder or conversations_dir()
    if not folder.is_dir():
        return []
    remove_orphan_caches(folder)
    files = sorted((path for path in folder.glob("*.md") if regular_file(path)), key=_modified, reverse=True)
    return [describe(path) for path in files[:limit]]


def _modified(path: Path) -> float:
    try:
        return os.lstat(path).st_mtime
    except OSError:
        return 0.0


def remove_orphan_caches(folder: Path) -> list[Path]:
    """Remove the model caches (``NAME.cache.safetensors``, a killed write's ``.NAME.cache…partial``)
    whose conversation ``NAME.md`` is gone from ``folder`` (deleted, or renamed without its cache);
    the removed files. A conversation's file is written before its cache, so a live one keeps it."""
    removed = []
    for path in folder.glob(f"*{PROMPT_CACHE_SUFFIX}*"):
        name = path.name.removeprefix(".").split(PROMPT_CACHE_SUFFIX)[0]
        if path.name.startswith(".") and not is_partial_cache(path.name):
            continue
        if not os.path.lexists(folder / f"{name}.md"):
            remove_partial(path)
            if not os.path.lexists(path):
                removed.append(path)
    return removed
