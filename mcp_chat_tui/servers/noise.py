"""What a stdio server wrote on stdout that is not JSON-RPC, put in words a user can act on.

The stdio transport hands each line it cannot parse to the client's message handler as an
exception; the line itself is the input of its first validation error. Nothing here parses a
whole line: a line may be 200 MB, or JSON nested 100,000 deep, and what is needed (is it a
message, an answer, to which request) is in its first bytes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from pydantic import ValidationError

from mcp_chat_tui.core.text import one_line
from mcp_chat_tui.servers.stdout_lines import HEAD_BYTES, OverlongLine

EXCERPT_CHARS = 60
STDOUT_RULE = "a stdio server must write only JSON-RPC messages to stdout (logs go to stderr)"
# A JSON string, a bracket or separator, or any other run (a number, a literal, or garbage).
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+', re.DOTALL)


@dataclass(frozen=True)
class Outline:
    """The top level of a message as far as its head shows it: its keys, and the scalar values among them."""

    keys: frozenset[str]
    values: dict[str, str | int | float]

    @property
    def is_message(self) -> bool:
        return self.values.get("jsonrpc") == "2.0"

    @property
    def answer_id(self) -> str | int | None:
        """The id of the request this answers (None when it is not an answer, or has no usable id).

        An answer has ``result`` or ``error`` and no ``method``; those keys come before the value
        that makes a message large or deep, so the head shows them."""
        request_id = self.values.get("id")
        answers = bool({"result", "error"} & self.keys) and "method" not in self.keys
        return request_id if self.is_message and answers and isinstance(request_id, str | int) else None


def outline(line: str) -> Outline | None:
    """The top-level members of the JSON object that starts ``line``, read from its first
    ``HEAD_BYTES`` characters token by token (no recursion, no parse of the rest); None when the
    line does not start with an object."""
    depth = 0
    keys: set[str] = set()
    values: dict[str, str | int | float] = {}
    key: object = None
    previous = ""
    for match in _TOKEN.finditer(line, 0, HEAD_BYTES):
        token = match.group()
        if not previous and token != "{":
            return None
        if token in ("{", "["):
            depth += 1
        elif token in ("}", "]"):
            depth -= 1
            if depth == 0:
                break
        elif depth == 1 and token == ":" and previous.startswith('"'):
            key = _scalar(previous)
            if isinstance(key, str):
                keys.add(key)
        elif depth == 1 and previous == ":" and isinstance(key, str) and (value := _scalar(token)) is not None:
            values[key] = value
        previous = token
    return Outline(frozenset(keys), values) if previous else None


def _scalar(token: str) -> str | int | float | None:
    try:
        value = json.loads(token)
    except ValueError:
        return None
    return value if isinstance(value, str | int | float) and not isinstance(value, bool) else None


class MessageTooLong(Exception):
    """A line on stdout longer than the transport keeps (``stdout_lines.MAX_LINE_BYTES``)."""

    def __init__(self, line: OverlongLine) -> None:
        super().__init__(f"a line of more than {line.limit // (1024 * 1024)} MiB")
        self.line = line


def noise_line(exc: BaseException) -> str:
    """The stdout line the transport could not parse ("" when the exception does not carry it;
    the start of it for a line too long to keep)."""
    if isinstance(exc, MessageTooLong):
        return exc.line.head
    if not isinstance(exc, ValidationError) or not exc.errors():
        return ""
    value = exc.errors()[0].get("input")
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def noise_excerpt(line: str) -> str:
    """A short, quoted, escaped excerpt of the line: control characters and odd bytes shown, not sent."""
    return one_line(repr(line[: EXCERPT_CHARS * 2]), EXCERPT_CHARS) if line else "a line"


def glued_before_a_message(line: str) -> str:
    """The text glued before a JSON-RPC message on one line (a banner without a newline), or "".

    The message is lost with the line, so an answer the client waits for will never come."""
    start = line.find("{", 0, HEAD_BYTES)
    return line[:start] if start > 0 and '"jsonrpc"' in line[start : start + HEAD_BYTES] else ""


def unreadable_message(exc: BaseException) -> str:
    """Why a line that is a JSON-RPC message (not stray output) could not be read, for a server
    panel and a call that waited for it ("" when the line is not one: stray output)."""
    line = noise_line(exc)
    shape = outline(line)
    if shape is None or not shape.is_message:
        return ""
    what = "an answer" if shape.answer_id is not None else "a message"
    if isinstance(exc, MessageTooLong):
        limit = exc.line.limit // (1024 * 1024)
        return f"{what} from the server was longer than {limit} MiB (the most one message may be) and was dropped: {noise_excerpt(line)}"
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    why = one_line(str(errors[0]["msg"] if errors else exc), 120)
    return f"{what} from the server could not be read ({why}): {noise_excerpt(line)}"


def is_lost_answer(problem: str) -> bool:
    return problem.startswith("an answer")
