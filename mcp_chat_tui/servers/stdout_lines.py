"""A stdio server's stdout cut into lines in one pass, in bounded memory.

Each byte is searched for the newline once and decoded once (UTF-8; bytes that are not become
U+FFFD), as its chunk arrives: a line is its decoded pieces joined when its newline comes, so no
step holds the event loop for the whole line but the join. A line longer than ``MAX_LINE_BYTES``
is dropped as it arrives: its first characters are kept to name it, the rest is skipped up to its
newline, so a server that sends a gigabyte without one costs no more memory than the limit.
A result costs the same per MB at 10 MB and at 200 MB (bench/mcp_overhead.py).
"""

from __future__ import annotations

import codecs
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


class MessageLines:
    """Bytes in, lines out (without their newline); feed it chunks in the order they came."""

    def __init__(self, max_line_bytes: int | None = None) -> None:
        self.max_line_bytes = max_line_bytes or line_limit()
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pieces: list[str] = []  # the decoded start of the line not yet ended
        self._head = ""  # its first HEAD_BYTES characters
        self._size = 0  # its bytes
        self._dropping = False  # inside a line over the limit: skip to its newline
        self.bytes_searched = 0  # every byte looked at for a newline, for tests: each is looked at once

    def feed(self, data: bytes) -> list[str | OverlongLine]:
        """The lines that ``data`` ends (and the lines dropped for their size, as they pass it)."""
        lines: list[str | OverlongLine] = []
        start = 0
        while True:
            newline = data.find(b"\n", start)
            end = len(data) if newline < 0 else newline
            self.bytes_searched += end - start + (newline >= 0)
            if not self._dropping:
                self._take(memoryview(data)[start:end], newline >= 0, lines)
            if newline < 0:
                return lines
            if not self._dropping:
                lines.append("".join(self._pieces))
            self._pieces, self._head, self._size, self._dropping = [], "", 0, False
            self._decoder.reset()
            start = newline + 1

    def _take(self, piece: memoryview, line_ends: bool, lines: list[str | OverlongLine]) -> None:
        """Keep ``piece`` of the current line, or drop the line if it passes the limit."""
        self._size += len(piece)
        if self._size > self.max_line_bytes:
            head = self._head + self._decoder.decode(piece[:HEAD_BYTES])
            lines.append(OverlongLine(self._size, head[:HEAD_BYTES], self.max_line_bytes))
            self._pieces, self._dropping = [], True
            return
        text = self._decoder.decode(piece, final=line_ends)
        self._pieces.append(text)
        if len(self._head) < HEAD_BYTES:
            self._head += text[: HEAD_BYTES - len(self._head)]
