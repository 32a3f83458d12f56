"""Tool calls written as loose JSON: objects or arrays standing alone on their lines, or in a
```` ```json ```` fence. Pure Python, fed as the reply streams.

``JsonRun`` follows text from a line start that begins with ``{`` or ``[`` (or the content of a
fence whose info string is ``json``, ``tool_call`` or none): JSON values separated by whitespace,
``,`` or ``;``. It decides as early as the text allows: ``{`` not followed by a key, a first key no
call has (``"title"``), ``[`` not followed by ``{``, a closed value that is not call-shaped, or
prose after a value on its line each make it text. A line of call-shaped values is committed at
its newline (in a fence: at the closing ```` ``` ````); a line that starts with anything else ends
the run, and the text from there goes back to the recogniser.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

FENCE = "```"
CALL_FENCE_INFOS = frozenset(
    {"", "json", "jsonc", "json5", "tool_call", "tool_calls", "tool_code", "tool", "function_call", "functions"}
)
FIRST_KEYS = frozenset({"name", "function", "type", "id", "arguments", "parameters"})  # a call object may begin with
CALL_LIKE_KEYS = frozenset({"name", "function", "type"})  # an object cut off after one of these was meant as a call

OPEN = "open"  # undecided: its text is held back
REJECTED = "rejected"  # not calls: text[shown:rest] is shown as written, text[rest:] is read again
DATA = "data"  # a JSON value that is no call is still open: its text is shown as it streams
ENDED = "ended"  # the run is over: text[rest:] is read again
CLOSED = "closed"  # a fence closed; text[rest:] follows it


def could_be_call_fence(info: str) -> bool:
    """Whether a fence's info string (so far) is, or could still become, one that may hold calls."""
    info = info.strip().lower()
    return any(candidate.startswith(info) for candidate in CALL_FENCE_INFOS)


class JsonRun:
    """One run of loose JSON: ``feed`` text, read ``outcome``, ``take`` the committed calls' (raw, value)."""

    def __init__(self, accepts: Callable[[Any], bool], *, fenced: bool = False) -> None:
        self.accepts = accepts  # is this closed value a call (or a list of calls)?
        self.fenced = fenced
        self.text = ""
        self.outcome = OPEN
        self.shown = self.rest = 0
        self.committed: list[tuple[str, Any]] = []  # ready to be taken
        self.values = 0  # call-shaped values seen in all
        self._line: list[tuple[str, Any]] = []  # closed call-shaped values not yet committed
        self._line_end = 0  # where the last of them ends
        self._uncommitted = 0  # where the text not yet committed starts
        self._pos = self._depth = self._start = 0
        self._in_string = self._escape = False
        self._call_depth = 1  # the depth at which call objects open: 1, or 2 inside a top-level array
        self._want = ""  # "key": a call object's first key comes next; "object": an array's next item
        self._key: str | None = None  # the first key of the open call object
        self._reading_key = False
        self._line_start = True  # at depth 0, nothing but whitespace since the line began

    @property
    def open_value(self) -> str | None:
        """The text of the value still open, if any (the reply may end inside it)."""
        return self.text[self._start :] if self._depth else None

    @property
    def looks_like_call(self) -> bool:
        """The open value began as a call does (``{"name"``, ``[{"function"``): cut off, it is malformed."""
        return self._depth > 0 and self._key in CALL_LIKE_KEYS and not self._reading_key

    @property
    def scanned(self) -> int:
        return self._pos

    @property
    def held(self) -> str:
        """The text not yet committed nor given back (shown in full if the reply ends as text)."""
        return self.text[self._uncommitted :]

    def take(self) -> list[tuple[str, Any]]:
        taken, self.committed = self.committed, []
        return taken

    def feed(self, chunk: str) -> None:
        self.text += chunk
        text, i = self.text, self._pos
        while i < len(text) and self.outcome in (OPEN, DATA):
            if self._depth == 0 and self.outcome == OPEN:
                scanned, i = i, self._between(text, i)
                if i == scanned and self.outcome == OPEN:
                    break  # a backtick that may begin the closing fence: wait for the next text
            else:
                self._inside(i, text[i])
                i += 1
        self._pos = i

    def finish(self) -> None:
        """The reply is over: the closed calls held are committed (a fence need not be closed)."""
        if self.outcome == OPEN and self._line:
            self._commit(self._line_end if self._depth else len(self.text))

    # -- between values ---------------------------------------------------------------------------

    def _between(self, text: str, i: int) -> int:
        """Scan the character at ``i`` at depth 0; return the next index to scan."""
        ch = text[i]
        if ch == "\n":
            if self._line and not self.fenced:
                self._commit(i + 1)
            self._line_start = True
            return i + 1
        if ch in " \t\r" or (ch in ",;" and self._line):
            return i + 1
        if ch in "{[":
            self._start, self._depth, self._line_start = i, 1, False
            self._call_depth, self._want, self._key = (1, "key", None) if ch == "{" else (2, "object", None)
            return i + 1
        if self.fenced and ch == "`":
            ahead = text[i : i + len(FENCE)]
            if ahead == FENCE:
                self._commit(i)
                self.outcome, self.rest = CLOSED, i + len(FENCE)
                return self.rest
            if FENCE.startswith(ahead):
                return i  # wait for the next backtick
        elif self._line_start and not self.fenced:
            self.outcome, self.rest = ENDED, self._uncommitted  # a line of something else: the run is over
            self.shown = self.rest
            return i
        self._reject()
        return i

    def _commit(self, end: int) -> None:
        self.committed.extend(self._line)
        self._line = []
        self._uncommitted = end

    def _reject(self) -> None:
        """Not calls: the closed values of this line are shown as written, what follows them is read again."""
        self.outcome, self.shown = REJECTED, self._uncommitted
        self.rest = self._line_end if self._line else self._uncommitted
        self._line = []

    # -- inside a value ---------------------------------------------------------------------------

    def _inside(self, i: int, ch: str) -> None:
        if self._in_string:
            self._string_char(ch)
            return
        if self._want and ch not in " \t\r\n":
            if not self._wanted(ch):
                return
        if ch == '"':
            self._in_string = True
            self._reading_key = self._key == ""
        elif ch in "{[":
            self._depth += 1
            if ch == "{" and self._depth == self._call_depth and self.outcome == OPEN:
                self._want = "key"
        elif ch in "}]":
            self._depth -= 1
            if self._depth == 0:
                self._close(i + 1)
        elif ch == "," and self._depth == 1 and self._call_depth == 2 and self.outcome == OPEN:
            self._want = "object"
        elif ch == "\n" and self.outcome == DATA and self.text.endswith("\n\n", 0, i + 1):
            self.outcome, self.rest = ENDED, i + 1  # a blank line: prose after all, not JSON still open

    def _wanted(self, ch: str) -> bool:
        """Check the first character of a call object's key, or of an array's item; False once rejected."""
        want, self._want = self._want, ""
        if want == "key" and ch == '"':
            self._key = ""
            return True
        if (want == "key" and ch == "}") or (want == "object" and ch in "{]"):
            return True
        self._reject()  # "{braces} in prose", "[1, 2]", "[link](...)"
        return False

    def _string_char(self, ch: str) -> None:
        if self._escape:
            self._escape = False
        elif ch == "\\":
            self._escape = True
        elif ch == '"':
            self._in_string = False
            if self._reading_key:
                self._reading_key = False
                self._check_first_key()
            return
        if self._reading_key:
            self._key = (self._key or "") + ch

    def _check_first_key(self) -> None:
        if self._key in FIRST_KEYS or self.outcome != OPEN:
            return
        if self.fenced:
            self._reject()
        else:  # JSON that is not a call: shown as it streams, and nothing in it is read as a call
            self.outcome, self.shown = DATA, self._uncommitted
            self._line = []

    def _close(self, end: int) -> None:
        if self.outcome == DATA:
            self.outcome, self.rest = ENDED, end
            return
        raw = self.text[self._start : end]
        try:
            value = json.loads(raw)
        except Exception:  # invalid JSON, or nested too deep: either way not a call
            value = None
        if value is not None and self.accepts(value):
            self._line.append((raw, value))
            self._line_end = end
            self.values += 1
        else:
            self._line.append((raw, value))
            self._line_end = end
            self._reject()
