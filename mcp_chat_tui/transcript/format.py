"""Read a transcript written by ``transcript/render.py`` back exactly.

The layout, the markers and the optional JSON after them: docs/transcript-format.md.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.core.content import ContentPart
from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.core.paths import media_folder
from mcp_chat_tui.core.progress import ToolProgress
from mcp_chat_tui.core.tasks import TaskState
from mcp_chat_tui.core.tools import CutForModel
from mcp_chat_tui.transcript.markers import (
    ASSISTANT,
    ATTACHMENT,
    EXPECTED,
    PROPOSAL,
    RESULT,
    SERVER_REQUEST,
    SUMMARY,
    THOUGHT,
    USER,
    decode_unholdable,
    known_marker,
    marker_like,
    unescape_line,
    unescape_name,
)
from mcp_chat_tui.transcript.model import (
    CHOICES,
    STATUSES,
    Exchange,
    Proposal,
    ServerRequest,
    Step,
    ToolResult,
    Transcript,
)
from mcp_chat_tui.transcript.render import has_content, render, render_exchange


class TranscriptError(UserFacingError):
    """A transcript file that cannot be read: names the line and what was expected."""

    exit_code = 2

    def __init__(self, path: object, line: int | None, problem: str) -> None:
        self.line = line
        super().__init__(f"{path}: line {line}: {problem}" if line is not None else f"{path}: {problem}")


# ----- reading -------------------------------------------------------------------------------

# Linear in the line's length by construction (a file may hold a 1 MB line): possessive runs
# (``*+``) never give back what they took, so two runs that could take the same characters (the
# spaces before and after an optional part) are never tried against each other.
_RESULT_HEADER = re.compile(r"^\s*+\[((?:\\.|[^\]\\])*+)\]\[((?:\\.|[^\]\\])*+)\]\s*+(\{.*\})?\s*+$")
_PROPOSAL_LINE = re.compile(r"^(?:\[([^\]]*+)\])?\s*+`(.*)`(?:\s*+(\{[^`]*\}))?\s*+$")
_MODEL = re.compile(r"^\[((?:\\.|[^\]\\])*+)\]\s*+(\{.*\})?\s*+$")
_FENCE = re.compile(r"^(`{3,}+)\s*+$")
_RESULT_FENCE = re.compile(r"^(`{3,}+)(\w*+)\s*+$")
_INLINE_RESULT = re.compile(r"^`(.*)`\s*+$")


def _json(text: str) -> Any:
    """``json.loads``, with JSON nested too deeply for Python (``RecursionError``) a ``ValueError`` like any bad JSON."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None


def reply_model(header: str) -> str:
    """The model named by a reply's header (the text after ``🤖:``), without the reply's details."""
    match = _MODEL.match(header)
    return unescape_name(match.group(1)) if match else header.strip()


def parse(text: str, path: object = "transcript") -> Transcript:
    """Read a transcript; any problem is a ``TranscriptError`` naming the line."""
    return _Reader(text, path).read()


class _Reader:
    def __init__(self, text: str, path: object) -> None:
        lines = decode_unholdable(text).split("\n")
        if text.endswith("\n"):
            lines.pop()
        self.lines = lines
        self.path = path
        self.index = 0
        self.transcript = Transcript()

    def fail(self, problem: str, index: int | None = None) -> TranscriptError:
        return TranscriptError(self.path, (self.index if index is None else index) + 1, problem)

    def read(self) -> Transcript:
        while self.index < len(self.lines) and not self.lines[self.index].strip():
            self.index += 1
        while self.index < len(self.lines):
            line = self.lines[self.index]
            marker = self._marker(line)
            if marker == USER:
                self.transcript.exchanges.append(Exchange(user=self._text_block(USER)))
            elif marker is None and not self.transcript.exchanges:
                raise self.fail(f"expected a 💬: line to start the conversation, found {line[:40]!r}")
            elif marker == ATTACHMENT:
                self._attachment()
            elif marker == ASSISTANT:
                self._assistant()
            elif marker == SUMMARY:
                self._exchange(SUMMARY).summary = self._text_block(SUMMARY)
            elif marker is None and not line.strip():
                self.index += 1
            else:
                raise self.fail(f"{marker or line[:40]!r} is not expected here; expected 💬: or 🤖:")
        return self.transcript

    def _marker(self, line: str) -> str | None:
        if not line or (line[0] < "\x80" and line[0] not in "^`"):
            return None  # most lines: plain text (an ASCII marker-like symbol is only ^ or `)
        marker = marker_like(line)
        if marker is not None and known_marker(line) is None:
            raise self.fail(f"unknown marker {marker!r}; expected one of {EXPECTED} (or escape the line with \\)")
        return known_marker(line)

    def _exchange(self, marker: str) -> Exchange:
        if not self.transcript.exchanges:
            raise self.fail(f"{marker} before any 💬: prompt")
        return self.transcript.exchanges[-1]

    def _text_block(self, marker: str) -> str:
        """A block from its marker to the next marker line, minus the blank separator line."""
        first = self.lines[self.index][len(marker) :]
        body = [first[1:] if first.startswith(" ") else first]
        self.index += 1
        while self.index < len(self.lines) and self._marker(self.lines[self.index]) is None:
            body.append(self.lines[self.index])
            self.index += 1
        return _join(body)

    def _plain_text(self) -> str:
        body = []
        while self.index < len(self.lines) and self._marker(self.lines[self.index]) is None:
            body.append(self.lines[self.index])
            self.index += 1
        return _join(body)

    def _assistant(self) -> None:
        exchange = self._exchange(ASSISTANT)
        if exchange.model is not None:
            raise self.fail("a second 🤖: in one exchange; expected 💬: before it")
        header = self.lines[self.index][len(ASSISTANT) :]
        match = _MODEL.match(header)
        exchange.model = reply_model(header)
        if match and match.group(2):
            exchange.take_reply_meta(self._meta(match.group(2), "🤖:[model]"))
        self.index += 1
        step = Step()
        exchange.steps.append(step)
        after_calls = False
        while self.index < len(self.lines):
            line = self.lines[self.index]
            marker = self._marker(line)
            if marker in (USER, SUMMARY, ASSISTANT, ATTACHMENT):
                break
            if marker == THOUGHT:
                if after_calls or step.text:
                    step = Step()
                    exchange.steps.append(step)
                    after_calls = False
                step.thought = self._thought()
            elif marker == PROPOSAL:
                if any(p.result is not None for p in step.proposals):
                    step = Step()
                    exchange.steps.append(step)
                step.proposals.append(self._proposal(line))
                after_calls = True
                self.index += 1
            elif marker == RESULT:
                self._result(exchange)
                after_calls = True
            elif marker == SERVER_REQUEST:
                step.requests.append(self._server_request(line))
                self.index += 1
            elif not line.strip():
                self.index += 1  # blank lines between blocks (text never starts with one unescaped)
            else:
                text = self._plain_text()
                if after_calls or step.text:
                    step = Step()
                    exchange.steps.append(step)
                    after_calls = False
                step.text = text
        if len(exchange.steps) > 1 and not has_content(exchange.steps[0]):
            exchange.steps.pop(0)

    def _attachment(self) -> None:
        """``📎: {header}`` and its fenced text, right after the prompt it goes with."""
        exchange = self._exchange(ATTACHMENT)
        if exchange.model is not None:
            raise self.fail("a 📎: attachment after the reply; it goes right after its 💬: prompt")
        header = self.lines[self.index][len(ATTACHMENT) :].strip()
        try:
            meta = _json(header) if header else None
            if not isinstance(meta, dict):
                raise ValueError("not a JSON object")
            attachment = Attachment.from_json(meta, folder=self._folder())
        except ValueError as exc:
            raise self.fail(f'a 📎: line needs a JSON object such as {{"kind": "resource", ...}} ({exc})') from None
        self.index += 1
        fence_match = _FENCE.match(self.lines[self.index]) if self.index < len(self.lines) else None
        if fence_match is not None:
            fence = fence_match.group(1)
            attachment = Attachment.from_json(
                meta, self._fenced_body(fence, f"the attachment's text has no closing {fence}"), self._folder()
            )
        exchange.attachments.append(attachment)

    def _thought(self) -> str:
        first = self.lines[self.index][len(THOUGHT) :]
        body = [first[1:] if first.startswith(" ") else first]
        self.index += 1
        while self.index < len(self.lines) and self.lines[self.index]:
            if self._marker(self.lines[self.index]) is not None:
                break
            body.append(self.lines[self.index])
            self.index += 1
        if self.index < len(self.lines) and not self.lines[self.index]:
            self.index += 1
        return "\n".join(unescape_line(line) for line in body)

    def _proposal(self, line: str) -> Proposal:
        match = _PROPOSAL_LINE.match(line[len(PROPOSAL) :])
        if match is None:
            raise self.fail("a ❓: line needs the call as JSON in backticks: ❓:[choice] `{...}`")
        choice = match.group(1) or None
        if choice is not None and choice not in CHOICES:
            raise self.fail(f"unknown choice [{choice}]; expected one of {', '.join(CHOICES)}")
        try:
            call = _json(match.group(2))
        except json.JSONDecodeError as exc:
            raise self.fail(f"the proposal's JSON is broken ({exc.msg} at column {exc.colno})") from None
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str) or "id" not in call:
            raise self.fail(
                'a proposal needs {"id": ..., "type": "function", "function": {"name": ..., "arguments": ...}}'
            )
        meta = self._meta(match.group(3), "❓: `{...}`") if match.group(3) else {}
        return Proposal(
            call=call,
            choice=choice,
            proposed_at=self._time(meta, "proposed"),
            started_at=self._time(meta, "started"),
            server=str(meta.get("server", "")),
            allowed_by=str(meta.get("allowed_by", "")),
            ran_with=meta["ran_with"] if isinstance(meta.get("ran_with"), dict) else None,
            tool=str(meta.get("tool", "")),
            run_unsaved=meta.get("run_unsaved") is True,
            task_id=meta["task"] if isinstance(meta.get("task"), str) else "",
        )

    def _server_request(self, line: str) -> ServerRequest:
        record = self._meta(line[len(SERVER_REQUEST) :].strip(), "📨:")
        request, result = record.get("request", {}), record.get("result", {})
        if not isinstance(record.get("server"), str) or not isinstance(request, dict) or not isinstance(result, dict):
            raise self.fail('a 📨: line needs {"server": ..., "kind": ..., "request": {...}, "result": {...}}')
        return ServerRequest(
            server=record["server"],
            kind=str(record.get("kind", "")),
            request=request,
            answer=str(record.get("answer", "")),
            result=result,
            at=self._time(record, "at"),
        )

    def _meta(self, text: str, after: str) -> dict[str, Any]:
        try:
            meta = _json(text)
        except ValueError:
            meta = None
        if not isinstance(meta, dict):
            raise self.fail(f"the details after {after} are not a JSON object")
        return meta

    def _time(self, meta: dict[str, Any], key: str) -> datetime | None:
        value = meta.get(key)
        if value is None:
            return None
        try:
            return datetime.fromisoformat(str(value))
        except ValueError:
            raise self.fail(f"{key!r} is not a time (expected e.g. 2026-01-31T12:00:00)") from None

    def _result(self, exchange: Exchange) -> None:
        header_index = self.index
        name, call_id, meta = self._result_header()
        status, content = self._result_body(call_id, header_index)
        proposal = _open_proposal(exchange, call_id)
        if proposal is None:
            raise self.fail(f"a result for call {call_id!r} without its ❓: proposal before it", header_index)
        duration = meta.get("duration")
        proposal.result = ToolResult(
            name=name,
            call_id=call_id,
            status=status,
            content=content,
            server=str(meta.get("server", "")),
            duration=float(duration) if isinstance(duration, (int, float)) else None,
            tool=str(meta.get("tool", "")),
            parts=self._parts(meta.get("parts")),
            structured=meta["structured"] if isinstance(meta.get("structured"), dict) else None,
            progress=ToolProgress.from_json(meta.get("progress")),
            cut=CutForModel.from_json(meta.get("cut"), len(content)),
            repeat_of=str(meta.get("repeat_of", "")),
            task=TaskState.from_json(meta.get("task")),
        )

    def _result_header(self) -> tuple[str, str, dict[str, Any]]:
        """The tool, the call id and the details of a ``🛠️:`` line; moves past it."""
        match = _RESULT_HEADER.match(self.lines[self.index][len(RESULT) :])
        if match is None:
            raise self.fail("a 🛠️: line needs the tool and the call id: 🛠️: [tool][call-id]")
        name, call_id = unescape_name(match.group(1)), unescape_name(match.group(2))
        meta: dict[str, Any] = {}
        if match.group(3):
            try:
                meta = _json(match.group(3))
            except ValueError:
                raise self.fail("the details after 🛠️: [tool][call-id] are not valid JSON") from None
        self.index += 1
        return name, call_id, meta

    def _result_body(self, call_id: str, header_index: int) -> tuple[str, str]:
        """The status and content of a result: a fenced block (its info string is the status) or,
        hand-written, one inline code span; moves past it."""
        while self.index < len(self.lines) and not self.lines[self.index].strip():
            self.index += 1  # hand-written files (document 000's example) put a blank line here
        fence_line = self.lines[self.index] if self.index < len(self.lines) else ""
        fence_match = _RESULT_FENCE.match(fence_line)
        inline = _INLINE_RESULT.match(fence_line)
        if fence_match is None and inline is not None:
            self.index += 1
            return "done", inline.group(1)
        if fence_match is None:
            raise self.fail("expected the result in a fenced block (``` on its own line) after the 🛠️: line")
        fence, status = fence_match.group(1), fence_match.group(2) or "done"
        if status not in STATUSES:
            raise self.fail(f"unknown result status {status!r}; expected one of {', '.join(STATUSES)}")
        return status, self._fenced_body(fence, f"the result of {call_id!r} has no closing {fence}", header_index)

    def _fenced_body(self, fence: str, unclosed: str, reported_at: int | None = None) -> str:
        """The lines from after the opening fence at ``self.index`` to its closing ``fence``, read past.

        Args:
            unclosed: The problem reported when the file ends first.
            reported_at: The line the problem names (default: the opening fence's).
        """
        start = self.index
        self.index += 1
        body: list[str] = []
        while self.index < len(self.lines) and self.lines[self.index].rstrip() != fence:
            body.append(self.lines[self.index])
            self.index += 1
        if self.index >= len(self.lines):
            raise self.fail(unclosed, start if reported_at is None else reported_at)
        self.index += 1
        return "\n".join(body)

    def _parts(self, entries: object) -> list[ContentPart]:
        """The blocks a result header keeps; media files are found beside the transcript file."""
        if not isinstance(entries, list):
            return []
        parts = [ContentPart.from_json(entry, self._folder()) for entry in entries]
        return [part for part in parts if part is not None]

    def _folder(self) -> str:
        """The conversation's media folder, where the media files its records name are ("" for text)."""
        return str(media_folder(self.path)) if isinstance(self.path, Path) else ""


def _join(body: list[str]) -> str:
    text = "\n".join(unescape_line(line) for line in body)
    return text[:-1] if text.endswith("\n") else text


def _open_proposal(exchange: Exchange, call_id: str) -> Proposal | None:
    """The latest proposal of ``call_id`` in ``exchange`` that has no result yet."""
    return next(
        (p for step in reversed(exchange.steps) for p in step.proposals if p.call_id == call_id and p.result is None),
        None,
    )


__all__ = ["TranscriptError", "parse", "render", "render_exchange"]
