"""Capture a stdio server's stderr: never printed over the screen, kept as a bounded tail and a log file."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import IO

MAX_LINE_CHARS = 2000


class StderrCapture:
    """A pipe handed to the server process as its stderr, read by a thread.

    Each line passes through ``redact`` before it is written to the log or handed on.

    Lines reach ``on_lines`` on the event loop; ``on_closed`` runs there once
    the pipe reaches end of file, which happens when the process (and every
    child holding the pipe) has exited.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        log_path: Path | None,
        on_lines: Callable[[list[str]], None],
        on_closed: Callable[[], None],
        redact: Callable[[str], str] = str,
    ) -> None:
        self._loop = loop
        self._redact = redact
        self._on_lines = on_lines
        self._on_closed = on_closed
        read_fd, write_fd = os.pipe()
        self._read = os.fdopen(read_fd, "rb", buffering=0)
        self.errlog: IO[str] = os.fdopen(write_fd, "w")
        self._log: IO[str] | None = None
        if log_path is not None:
            try:
                log_path.parent.mkdir(parents=True, exist_ok=True)
                self._log = log_path.open("a", encoding="utf-8", errors="replace")
                self._log.write(f"--- started {datetime.now().isoformat(timespec='seconds')}\n")
                self._log.flush()
            except OSError:
                self._log = None
        self._thread = threading.Thread(target=self._pump, name="mcp-stderr", daemon=True)
        self._thread.start()

    def release_write_end(self) -> None:
        """Close our copy of the write end once the child holds its own, so EOF means the child is gone."""
        if not self.errlog.closed:
            self.errlog.close()

    def _pump(self) -> None:
        pending = b""
        try:
            while True:
                chunk = self._read.read(65536)
                if not chunk:
                    break
                pending += chunk
                *complete, pending = pending.split(b"\n")
                if len(pending) > MAX_LINE_CHARS * 4:
                    complete.append(pending)
                    pending = b""
                if complete:
                    self._deliver([self._line(line) for line in complete])
        except (OSError, ValueError):
            pass
        if pending:
            self._deliver([self._line(pending)])
        self._read.close()
        if self._log is not None:
            try:
                self._log.close()
            except OSError:
                pass
        self._call(self._on_closed)

    def _line(self, raw: bytes) -> str:
        """One line as logged and shown: secrets redacted (before the cut, so no part of one stays)."""
        return self._redact(raw.decode("utf-8", "replace"))[:MAX_LINE_CHARS]

    def _deliver(self, lines: list[str]) -> None:
        if self._log is not None:
            try:
                self._log.write("\n".join(lines) + "\n")
                self._log.flush()
            except OSError:
                pass
        self._call(self._on_lines, lines)

    def _call(self, callback: Callable[..., None], *args: object) -> None:
        try:
            self._loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:
            pass  # the loop is closed: the app is gone, nobody is listening
