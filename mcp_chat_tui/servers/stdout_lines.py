"""A stdio server's stdout cut into lines in one pass, in bounded memory.

Each byte is searched for the newline once (the search goes on from where the last one stopped),
each line is decoded once (UTF-8; bytes that are not become U+FFFD), and a line longer than
``MAX_LINE_BYTES`` is dropped as it arrives: its first bytes are kept to name it, the rest is
skipped up to its newline, so a server that sends a gigabyte without one costs no more memory
than the limit. A 200 MB result arrives in about the time it takes to copy it.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_LINE_BYTES = 512 * 1024 * 1024  # one message on stdout; past it the message is dropped as too long
HEAD_BYTES = 4096  # what is kept of a line too long to keep: enough to tell an answer and its id


def line_limit() -> int:
    """The most one message may be, in bytes, for every transport (read when asked: tests lower it)."""
    return MAX_LINE_BYTES


@dataclass(frozen=True)
class OverlongLine:
    """A line dropped for passing the limit: its size when it was dropped, and its start."""

    size: int
    head: str
    limit: int


def decoded(data: bytes | bytearray | memoryview) -> str:
    return str(data, "utf-8", "replace")


class MessageLines:
    """Bytes in, lines out (without their newline); feed it chunks in the order they came."""

    def __init__(self, max_line_bytes: int | None = None) -> None:
        self.max_line_bytes = max_line_bytes or line_limit()
        self._buffer = bytearray()  # the start of the line not yet ended
        self._searched = 0  # how much of the buffer is known to hold no newline
        self._dropping = False  # inside a line over the limit: skip to its newline
        self.bytes_searched = 0  # every byte looked at for a newline, for tests: each is looked at once

    def feed(self, data: bytes) -> list[str | OverlongLine]:
        """The lines that ``data`` ends (and the lines dropped for their size)."""
        if self._dropping:
            newline = data.find(b"\n")
            self.bytes_searched += len(data) if newline < 0 else newline + 1
            if newline < 0:
                return []
            self._dropping = False
            data = data[newline + 1 :]
        self._buffer += data
        return self._cut_lines()

    def _cut_lines(self) -> list[str | OverlongLine]:
        buffer, limit = self._buffer, self.max_line_bytes
        lines: list[str | OverlongLine] = []
        start = 0
        while True:
            newline = buffer.find(b"\n", self._searched)
            self.bytes_searched += (newline + 1 if newline >= 0 else len(buffer)) - self._searched
            if newline < 0:
                self._searched = len(buffer)
                break
            if newline - start > limit:
                lines.append(self._overlong(start, newline - start))
            else:
                with memoryview(buffer) as view:
                    lines.append(decoded(view[start:newline]))
            start = self._searched = newline + 1
        if len(buffer) - start > limit:  # no newline yet and already too long: stop keeping it
            lines.append(self._overlong(start, len(buffer) - start))
            self._dropping = True
            start = len(buffer)
        if start:
            self._buffer = buffer[start:]  # at most one chunk is left: the copy costs what the chunk did
            self._searched = len(self._buffer)
        return lines

    def _overlong(self, start: int, size: int) -> OverlongLine:
        head = self._buffer[start : start + min(size, HEAD_BYTES)]
        return OverlongLine(size, decoded(head), self.max_line_bytes)
