"""Recognise tool calls and thinking in model text while it streams. Pure Python, used by every engine.

``ToolCallStream`` is fed text chunks and returns ``TextDelta``, ``ThinkingDelta``,
``ToolCallProposed`` and ``ToolCallMalformed`` events, holding text back only while it could
still be part of a call. The formats it reads: docs/architecture.md, "Recognising tool calls".
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from mcp_chat_tui.engine.callformats import (
    CALL_KEYS,
    BareJson,
    ServerCall,
    json_error,
    parse_any,
    parse_mistral,
    parse_tool_use,
)
from mcp_chat_tui.engine.events import (
    EngineEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallMalformed,
    ToolCallProposed,
)

ToolParser = Callable[[str, Any], Any]

_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

_TEXT, _THINK, _BLOCK, _BARE = "text", "think", "block", "bare"


@dataclass(frozen=True)
class _Opener:
    start: str
    end: str  # "" means the block runs to the end of the reply
    kind: str  # "think", "native", "json", "tool_use", "mistral"


@dataclass
class ParsedReply:
    """A whole reply split into visible text, thinking and tool calls (valid or not), in order."""

    text: str = ""
    thinking: str = ""
    calls: list[ToolCallProposed | ToolCallMalformed] = field(default_factory=list)


def tool_names(tools: Iterable[dict] | None) -> set[str] | None:
    """The function names in OpenAI-format tool schemas, or None when there are no schemas."""
    if tools is None:
        return None
    names = set()
    for tool in tools:
        function = tool.get("function", tool) if isinstance(tool, dict) else {}
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.add(function["name"])
    return names


class ToolCallStream:
    """Streaming recogniser: ``feed(chunk)`` and, at the end of the reply, ``finish()``; both return events."""

    def __init__(
        self,
        known_tools: set[str] | None = None,
        *,
        tools: list[dict] | None = None,
        tool_call_start: str | None = None,
        tool_call_end: str | None = None,
        tool_parser: ToolParser | None = None,
        think_start: str | None = "<think>",
        think_end: str | None = "</think>",
        in_thinking: bool = False,
    ) -> None:
        self.known_tools = known_tools if known_tools is not None else tool_names(tools)
        self._tools = tools
        self._tool_parser = tool_parser
        openers: list[_Opener] = []
        if think_start and think_end:
            openers.append(_Opener(think_start, think_end, "think"))
        if tool_call_start:
            openers.append(_Opener(tool_call_start, tool_call_end or "", "native"))
        for fallback in (
            _Opener("<tool_call>", "</tool_call>", "json"),
            _Opener("<tool_use>", "</tool_use>", "tool_use"),
            _Opener("[TOOL_CALLS]", "", "mistral"),
        ):
            if all(fallback.start != o.start for o in openers):
                openers.append(fallback)
        self._openers = {o.start: o for o in openers}
        starts = sorted(self._openers, key=len, reverse=True)
        self._opener_re = re.compile("|".join(re.escape(s) for s in starts))
        self._starts = starts
        self._first_chars = {s[0] for s in starts}
        self._longest = max(len(s) for s in starts)

        self._mode = _TEXT
        self._pending = ""
        self._opener: _Opener | None = None
        self._block = ""
        self._search_from = 0
        self._at_start = True  # nothing visible has been emitted yet
        self._after_block = False  # whitespace right after a block is dropped, not shown
        self._bare: BareJson | None = None
        self._used_ids: set[str] = set()
        self._counter = 0
        self.calls_proposed = 0
        self.calls_malformed = 0
        if in_thinking and think_start and think_end:
            self._mode = _THINK
            self._opener = self._openers[think_start]
        self._finished = False

    # -- public -------------------------------------------------------------------------------

    def feed(self, text: str) -> list[EngineEvent]:
        """Take the next chunk of reply text; return the events it completes."""
        if not text or self._finished:
            return []
        if (
            self._mode == _TEXT
            and not self._pending
            and not self._at_start
            and not self._after_block
            and self._first_chars.isdisjoint(text)
        ):
            return [TextDelta(text)]  # the common case: plain text, nothing that could start a marker
        out: list[EngineEvent] = []
        if text:
            self._pending += text
            self._process(out, final=False)
        return _merge(out) if len(out) > 1 else out

    def finish(self) -> list[EngineEvent]:
        """The reply is over: flush held text, close open blocks (unclosed ones are malformed)."""
        out: list[EngineEvent] = []
        if self._finished:
            return out
        self._process(out, final=True)
        self._finished = True
        if self._mode == _TEXT:
            if self._pending and not (self._after_block and self._pending.isspace()):
                out.append(TextDelta(self._pending))
        elif self._mode == _THINK:
            if self._pending:
                out.append(ThinkingDelta(self._pending))
        elif self._mode == _BLOCK:
            assert self._opener is not None
            self._block += self._pending
            if self._opener.end:
                raw = self._opener.start + self._block
                reason = f"unclosed {self._opener.start} block: the reply ended before {self._opener.end}"
                out.append(self._malformed(raw, reason))
            else:
                out.extend(self._parse_block(self._opener, self._block))
        elif self._mode == _BARE:
            assert self._bare is not None
            self._bare.feed(self._pending)
            out.extend(self._finish_bare(self._bare))
        self._pending = ""
        return _merge(out)

    def validate(self, call: Any, raw: str | None = None) -> ToolCallProposed | ToolCallMalformed:
        """Check a call parsed elsewhere (e.g. an OpenAI ``tool_calls`` entry) with this reply's rules and ids."""
        return self._validate(call, raw if raw is not None else _dump(call))

    # -- the state machine ----------------------------------------------------------------------

    def _process(self, out: list[EngineEvent], final: bool) -> None:
        while True:
            if self._mode == _TEXT:
                progressed = self._advance_text(out, final)
            elif self._mode == _THINK:
                progressed = self._advance_think(out, final)
            elif self._mode == _BLOCK:
                progressed = self._advance_block(out)
            else:
                progressed = self._advance_bare(out)
            if not progressed:
                return

    def _advance_text(self, out: list[EngineEvent], final: bool) -> bool:
        pending = self._pending
        if not pending:
            return False
        if self._at_start:
            stripped = pending.lstrip()
            if stripped.startswith("{"):
                self._mode = _BARE
                self._bare = BareJson(pending)
                self._pending = ""
                return True
        match = self._opener_re.search(pending)
        if match:
            before = pending[: match.start()]
            if before and not ((self._at_start or self._after_block) and before.isspace()):
                self._show(out, before)
            opener = self._openers[match.group(0)]
            self._opener = opener
            self._pending = pending[match.end() :]
            self._after_block = False
            if opener.kind == "think":
                self._mode = _THINK
            else:
                self._mode = _BLOCK
                self._block = ""
                self._search_from = 0
                self._at_start = False
            return True
        hold = 0 if final else self._marker_prefix_len(pending)
        visible = pending[: len(pending) - hold]
        if not visible or ((self._at_start or self._after_block) and visible.isspace()):
            return False  # keep whitespace until we know what follows it
        self._show(out, visible)
        self._pending = pending[len(visible) :]
        self._after_block = False
        return False

    def _show(self, out: list[EngineEvent], text: str) -> None:
        if self._at_start and self._after_block:
            text = text.lstrip()  # the answer after a thinking block starts at its first word
        out.append(TextDelta(text))
        self._at_start = False

    def _advance_think(self, out: list[EngineEvent], final: bool) -> bool:
        assert self._opener is not None
        end = self._opener.end
        pending = self._pending
        index = pending.find(end)
        if index >= 0:
            if index:
                out.append(ThinkingDelta(pending[:index]))
            self._pending = pending[index + len(end) :]
            self._mode = _TEXT
            self._after_block = True
            return True
        hold = 0 if final else _suffix_prefix_len(pending, end)
        if len(pending) > hold:
            out.append(ThinkingDelta(pending[: len(pending) - hold]))
            self._pending = pending[len(pending) - hold :]
        return False

    def _advance_block(self, out: list[EngineEvent]) -> bool:
        assert self._opener is not None
        self._block += self._pending
        self._pending = ""
        end = self._opener.end
        if not end:
            return False
        index = self._block.find(end, self._search_from)
        if index < 0:
            self._search_from = max(0, len(self._block) - len(end) + 1)
            return False
        content, rest = self._block[:index], self._block[index + len(end) :]
        out.extend(self._parse_block(self._opener, content))
        self._block = ""
        self._pending = rest
        self._mode = _TEXT
        self._after_block = True
        return True

    def _advance_bare(self, out: list[EngineEvent]) -> bool:
        bare = self._bare
        assert bare is not None
        bare.feed(self._pending)
        self._pending = ""
        if not bare.rejected:
            return False
        # Not a reply made only of tool-call objects: all of it is text (markers in it still count).
        self._bare = None
        self._mode = _TEXT
        self._at_start = False
        self._pending = bare.text
        return True

    def _marker_prefix_len(self, text: str) -> int:
        """Length of the longest tail of ``text`` that is a proper prefix of some opener."""
        first = max(0, len(text) - self._longest + 1)
        for i in range(first, len(text)):
            if text[i] in self._first_chars:
                tail = text[i:]
                if any(len(s) > len(tail) and s.startswith(tail) for s in self._starts):
                    return len(text) - i
        return 0

    # -- parsing blocks -------------------------------------------------------------------------

    def _parse_block(self, opener: _Opener, content: str) -> list[EngineEvent]:
        raw = opener.start + content + opener.end
        try:
            if opener.kind == "native" and self._tool_parser is not None:
                try:
                    items = _as_list(self._tool_parser(content, self._tools))
                except Exception as exc:  # the tokenizer's parser: any failure means "not parseable"
                    items = parse_any(content, exc)
            elif opener.kind == "tool_use":
                items = parse_tool_use(content)
            elif opener.kind == "mistral":
                items = parse_mistral(content)
            else:
                items = parse_any(content, None)
        except Exception as exc:  # a parser failing in any way means the block is malformed
            return [self._malformed(raw, str(exc) or type(exc).__name__)]
        if not items:
            return [self._malformed(raw, "empty tool call")]
        single = len(items) == 1
        return [self._validate(item, raw if single else _dump(item)) for item in items]

    def _finish_bare(self, bare: BareJson) -> list[EngineEvent]:
        events: list[EngineEvent] = []
        if bare.open_object is not None:
            partial = bare.open_object
            if not bare.objects and not re.match(r'\{\s*"(name|function|type)"', partial):
                return [TextDelta(bare.text)]  # plain text that happens to start with "{"
            events.extend(self._validate(obj, raw) for raw, obj in bare.objects)
            events.append(self._malformed(partial, "incomplete JSON tool call: the reply ended inside it"))
            return events
        if not bare.objects:
            return [TextDelta(bare.text)] if bare.text and not bare.text.isspace() else []
        return [self._validate(obj, raw) for raw, obj in bare.objects]

    def _validate(self, item: Any, raw: str) -> ToolCallProposed | ToolCallMalformed:
        server = None
        if isinstance(item, ServerCall):
            server, item = item.server, item.call
        if not isinstance(item, dict):
            return self._malformed(raw, f'expected a JSON object with "name" and "arguments", got {_kind(item)}')
        given_id = item.get("id")
        if isinstance(item.get("function"), dict):
            item = item["function"]
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            return self._malformed(raw, 'tool call has no "name"', given_id)
        name = name.strip()
        arguments = next((item[k] for k in CALL_KEYS if k in item), {})
        if isinstance(arguments, str):
            if not arguments.strip():
                arguments = {}
            else:
                try:
                    arguments = json.loads(arguments)
                except json.JSONDecodeError as exc:
                    return self._malformed(raw, f"arguments are not valid JSON: {json_error(exc)}", given_id)
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return self._malformed(raw, f"arguments must be a JSON object, got {_kind(arguments)}", given_id)
        resolved = self._resolve_name(name, server)
        if resolved is None:
            where = f" (server '{server}')" if server else ""
            return self._malformed(raw, f"unknown tool '{name}'{where}", given_id)
        self.calls_proposed += 1
        return ToolCallProposed(self._take_id(given_id), resolved, arguments)

    def _resolve_name(self, name: str, server: str | None) -> str | None:
        known = self.known_tools
        if known is None or name in known:
            return name
        if server:
            qualified = _NAME_UNSAFE.sub("_", f"{server}__{name}")[:64]
            if qualified in known:
                return qualified
        return None

    def _malformed(self, raw: str, reason: str, given_id: Any = None) -> ToolCallMalformed:
        self.calls_malformed += 1
        return ToolCallMalformed(self._take_id(given_id), raw, reason)

    def _take_id(self, given: Any) -> str:
        if isinstance(given, str) and given and given not in self._used_ids:
            self._used_ids.add(given)
            return given
        while True:
            self._counter += 1
            candidate = f"call_{self._counter}"
            if candidate not in self._used_ids:
                self._used_ids.add(candidate)
                return candidate


def parse_tool_calls(text: str, known_tools: set[str] | None = None, **markers: Any) -> ParsedReply:
    """Split a whole reply into text, thinking and tool calls (``markers`` as for ``ToolCallStream``)."""
    stream = ToolCallStream(known_tools, **markers)
    reply = ParsedReply()
    for event in [*stream.feed(text), *stream.finish()]:
        if isinstance(event, TextDelta):
            reply.text += event.text
        elif isinstance(event, ThinkingDelta):
            reply.thinking += event.text
        else:
            reply.calls.append(event)  # type: ignore[arg-type]
    return reply


# -- small helpers ----------------------------------------------------------------------------


def _as_list(parsed: Any) -> list:
    return parsed if isinstance(parsed, list) else [parsed]


def _suffix_prefix_len(text: str, marker: str) -> int:
    for size in range(min(len(marker) - 1, len(text)), 0, -1):
        if marker.startswith(text[-size:]):
            return size
    return 0


def _kind(value: Any) -> str:
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


def _dump(item: Any) -> str:
    if isinstance(item, ServerCall):
        item = item.call
    try:
        return json.dumps(item, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(item)


def _merge(events: list[EngineEvent]) -> list[EngineEvent]:
    """Join neighbouring text (and thinking) pieces so consumers get fewer, larger deltas."""
    merged: list[EngineEvent] = []
    for event in events:
        last = merged[-1] if merged else None
        if isinstance(event, TextDelta) and isinstance(last, TextDelta):
            merged[-1] = TextDelta(last.text + event.text)
        elif isinstance(event, ThinkingDelta) and isinstance(last, ThinkingDelta):
            merged[-1] = ThinkingDelta(last.text + event.text)
        else:
            merged.append(event)
    return merged
