"""Calls written as loose JSON inside a reply: the part of ``ToolCallStream`` that follows line starts.

At a line start outside a code block, a ```` ```json ```` (or ``tool_call``, or bare) fence, or
``{`` / ``[``, begins a run of loose JSON (engine/jsonrun.py decides whether it is calls); any
other fence is code shown as text, and nothing inside it is read as loose JSON. Only while tools
are offered. A mixin: the stream's state and its ``_show`` live in engine/toolcalls.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp_chat_tui.engine.callcheck import CallChecker, call_shaped, dump_call
from mcp_chat_tui.engine.events import EngineEvent
from mcp_chat_tui.engine.jsonrun import (
    CALL_FENCE_INFOS,
    CLOSED,
    DATA,
    ENDED,
    FENCE,
    OPEN,
    JsonRun,
    could_be_call_fence,
)

TEXT, RUN = "text", "run"
INDENT = " \t"


@dataclass(frozen=True)
class _LineEvent:
    """What a line start in the pending text holds: loose JSON, a fence that may hold calls, or text
    that cannot be decided yet (``kind`` "json", "fence" or "hold"); ``body`` is where a fence's content starts."""

    at: int
    kind: str
    body: int = 0


class LooseCalls:
    """Line starts, fences and runs of loose JSON, for ``ToolCallStream``."""

    known_tools: set[str] | None
    _check: CallChecker
    _loose: bool  # tools are offered: loose JSON may be calls
    _mode: str
    _pending: str
    _at_start: bool
    _after_block: bool
    _line_start: bool
    _in_code: bool
    _run: JsonRun | None
    _fence_line: str
    _run_shown: int
    _run_lead: str
    _show: Callable[[list[EngineEvent], str], None]  # the stream's: text given on

    def _line_event(self, pending: str, limit: int, final: bool) -> _LineEvent | None:
        """The first line start before ``limit`` that holds loose JSON, a fence that may hold calls, or
        that cannot be decided yet; fences of code shown as text are passed (and followed) on the way."""
        at = 0 if self._line_start else pending.find("\n") + 1
        while 0 < at <= limit or (at == 0 and self._line_start and limit > 0):
            first = at + len(pending[at:]) - len(pending[at:].lstrip(INDENT))
            event = self._line_at(pending, at, first, final)
            if event is not None:
                return event
            newline = pending.find("\n", at)
            if newline < 0:
                return None
            at = newline + 1
        return None

    def _line_at(self, pending: str, at: int, first: int, final: bool) -> _LineEvent | None:
        if first == len(pending):
            return None if final else _LineEvent(at, "hold")
        head = pending[first : first + len(FENCE)]
        if head != FENCE:
            if FENCE.startswith(head) and first + len(head) == len(pending) and not final:
                return _LineEvent(at, "hold")
            if head[0] in "{[" and self._loose and not self._in_code:
                return _LineEvent(at, "json")
            return None
        newline = pending.find("\n", first)
        info = pending[first + len(FENCE) : newline if newline >= 0 else len(pending)]
        if not self._in_code and self._loose:
            if newline >= 0 and info.strip().lower() in CALL_FENCE_INFOS:
                return _LineEvent(at, "fence", newline + 1)
            if newline < 0 and could_be_call_fence(info) and not final:
                return _LineEvent(at, "hold")
        self._in_code = not self._in_code  # a fence of code shown as text
        return None

    def _start_run(self, pending: str, line: _LineEvent) -> None:
        fenced = line.kind == "fence"
        self._run = JsonRun(lambda value: call_shaped(value, self.known_tools), fenced=fenced)
        self._fence_line = pending[line.at : line.body] if fenced else ""
        self._pending = pending[line.body :] if fenced else pending[line.at :]
        self._run_shown = 0
        self._mode = RUN

    def _advance_run(self, out: list[EngineEvent]) -> bool:
        run = self._run
        assert run is not None
        run.feed(self._pending)
        self._pending = ""
        out.extend(self._calls(run.take()))
        if run.outcome == OPEN:
            return False
        if run.outcome == DATA:
            self._show_data(out, run, run.scanned)
            return False
        if run.outcome == ENDED:
            self._show_data(out, run, run.rest)
            self._leave_run(run.text[run.rest :], after_calls=bool(run.values) and run.shown == run.rest)
            return True
        if run.outcome == CLOSED and run.values:
            self._leave_run(run.text[run.rest :], after_calls=True)
            return True
        self._give_back(out, run)
        return True

    def _show_data(self, out: list[EngineEvent], run: JsonRun, end: int) -> None:
        """Show a JSON value that is no call as it streams, up to ``end``."""
        start = max(self._run_shown, run.shown)
        if end > start:
            self._show_run(out, run.text[start:end])
            self._run_shown = end

    def _show_run(self, out: list[EngineEvent], text: str) -> None:
        """Show text of a run that is not calls, after the whitespace held before it."""
        lead, self._run_lead = self._run_lead, ""
        self._show(out, lead + text)

    def _give_back(self, out: list[EngineEvent], run: JsonRun) -> None:
        """The run is not calls: a fence is shown as code, loose JSON as written; the rest is read again."""
        if run.fenced:
            self._show_run(out, self._fence_line)
            self._in_code = True
            self._leave_run(run.text, after_calls=False)
            return
        self._show_run(out, run.text[run.shown : run.rest])
        self._leave_run(run.text[run.rest :], after_calls=False)
        self._line_start = False  # what is read again from here cannot start the same run
        self._at_start = False

    def _leave_run(self, rest: str, *, after_calls: bool) -> None:
        self._run = None
        self._mode = TEXT
        self._pending = rest
        if after_calls:
            self._run_lead = ""
            self._after_block = True
            self._line_start = True

    def _finish_run(self, out: list[EngineEvent]) -> None:
        run = self._run
        assert run is not None
        run.finish()
        out.extend(self._calls(run.take()))
        if run.outcome == DATA:
            self._show_data(out, run, len(run.text))
        elif run.open_value is not None and run.looks_like_call:
            out.append(self._check.malformed(run.open_value, "incomplete JSON tool call: the reply ended inside it"))
        elif run.fenced and not run.values:
            self._show_run(out, self._fence_line + run.text)
        elif run.held.strip():
            self._show_run(out, run.held)

    def _calls(self, found: list[tuple[str, Any]]) -> list[EngineEvent]:
        events: list[EngineEvent] = []
        for raw, value in found:
            items = value if isinstance(value, list) else [value]
            events.extend(self._check.check(item, raw if len(items) == 1 else dump_call(item)) for item in items)
        return events
