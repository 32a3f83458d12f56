"""What a stdio server wrote on stdout that is not JSON-RPC, put in words a user can act on.

The SDK's stdio transport hands each line it cannot parse to the client's message
handler as an exception; the line itself is the input of its first validation error.
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from mcp_chat_tui.core.text import one_line

EXCERPT_CHARS = 60
STDOUT_RULE = "a stdio server must write only JSON-RPC messages to stdout (logs go to stderr)"


def noise_line(exc: BaseException) -> str:
    """The stdout line the SDK could not parse ("" when the exception does not carry it)."""
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
    return one_line(repr(line), EXCERPT_CHARS) if line else "a line"


def glued_before_a_message(line: str) -> str:
    """The text glued before a JSON-RPC message on one line (a banner without a newline), or "".

    The message is lost with the line, so an answer the client waits for will never come."""
    start = line.find("{")
    return line[:start] if start > 0 and '"jsonrpc"' in line[start:] else ""


def unreadable_message(exc: BaseException) -> str:
    """Why a line that is a JSON-RPC message (not stray output) could not be read, for a server
    panel and a call that waited for it ("" when the line is not one: stray output)."""
    line = noise_line(exc)
    try:
        message = json.loads(line)  # Python's JSON takes what the SDK's refuses (a lone surrogate escape)
    except ValueError:
        return ""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return ""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    why = one_line(str(errors[0]["msg"] if errors else exc), 120)
    what = "an answer" if "id" in message and "method" not in message else "a message"
    return f"{what} from the server could not be read ({why}): {noise_excerpt(line)}"


def is_lost_answer(problem: str) -> bool:
    return problem.startswith("an answer")
