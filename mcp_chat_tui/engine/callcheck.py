"""Check one parsed tool call against the offered tools, and give each call of a reply its own id. Pure Python.

A call is an object with a name and arguments in one of the shapes models write
(``{"name", "arguments"|"parameters"}``, ``{"function": {...}}``, OpenAI's
``{"type": "function", "function": {...}}``, arguments as a JSON string). Its name must be an
offered tool's, or that tool's server-qualified form (``server__tool``, ``server.tool``) when the
tool is offered as ``server__tool``; any other name is never run as a guess: the call is malformed,
and the reason names the offered tools whose names are nearest to it.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from mcp_chat_tui.engine.callformats import CALL_KEYS, ServerCall, json_error
from mcp_chat_tui.engine.events import ToolCallMalformed, ToolCallProposed

_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_QUALIFIER = re.compile(r"__|[./:]")  # between a server's name and its tool's, as models write it
_WORDS = re.compile(r"[^a-z0-9]+")
NEAREST_COUNT = 3
NEAREST_CUTOFF = 0.45  # below this similarity a name is not "near": the model would be steered wrong
NAME_QUOTED = 64  # characters of an unknown name quoted back (a tool's name is at most 64; longer is text)


class CallChecker:
    """The offered tools' names (None: any name) and the ids taken in one reply; counts what it checked."""

    def __init__(self, known_tools: set[str] | None) -> None:
        self.known_tools = known_tools
        self._used_ids: set[str] = set()
        self._counter = 0
        self.calls_proposed = 0
        self.calls_malformed = 0

    def check(self, item: Any, raw: str) -> ToolCallProposed | ToolCallMalformed:
        """A call parsed from ``raw`` (a dict, or a ``ServerCall``) as a proposed call, or why it is malformed."""
        server = None
        if isinstance(item, ServerCall):
            server, item = item.server, item.call
        if not isinstance(item, dict):
            return self.malformed(raw, f'expected a JSON object with "name" and "arguments", got {kind(item)}')
        given_id = item.get("id")
        if isinstance(item.get("function"), dict):
            item = item["function"]
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            return self.malformed(raw, 'tool call has no "name"', given_id)
        name = name.strip()
        arguments = next((item[k] for k in CALL_KEYS if k in item), {})
        if isinstance(arguments, str):
            if not arguments.strip():
                arguments = {}
            else:
                try:
                    arguments = json.loads(arguments)
                except json.JSONDecodeError as exc:
                    return self.malformed(raw, f"arguments are not valid JSON: {json_error(exc)}", given_id)
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return self.malformed(raw, f"arguments must be a JSON object, got {kind(arguments)}", given_id)
        resolved = self.resolve(name, server)
        if resolved is None:
            return self.malformed(raw, self.unknown_reason(name, server), given_id, self.nearest(name))
        self.calls_proposed += 1
        return ToolCallProposed(self.take_id(given_id), resolved, arguments)

    def resolve(self, name: str, server: str | None = None) -> str | None:
        """The offered tool ``name`` stands for: itself, or ``server__tool`` for a server-qualified name
        (``server`` given apart, or written ``server.tool``, ``server/tool``, ``server:tool``); else None."""
        known = self.known_tools
        if known is None or name in known:
            return name
        qualified = [(server, name)] if server else []
        parts = _QUALIFIER.split(name, maxsplit=1)
        if len(parts) == 2 and all(parts):
            qualified.append((parts[0], parts[1]))
        for server_name, tool in qualified:
            exposed = _NAME_UNSAFE.sub("_", f"{server_name}__{tool}")[:64]
            if exposed in known:
                return exposed
        return None

    def nearest(self, name: str) -> tuple[str, ...]:
        """Up to three offered names most like ``name`` (its last part after a server's name counts too)."""
        if not self.known_tools:
            return ()
        forms = {_plain(name), _plain(_QUALIFIER.split(name)[-1])}
        scored = []
        for candidate in self.known_tools:
            score = max(_similarity(form, _plain(candidate)) for form in forms)
            if score >= NEAREST_CUTOFF:
                scored.append((-score, candidate))
        return tuple(candidate for _, candidate in sorted(scored)[:NEAREST_COUNT])

    def unknown_reason(self, name: str, server: str | None) -> str:
        where = f" (server '{server}')" if server else ""
        # a name longer than any tool's is quoted cut: a model that writes what it was told as the next
        # call's name would otherwise be told it again, longer each time
        quoted = f"'{name}'" if len(name) <= NAME_QUOTED else f"'{name[:NAME_QUOTED]}…' ({len(name)} characters)"
        reason = f"unknown tool {quoted}{where}"
        near = self.nearest(name)
        if near:
            return reason + ": the offered tools nearest to it are " + ", ".join(f"'{n}'" for n in near)
        if self.known_tools:
            return reason + ": no offered tool has a similar name"
        return reason + ": no tools are offered"

    def malformed(
        self, raw: str, reason: str, given_id: Any = None, nearest: tuple[str, ...] = ()
    ) -> ToolCallMalformed:
        self.calls_malformed += 1
        return ToolCallMalformed(self.take_id(given_id), raw, reason, nearest)

    def take_id(self, given: Any) -> str:
        """``given`` when it is a fresh string id, else the next free ``call_N``."""
        if isinstance(given, str) and given and given not in self._used_ids:
            self._used_ids.add(given)
            return given
        while True:
            self._counter += 1
            candidate = f"call_{self._counter}"
            if candidate not in self._used_ids:
                self._used_ids.add(candidate)
                return candidate


def call_shaped(value: Any, known_tools: set[str] | None) -> bool:
    """Whether a JSON value found in text is a tool call (or a list of them), not data: a name and
    arguments in one of the call shapes, or only the name of an offered tool."""
    if isinstance(value, list):
        return bool(value) and all(_one_call_shaped(item, known_tools) for item in value)
    return _one_call_shaped(value, known_tools)


def _one_call_shaped(value: Any, known_tools: set[str] | None) -> bool:
    if not isinstance(value, dict):
        return False
    function = value.get("function")
    if isinstance(function, dict):
        return isinstance(function.get("name"), str)
    if not isinstance(value.get("name"), str):
        return False
    if any(key in value for key in CALL_KEYS):
        return True
    # {"name": "get_time"} alone: a call of a tool without arguments, only when it names one offered
    return known_tools is not None and value["name"] in known_tools and set(value) <= {"name", "id", "type"}


def _plain(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def _similarity(name: str, candidate: str) -> float:
    """How alike two names are: their letters in order (difflib) and the words they share, equally."""
    letters = difflib.SequenceMatcher(None, name, candidate).ratio()
    words, candidate_words = set(_WORDS.split(name)) - {""}, set(_WORDS.split(candidate)) - {""}
    shared = len(words & candidate_words) / len(words | candidate_words) if words | candidate_words else 0.0
    return (letters + shared) / 2


def kind(value: Any) -> str:
    """What a JSON value is, for a reason: "a list", "a string", "null"."""
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        int: "a number",
        float: "a number",
    }.get(type(value), type(value).__name__)


def dump_call(item: Any) -> str:
    """A call item as JSON text (its raw text, when the model wrote several in one block)."""
    if isinstance(item, ServerCall):
        item = item.call
    try:
        return json.dumps(item, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(item)
