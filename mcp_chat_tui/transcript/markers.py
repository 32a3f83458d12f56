"""Parley's line markers and the quoting that lets any text live between them.

The quoting rules are in docs/transcript-format.md ("Markers").
"""

from __future__ import annotations

import re
import unicodedata

USER = "💬:"
ASSISTANT = "🤖:"
THOUGHT = "🧠:"
SUMMARY = "📝:"
PROPOSAL = "❓:"
RESULT = "🛠️:"
RESULT_PLAIN = "🛠:"  # the same without the emoji variation selector, as some editors save it
SERVER_REQUEST = "📨:"  # a server's request to the client (sampling, elicitation) and its answer
ATTACHMENT = "📎:"  # something attached to the user's message: resource contents, the prompt command

MARKERS = (USER, ASSISTANT, THOUGHT, SUMMARY, PROPOSAL, RESULT, RESULT_PLAIN, SERVER_REQUEST, ATTACHMENT)
EXPECTED = "💬: 📎: 🤖: 🧠: 📝: ❓: 🛠️: 📨:"

_MARKER_LIKE = re.compile(r"^(\S{1,3}?):")


def known_marker(line: str) -> str | None:
    """The marker a line starts with, if it is one of ours."""
    for marker in MARKERS:
        if line.startswith(marker):
            return RESULT if marker == RESULT_PLAIN else marker
    return None


def marker_like(line: str) -> str | None:
    """The marker-looking prefix of a line (a symbol or emoji, then ``:``), known or not."""
    if known_marker(line):
        return known_marker(line)
    match = _MARKER_LIKE.match(line)
    if match is None:
        return None
    head = match.group(1)
    if unicodedata.category(head[0]) in ("So", "Sk", "Cs") or ord(head[0]) >= 0x1F000:
        return head + ":"
    return None


def escape_line(line: str) -> str:
    if not line or (line[0] < "\x80" and line[0] not in "^`\\"):
        return line  # most lines: plain text (the only ASCII marker-like symbols are ^ and `)
    return "\\" + line if line.startswith("\\") or marker_like(line) else line


def unescape_line(line: str) -> str:
    return line[1:] if line.startswith("\\") else line


def escape_text(text: str) -> list[str]:
    return [escape_line(line) for line in text.split("\n")]


def escape_thought(text: str) -> list[str]:
    """Like ``escape_text``, and an empty line after the first becomes a lone backslash."""
    lines = text.split("\n")
    return [escape_line(line) if index == 0 or line else "\\" for index, line in enumerate(lines)]


def fence_for(body: str) -> str:
    if "```" not in body:
        return "```"
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    return "`" * max(3, longest + 1)


def escape_name(value: str) -> str:
    return value.replace("\\", "\\\\").replace("]", "\\]").replace("\n", "\\n")


def unescape_name(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), value)


# ----- what a UTF-8 text file cannot hold ---------------------------------------------------
# NUL, the other C0 controls but tab and newline (a carriage return would be taken for a line end by
# editors and git, an escape sequence would act on a terminal showing the file) and lone surrogates
# (no UTF-8 for them) are written as \{U+XXXX}. A run of backslashes before such an escape, or before
# text that looks like one, is doubled; every other backslash is written as it is.
_UNHOLDABLE = "\x00-\x08\x0b-\x1f\ud800-\udfff"
_UNHOLDABLE_HEX = "000[0-8B-F]|001[0-9A-F]|D[89A-F][0-9A-F]{2}"  # the same code points, as the escape writes them
_MAY_NEED_ESCAPES = re.compile(f"[{_UNHOLDABLE}]|\\{{U\\+")
_ESCAPES_NEEDED = re.compile(f"(?<!\\\\)(\\\\*+)(?:(\\{{U\\+(?:{_UNHOLDABLE_HEX})\\}})|([{_UNHOLDABLE}]))")
_ESCAPE_READ = re.compile(f"(?<!\\\\)(\\\\++)(\\{{U\\+({_UNHOLDABLE_HEX})\\}})")


def encode_unholdable(text: str) -> str:
    """``text`` as a UTF-8 file can hold it (read back by ``decode_unholdable``); linear, and text
    without those characters comes back as it is (but for a backslash before one's escape)."""
    if _MAY_NEED_ESCAPES.search(text) is None:
        return text
    return _ESCAPES_NEEDED.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    backslashes, lookalike, character = match.groups()
    return backslashes * 2 + (lookalike or f"\\{{U+{ord(character):04X}}}")


def decode_unholdable(text: str) -> str:
    """The text ``encode_unholdable`` was given. Never makes a newline, so lines stay lines."""
    if "{U+" not in text:
        return text
    return _ESCAPE_READ.sub(_unescaped, text)


def _unescaped(match: re.Match[str]) -> str:
    backslashes, lookalike, code = match.groups()
    kept = "\\" * (len(backslashes) // 2)
    return kept + (chr(int(code, 16)) if len(backslashes) % 2 else lookalike)
