"""Write a ``Transcript`` as Markdown with Parley's markers (read back by ``transcript/format.py``).

The layout, the markers and the optional JSON after them: docs/transcript-format.md.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.transcript.markers import (
    ASSISTANT,
    ATTACHMENT,
    PROPOSAL,
    RESULT,
    SERVER_REQUEST,
    SUMMARY,
    THOUGHT,
    USER,
    encode_unholdable,
    escape_name,
    escape_text,
    escape_thought,
    fence_for,
)
from mcp_chat_tui.transcript.model import Exchange, Proposal, ServerRequest, Step, ToolResult, Transcript


def render(transcript: Transcript) -> str:
    return "".join(render_exchange(exchange) for exchange in transcript.exchanges)


def render_exchange(exchange: Exchange) -> str:
    """One exchange as the file holds it: it ends with a newline, so exchanges rendered apart join
    into the file's text (what UTF-8 cannot hold is escaped line by line: ``encode_unholdable``)."""
    out: list[str] = []
    _render_exchange(exchange, out)
    return encode_unholdable("".join(out))


def _block(out: list[str], marker: str, lines: list[str]) -> None:
    out.append(f"{marker} " + "\n".join(lines) + "\n\n")


def _render_exchange(exchange: Exchange, out: list[str]) -> None:
    _block(out, USER, escape_text(exchange.user))
    for attachment in exchange.attachments:
        _render_attachment(attachment, out)
    if exchange.model is not None:
        out.append(f"{ASSISTANT}[{escape_name(exchange.model)}]{_reply_meta(exchange)}\n\n")
        steps = exchange.steps
        if len(steps) == 1 and not has_content(steps[0]):
            steps = []
        for index, step in enumerate(steps):
            if step.thought is not None:
                _block(out, THOUGHT, escape_thought(step.thought))
            empty = not has_content(step)
            if step.text or (empty and index > 0):  # an empty later step is kept as an escaped empty line
                out.append("\n".join(_text_lines(step.text)) + "\n\n")
            if step.proposals:
                for proposal in step.proposals:
                    choice = f"[{proposal.choice}]" if proposal.choice else ""
                    call = json.dumps(proposal.call, ensure_ascii=False, separators=(",", ":"))
                    out.append(f"{PROPOSAL}{choice} `{call}`{_proposal_meta(proposal)}\n")
                out.append("\n")
                for proposal in step.proposals:
                    if proposal.result is not None:
                        _render_result(proposal.result, out)
            if step.requests:
                out.extend(f"{SERVER_REQUEST} {_request_json(request)}\n" for request in step.requests)
                out.append("\n")
    if exchange.summary is not None:
        _block(out, SUMMARY, escape_text(exchange.summary))


def _meta_json(meta: dict[str, Any]) -> str:
    """`` {...}`` after a marker's main part: one line, no backtick (so it cannot end a call's backticks)."""
    if not meta:
        return ""
    return " " + json.dumps(meta, ensure_ascii=False).replace("`", "\\u0060")


def _proposal_meta(proposal: Proposal) -> str:
    meta: dict[str, Any] = {}
    if proposal.proposed_at is not None:
        meta["proposed"] = proposal.proposed_at.isoformat(timespec="seconds")
    if proposal.started_at is not None:
        meta["started"] = proposal.started_at.isoformat(timespec="seconds")
    if proposal.server:
        meta["server"] = proposal.server
    if proposal.allowed_by:
        meta["allowed_by"] = proposal.allowed_by
    if proposal.ran_with is not None:
        meta["ran_with"] = proposal.ran_with
    if proposal.tool:
        meta["tool"] = proposal.tool
    if proposal.run_unsaved:
        meta["run_unsaved"] = True
    if proposal.task_id:
        meta["task"] = proposal.task_id
    return _meta_json(meta)


def _request_json(request: ServerRequest) -> str:
    """A ``📨:`` record: one line of JSON (newlines in its texts are escaped by JSON)."""
    record: dict[str, Any] = {"server": request.server, "kind": request.kind}
    if request.at is not None:
        record["at"] = request.at.isoformat(timespec="seconds")
    record.update(request=request.request, answer=request.answer, result=request.result)
    return json.dumps(record, ensure_ascii=False)


def _reply_meta(exchange: Exchange) -> str:
    meta: dict[str, Any] = {}
    if exchange.end:
        meta["end"] = exchange.end
    if exchange.error:
        meta["error"] = exchange.error
    if exchange.note:
        meta["note"] = exchange.note
    if exchange.settings:
        meta["settings"] = exchange.settings
    if exchange.switched_from:
        meta["switched_from"] = exchange.switched_from
    return _meta_json(meta)


def _text_lines(text: str) -> list[str]:
    """Assistant text with no marker of its own: a blank first line is escaped so it cannot vanish."""
    lines = escape_text(text)
    if not lines[0].strip():
        lines[0] = "\\" + lines[0]
    return lines


def _render_attachment(attachment: Attachment, out: list[str]) -> None:
    """``📎: {header}``, then the text in a fenced block when there is any (a prompt command has none)."""
    out.append(f"{ATTACHMENT}{_meta_json(attachment.to_json())}\n")
    if attachment.text:
        fence = fence_for(attachment.text)
        out.append(f"{fence}\n{attachment.text}\n{fence}\n")
    out.append("\n")


def _render_result(result: ToolResult, out: list[str]) -> None:
    meta: dict[str, Any] = {}
    if result.server:
        meta["server"] = result.server
    if result.tool:
        meta["tool"] = result.tool
    if result.duration is not None:
        meta["duration"] = round(result.duration, 4)
    if result.parts:
        meta["parts"] = [part.to_json(inline=True) for part in result.parts]
    if result.structured is not None:
        meta["structured"] = result.structured
    if result.progress is not None:
        meta["progress"] = result.progress.to_json()
    if result.cut is not None:
        meta["cut"] = result.cut.to_json()
    if result.repeat_of:
        meta["repeat_of"] = result.repeat_of
    if result.task is not None:
        meta["task"] = result.task.to_json()
    header = f"{RESULT} [{escape_name(result.name)}][{escape_name(result.call_id)}]"
    if meta:
        header += " " + json.dumps(meta, ensure_ascii=False)
    fence = fence_for(result.content)
    out.append(f"{header}\n{fence}{result.status}\n{result.content}\n{fence}\n\n")


def has_content(step: Step) -> bool:
    """Whether ``step`` holds anything (a thought, text, calls or server requests)."""
    return step.thought is not None or bool(step.text) or bool(step.proposals) or bool(step.requests)
