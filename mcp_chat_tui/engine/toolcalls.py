"""Recognise tool calls and thinking in model text while it streams. Pure Python, used by every engine.

``ToolCallStream`` is fed text chunks and returns ``TextDelta``, ``ThinkingDelta``,
``ToolCallProposed`` and ``ToolCallMalformed`` events, holding text back only while it could
still be part of a call. The formats it reads: docs/architecture.md, "Recognising tool calls".
Marked blocks (``<tool_call>``, the tokenizer's own markers, ...) are found anywhere; loose JSON
(engine/jsonrun.py: a ```` ```json ```` fence, JSON standing alone on its lines) only at a line
start outside code blocks, and only while tools are offered.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from mcp_chat_tui.engine.callcheck import CallChecker, dump_call
from mcp_chat_tui.engine.callformats import parse_any, parse_mistral, parse_tool_use
from mcp_chat_tui.engine.events import (
    EngineEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallMalformed,
    ToolCallProposed,
)
from mcp_chat_tui.engine.jsonrun import JsonRun
from mcp_chat_tui.engine.loosecalls import INDENT, RUN, TEXT, LooseCalls

ToolParser = Callable[[str, Any], Any]

_TEXT, _THINK, _BLOCK, _RUN = TEXT, "think", "block", RUN


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


class ToolCallStream(LooseCalls):
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
        self._check = CallChecker(self.known_tools)
        self._loose = self.known_tools is None or bool(self.known_tools)  # loose JSON only while tools are offered
        self._tools = tools
        self._tool_parser = tool_parser
        self._openers = _openers(think_start, think_end, tool_call_start, tool_call_end)
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
        self._line_start = True  # the pending text begins a line (only indentation before it on its line)
        self._in_code = False  # inside a fenced code block shown as text: no loose JSON is read there
        self._run: JsonRun | None = None
        self._fence_line = ""  # the opening line of the fence the run reads
        self._run_shown = 0  # how much of a run's text is shown (a JSON value that is not a call streams)
        self._run_lead = ""  # whitespace before the run, dropped if it is calls, shown if it is text
        if in_thinking and think_start and think_end:
            self._mode = _THINK
            self._opener = self._openers[think_start]
        self._finished = False

    @property
    def markers(self) -> set[str]:
        """Every marker this recogniser reads (an engine must not drop these as special tokens)."""
        return {marker for o in self._openers.values() for marker in (o.start, o.end) if marker}

    @property
    def calls_proposed(self) -> int:
        return self._check.calls_proposed

    @property
    def calls_malformed(self) -> int:
        return self._check.calls_malformed

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
            and not self._line_start
            and "\n" not in text
            and self._first_chars.isdisjoint(text)
        ):
            return [TextDelta(text)]  # the common case: plain text within a line, nothing that could start a call
        out: list[EngineEvent] = []
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
                self._show(out, self._pending)
        elif self._mode == _THINK:
            if self._pending:
                out.append(ThinkingDelta(self._pending))
        elif self._mode == _BLOCK:
            assert self._opener is not None
            self._block += self._pending
            if self._opener.end:
                raw = self._opener.start + self._block
                reason = f"unclosed {self._opener.start} block: the reply ended before {self._opener.end}"
                out.append(self._check.malformed(raw, reason))
            else:
                out.extend(self._parse_block(self._opener, self._block))
        elif self._mode == _RUN:
            self._finish_run(out)
        self._pending = ""
        return _merge(out)

    def validate(self, call: Any, raw: str | None = None) -> ToolCallProposed | ToolCallMalformed:
        """Check a call parsed elsewhere (e.g. an OpenAI ``tool_calls`` entry) with this reply's rules and ids."""
        return self._check.check(call, raw if raw is not None else dump_call(call))

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
                progressed = self._advance_run(out)
            if not progressed:
                return

    def _advance_text(self, out: list[EngineEvent], final: bool) -> bool:
        pending = self._pending
        if not pending:
            return False
        match = self._opener_re.search(pending)
        limit = match.start() if match else len(pending)
        line = self._line_event(pending, limit, final)
        if line is not None and line.kind != "hold":
            before = pending[: line.at]
            self._run_lead = before if before.isspace() and (self._at_start or self._after_block) else ""
            self._show_before(out, before)
            self._start_run(pending, line)
            return True
        if match and line is None:
            self._show_before(out, pending[: match.start()])
            self._open_block(self._openers[match.group(0)], pending[match.end() :])
            return True
        hold = 0 if final else self._marker_prefix_len(pending)
        end = len(pending) - hold
        if line is not None:
            end = min(end, line.at)
        visible = pending[:end]
        if not visible or ((self._at_start or self._after_block) and visible.isspace()):
            return False  # keep whitespace until we know what follows it
        self._show(out, visible)
        self._pending = pending[end:]
        return False

    def _show_before(self, out: list[EngineEvent], before: str) -> None:
        """The text before a block or run, unless it is only whitespace at the start or after a block."""
        if before and not ((self._at_start or self._after_block) and before.isspace()):
            self._show(out, before)

    def _show(self, out: list[EngineEvent], text: str) -> None:
        if self._at_start and self._after_block:
            text = text.lstrip()  # the answer after a thinking block starts at its first word
        if text:
            out.append(TextDelta(text))
            self._at_start = False
        self._after_block = False
        self._passed(text)

    def _passed(self, text: str) -> None:
        """Note where the text given on leaves the line."""
        newline = text.rfind("\n")
        tail = text[newline + 1 :]
        self._line_start = (newline >= 0 or self._line_start) and not tail.strip(INDENT)

    def _open_block(self, opener: _Opener, rest: str) -> None:
        self._opener = opener
        self._pending = rest
        self._after_block = False
        if opener.kind == "think":
            self._mode = _THINK
        else:
            self._mode = _BLOCK
            self._block = ""
            self._search_from = 0
            self._at_start = False

    # -- thinking and marked blocks -------------------------------------------------------------

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
            self._after_block = self._line_start = True
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
        self._after_block = self._line_start = True
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
            return [self._check.malformed(raw, str(exc) or type(exc).__name__)]
        if not items:
            return [self._check.malformed(raw, "empty tool call")]
        single = len(items) == 1
        return [self._check.check(item, raw if single else dump_call(item)) for item in items]


def _openers(
    think_start: str | None, think_end: str | None, tool_call_start: str | None, tool_call_end: str | None
) -> dict[str, _Opener]:
    """The markers that open a block, by their text: thinking, the tokenizer's own, then the fallbacks."""
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
    return {o.start: o for o in openers}


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
