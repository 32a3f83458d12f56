"""Text from servers and models, made safe to show: control characters become visible escapes.

A tool result or argument may hold terminal escape sequences (``\\x1b[2J`` clears
a screen, ``\\x1b]8;;`` opens a hyperlink). Shown raw they could redraw or spoof
the interface, so every such character is written out as ``\\xNN`` instead.
Markup is a separate matter: callers wrap the result in ``rich.text.Text`` or
Textual ``Content``, which never interpret it.
"""

from __future__ import annotations

import json
import re
from typing import Any

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def visible_controls(text: str) -> str:
    """``text`` with every control character except newline and tab shown as ``\\xNN``."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


_JSON_CONTROL = re.compile(r"[\x7f-\x9f\u2028\u2029]")  # JSON leaves these raw; it escapes the rest itself


def json_for_terminal(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with the control characters JSON leaves raw
    written as ``\\uXXXX``: the same JSON, which a terminal shows without acting on it."""
    return _JSON_CONTROL.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def one_line(text: str, limit: int = 80) -> str:
    """A single-line summary: whitespace folded, controls made visible, cut with an ellipsis."""
    folded = " ".join(visible_controls(text).split())
    return folded if len(folded) <= limit else folded[: max(0, limit - 1)] + "…"


def pretty_json(value: Any) -> str:
    """Indented JSON for showing arguments and structured results (non-ASCII kept readable); a
    value nested deeper than Python's JSON encoder goes is said to be so."""
    try:
        return json.dumps(value, ensure_ascii=False, indent=2, default=str)
    except RecursionError:
        return "[nested too deep to show]"


def arguments_summary(arguments: dict[str, Any], limit: int = 60) -> str:
    """``key=value`` pairs on one line, for list rows."""
    parts = [f"{key}={json.dumps(value, ensure_ascii=False, default=str)}" for key, value in arguments.items()]
    return one_line(", ".join(parts), limit)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(value: Any) -> str | None:
    """``U+D800`` when a string in ``value`` (JSON-like: dicts, lists, strings) holds a lone surrogate,
    else None. A model or a server may send one (JSON allows ``\\ud800``), but no UTF-8 text holds
    it: a message carrying one cannot be sent on to a server (its transport would fail whole)."""
    pending = [value]
    while pending:  # a loop, not recursion: arguments may be nested deeply
        item = pending.pop()
        if isinstance(item, str):
            found = _LONE_SURROGATE.search(item)
            if found is not None:
                return f"U+{ord(found.group()):04X}"
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
    return None


def counted(number: int, noun: str, plural: str = "") -> str:
    """``1 server``, ``2 servers`` (``plural`` for a noun that does not take an s): a count with its
    noun in the right number, never "server(s)"."""
    return f"{number} {noun}" if number == 1 else f"{number} {plural or noun + 's'}"
