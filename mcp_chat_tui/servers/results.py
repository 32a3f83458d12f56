"""Turn an SDK ``CallToolResult`` into our ``ToolCallResult``, bounded in size.

What is kept of a large result: the text of its content blocks up to
``max_chars`` characters (the rest is dropped and ``truncated``/``full_size``
say so), structured content only when its JSON fits in the same limit, and a
one-line description of each image, audio or binary block instead of its bytes.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import anyio
import mcp_types
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT
from pydantic import ValidationError

from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.core.tools import FailureKind, ToolCallResult


def _block_text(block: Any) -> str:
    if isinstance(block, mcp_types.TextContent):
        return block.text
    if isinstance(block, (mcp_types.ImageContent, mcp_types.AudioContent)):
        kind = "image" if isinstance(block, mcp_types.ImageContent) else "audio"
        return f"[{kind} {block.mime_type}, about {len(block.data) * 3 // 4} bytes]"
    if isinstance(block, mcp_types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, mcp_types.TextResourceContents):
            return resource.text
        return f"[binary resource {resource.uri}, {resource.mime_type or 'unknown type'}]"
    if isinstance(block, mcp_types.ResourceLink):
        return f"[resource link {block.name}: {block.uri}]"
    return f"[{getattr(block, 'type', type(block).__name__)} content]"


def convert_result(
    raw: mcp_types.CallToolResult,
    server: str,
    tool: str,
    arguments: dict[str, Any],
    started_at: datetime,
    max_chars: int,
    redactor: Redactor | None = None,
) -> ToolCallResult:
    """Our result for ``raw``; secrets are redacted before the cut, so no part of one is kept."""
    redactor = redactor if redactor is not None else Redactor()
    texts = [redactor.text(_block_text(block)) for block in raw.content]
    full_size = sum(len(piece) for piece in texts) + max(0, len(texts) - 1)
    kept: list[str] = []
    room = max_chars
    for piece in texts:
        if room <= 0:
            break
        kept.append(piece[:room])
        room -= len(kept[-1]) + 1
    text = "\n".join(kept)
    structured = redactor.value(raw.structured_content)
    if structured is not None:
        encoded = json.dumps(structured, ensure_ascii=False, default=str)
        if len(encoded) > max_chars:
            structured = None
            full_size = max(full_size, len(encoded))
    return ToolCallResult(
        server=server,
        tool=tool,
        arguments=arguments,
        started_at=started_at,
        duration=0.0,
        text=text,
        structured=structured,
        is_error=bool(raw.is_error),
        truncated=full_size > len(text) or (raw.structured_content is not None and structured is None),
        full_size=full_size,
    )


def call_failure(exc: Exception, server: str, tool: str, limit: float) -> tuple[FailureKind, str, str]:
    """What an exception from a tool call means for the user.

    Returns:
        The failure's kind, its message, and why the server now counts as crashed ("" when it does not).
    """
    if isinstance(exc, MCPError):
        if exc.code == REQUEST_TIMEOUT:
            message = f"{tool} gave no result within {limit:g} s; the call was cancelled (the server keeps running)"
            return FailureKind.TIMEOUT, message, ""
        if exc.code == CONNECTION_CLOSED:
            message = f"server {server!r} closed the connection during the call"
            return FailureKind.CRASHED, message, "the connection closed during a tool call"
        return FailureKind.PROTOCOL_ERROR, f"{exc.message} (error {exc.code})", ""
    if isinstance(exc, ValidationError):
        message = f"the server sent a malformed result: {exc.error_count()} problems"
        return FailureKind.PROTOCOL_ERROR, message, ""
    if isinstance(exc, (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError)):
        message = f"server {server!r} is gone ({type(exc).__name__})"
        return FailureKind.CRASHED, message, "the connection broke during a tool call"
    return FailureKind.PROTOCOL_ERROR, f"{type(exc).__name__}: {exc}", ""
