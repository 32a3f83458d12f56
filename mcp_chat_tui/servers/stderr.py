"""Capture a stdio server's stderr: never printed over the screen, kept as a bounded tail and a
log file that starts again at a fixed size. Memory stays bounded whatever the server writes:
100 MB of lines, one 50 MB line without a newline, bytes that are not UTF-8."""

from __future__ import annotations

import asyncio
import os
import threading
from collections import deque
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TextIO

from mcp_chat_tui.core.files import open_append
from mcp_chat_tui.servers.state import STDERR_TAIL_LINES

MAX_LINE_CHARS = 2000  # a longer line keeps its start and a note of its length
LOG_FILE_MAX_BYTES = 1024 * 1024  # NAME.log starts again past this; the one before is NAME.log.1
READ_CHUNK_BYTES = 65536


class LineSplitter:
    """Turns a byte stream into text lines of at most ``max_chars`` characters.

    Holds at most one line's first ``4 * max_chars`` bytes: the rest of a longer line is counted
    and dropped as it arrives. Bytes that are not UTF-8 become U+FFFD. Each line passes through
    ``redact`` before it is cut, so no part of a secret stays.
    """

    def __init__(self, max_chars: int = MAX_LINE_CHARS, redact: Callable[[str], str] = str) -> None:
        self._max_chars = max_chars
        self._redact = redact
        self._max_bytes = max_chars * 4  # a character is at most 4 bytes in UTF-8
        self._head = bytearray()
        self._dropped = 0

    def feed(self, chunk: bytes) -> list[str]:
        """The lines that ``chunk`` completes."""
        *complete, rest = chunk.split(b"\n")
        lines = []
        for piece in complete:
            self._keep(piece)
            lines.append(self._line())
        self._keep(rest)
        return lines

    def finish(self) -> list[str]:
        """At end of file: the last line, if it had no newline."""
        return [self._line()] if self._head or self._dropped else []

    def _keep(self, piece: bytes) -> None:
        room = self._max_bytes - len(self._head)
        self._head += piece[:room]
        self._dropped += max(0, len(piece) - room)

    def _line(self) -> str:
        total = len(self._head) + self._dropped
        text = self._redact(self._head.decode("utf-8", "replace"))
        self._head.clear()
        self._dropped = 0
        if total > self._max_bytes or len(text) > self._max_chars:
            text = f"{text[: self._max_chars]} … [line cut: it had {total:,} bytes]"
        return text


class RotatingLog:
    """A log file that starts again once it would pass ``max_bytes``, keeping the one before as
    ``NAME.log.1`` (so a server uses at most twice ``max_bytes`` on disk)."""

    def __init__(self, path: Path, max_bytes: int = LOG_FILE_MAX_BYTES) -> None:
        self.path = path
        self.previous = path.with_name(path.name + ".1")
        self.max_bytes = max_bytes
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open_append(path)  # never through a link planted at its name
        self._size = os.fstat(self._file.fileno()).st_size

    def write(self, lines: list[str]) -> None:
        """Append ``lines``, starting a new file first whenever the next line would not fit."""
        batch: list[bytes] = []
        batch_size = 0
        for line in lines:
            data = (line + "\n").encode("utf-8", "replace")
            if self._size + batch_size + len(data) > self.max_bytes and self._size + batch_size > 0:
                self._append(batch)
                batch, batch_size = [], 0
                self._rotate()
            batch.append(data)
            batch_size += len(data)
        self._append(batch)

    def close(self) -> None:
        self._file.close()

    def _append(self, batch: list[bytes]) -> None:
        if batch:
            data = b"".join(batch)
            self._file.write(data)
            self._size += len(data)

    def _rotate(self) -> None:
        self._file.close()
        os.replace(self.path, self.previous)
        self._file = open_append(self.path)
        self._size = 0


class StderrCapture:
    """A pipe handed to the server process as its stderr, read by a thread.

    Each line passes through ``redact`` (before it is cut) before it is logged or handed on.
    Lines reach ``on_lines`` on the event loop, at most ``tail_lines`` of the newest at a time
    (a flood faster than the loop drops the older ones from memory, never from the log file);
    ``on_closed`` runs there once the pipe reaches end of file, which happens when the process
    (and every child holding the pipe) has exited.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        log_path: Path | None,
        on_lines: Callable[[list[str]], None],
        on_closed: Callable[[], None],
        *,
        tail_lines: int = STDERR_TAIL_LINES,
        log_max_bytes: int = LOG_FILE_MAX_BYTES,
        redact: Callable[[str], str] = str,
    ) -> None:
        self._loop = loop
        self._redact = redact
        self._on_lines = on_lines
        self._on_closed = on_closed
        self._waiting: deque[str] = deque(maxlen=tail_lines)
        self._waiting_lock = threading.Lock()
        self._hand_over_due = False
        read_fd, write_fd = os.pipe()
        self._read = os.fdopen(read_fd, "rb", buffering=0)
        self.errlog: TextIO = os.fdopen(write_fd, "w")
        self._log: RotatingLog | None = None
        if log_path is not None:
            try:
                self._log = RotatingLog(log_path, log_max_bytes)
                self._log.write([f"--- started {datetime.now().isoformat(timespec='seconds')}"])
            except OSError as exc:
                self._log = None
                self._waiting.append(f"[mcp-chat-tui] cannot write the log file {log_path}: {exc}")
                self._hand_over_due = True
                self._call(self._hand_over)
        self._thread = threading.Thread(target=self._pump, name="mcp-stderr", daemon=True)
        self._thread.start()

    def release_write_end(self) -> None:
        """Close our copy of the write end once the child holds its own, so EOF means the child is gone."""
        if not self.errlog.closed:
            self.errlog.close()

    def _pump(self) -> None:
        splitter = LineSplitter(redact=self._redact)
        try:
            while chunk := self._read.read(READ_CHUNK_BYTES):
                self._deliver(splitter.feed(chunk))
        except (OSError, ValueError):
            pass
        self._deliver(splitter.finish())
        self._read.close()
        if self._log is not None:
            try:
                self._log.close()
            except OSError:
                pass
        self._call(self._on_closed)

    def _deliver(self, lines: list[str]) -> None:
        """Log ``lines`` here (on the reading thread) and hand them to the loop, one hand-over at a time."""
        if not lines:
            return
        self._write_log(lines)
        with self._waiting_lock:
            self._waiting.extend(lines)
            if self._hand_over_due:
                return
            self._hand_over_due = True
        self._call(self._hand_over)

    def _write_log(self, lines: list[str]) -> None:
        if self._log is None:
            return
        try:
            self._log.write(lines)
        except OSError as exc:
            self._log = None
            lines.append(f"[mcp-chat-tui] writing the log file failed, stderr is kept in memory only: {exc}")

    def _hand_over(self) -> None:
        """On the loop: pass on every line waiting."""
        with self._waiting_lock:
            lines = list(self._waiting)
            self._waiting.clear()
            self._hand_over_due = False
        if lines:
            self._on_lines(lines)

    def _call(self, callback: Callable[..., None], *args: object) -> None:
        try:
            self._loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:
            pass  # the loop is closed: the app is gone, nobody is listening


def log_file_name(name: str) -> str:
    """A file name for a server's stderr log: its name with anything unsafe in a path replaced."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name) or "server"
