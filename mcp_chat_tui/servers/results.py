"""Turn an SDK ``CallToolResult`` into our ``ToolCallResult``, bounded in size.

What is kept of a large result: the text of its content blocks up to
``max_chars`` characters (the rest is dropped and ``truncated``/``full_size``
say so), structured content only when its JSON fits in the same limit, and a
one-line description of each image, audio or binary block instead of its bytes.
The model is told that text; blocks whose audience is only the user are left out of it.
Each block is also kept as a ``ContentPart`` for the screen: its annotations, and the bytes
of an image or audio up to ``MAX_MEDIA_BYTES``.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import json
import re
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from mcp_chat_tui.core.content import MAX_MEDIA_BYTES, ContentPart, size_text
from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.core.tools import FailureKind, ToolCallResult
from mcp_chat_tui.servers.incoming_requests import USER_REJECTED
from mcp_chat_tui.servers.stdout_lines import line_limit

if TYPE_CHECKING:
    import mcp_types


def _block_text(block: Any) -> str:
    import mcp_types

    if isinstance(block, mcp_types.TextContent):
        return block.text
    if isinstance(block, (mcp_types.ImageContent, mcp_types.AudioContent)):
        kind = "image" if isinstance(block, mcp_types.ImageContent) else "audio"
        return f"[{kind} {block.mime_type}, about {len(block.data) * 3 // 4} bytes]"
    if isinstance(block, mcp_types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, mcp_types.TextResourceContents):
            return resource.text
        decoded = blob_text(resource)
        if decoded is not None:
            return decoded
        return f"[binary resource {resource.uri}, {resource.mime_type or 'unknown type'}]"
    if isinstance(block, mcp_types.ResourceLink):
        return f"[resource link {block.name}: {block.uri}]"
    return f"[{getattr(block, 'type', type(block).__name__)} content]"


def blob_text(contents: Any) -> str | None:
    """The text of a blob declared ``text/*`` (its ``charset``, else UTF-8), which the model is given
    as text; bytes that do not decode become U+FFFD and a last line says so. None for any other
    contents, and for a blob that is not base64 (it stays binary, described in a line)."""
    import mcp_types

    mime = (getattr(contents, "mime_type", None) or "").strip()
    if not isinstance(contents, mcp_types.BlobResourceContents) or not mime.lower().startswith("text/"):
        return None
    try:
        data = base64.b64decode(contents.blob, validate=True)
    except (binascii.Error, ValueError):
        return None
    charset = next(
        (
            p.split("=", 1)[1].strip().strip('"')
            for p in mime.split(";")[1:]
            if p.strip().lower().startswith("charset=")
        ),
        "utf-8",
    )
    try:
        codecs.lookup(charset)
    except LookupError:
        charset = "utf-8"  # a charset Python does not know: read as UTF-8, and say so if that fails
    try:
        return data.decode(charset)
    except UnicodeDecodeError as exc:
        return data.decode(charset, errors="replace") + (
            f"\n[note: {contents.uri} is declared {mime} but is not valid {charset.upper()} "
            f"(first bad byte at offset {exc.start}); undecodable bytes are shown as \ufffd]"
        )


MAX_MEDIA_BYTES_PER_RESULT = 2 * MAX_MEDIA_BYTES


def _annotations(block: Any) -> tuple[tuple[str, ...] | None, float | None]:
    annotations = getattr(block, "annotations", None)
    if annotations is None:
        return None, None
    audience = tuple(str(role) for role in annotations.audience) if annotations.audience is not None else None
    return audience, annotations.priority


def _media_bytes(encoded: str) -> tuple[bytes | None, int, str]:
    """The bytes of a base64 image or audio, its size, and why they are not kept ("" when they are)."""
    size = len(encoded) * 3 // 4
    if size > MAX_MEDIA_BYTES:
        return None, size, f"not kept: {size_text(size)} is more than the {size_text(MAX_MEDIA_BYTES)} limit"
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return None, size, "not shown: its data is not valid base64"
    return data, len(data), ""


def content_part(block: Any, text: str) -> ContentPart:
    """A block (of a tool result, or of a prompt's message) for the screen; ``text`` is its
    (redacted) text or one-line description. ``ui/widgets/media.MediaView`` draws an image or audio part."""
    import mcp_types

    audience, priority = _annotations(block)
    if isinstance(block, (mcp_types.ImageContent, mcp_types.AudioContent)):
        data, size, note = _media_bytes(block.data)
        kind = "image" if isinstance(block, mcp_types.ImageContent) else "audio"
        return ContentPart(kind, text, block.mime_type, size, data, note, audience, priority)
    kind = {
        mcp_types.TextContent: "text",
        mcp_types.EmbeddedResource: "resource",
        mcp_types.ResourceLink: "link",
    }.get(type(block), "other")
    return ContentPart(kind, text, audience=audience, priority=priority)


def resource_part(contents: mcp_types.TextResourceContents | mcp_types.BlobResourceContents, text: str) -> ContentPart:
    """A resource's contents for the screen: an image or audio blob keeps its bytes (bounded like a
    result's), anything else is its ``text`` (the resource's text, or a line describing it)."""
    import mcp_types

    mime = contents.mime_type or ""
    kind = mime.split("/")[0]
    if isinstance(contents, mcp_types.BlobResourceContents) and kind in ("image", "audio"):
        data, size, note = _media_bytes(contents.blob)
        return ContentPart(kind, text, mime, size, data, note)
    return ContentPart("resource", text, mime)


def within_media_budget(parts: list[ContentPart], whose: str) -> list[ContentPart]:
    """``parts`` with the bytes of each image or audio past ``MAX_MEDIA_BYTES_PER_RESULT`` in all
    dropped, its ``note`` saying so (``whose``: "the result's", for that note)."""
    media_room, bounded = MAX_MEDIA_BYTES_PER_RESULT, []
    for part in parts:
        if part.data is not None:
            media_room -= len(part.data)
            if media_room < 0:
                limit = size_text(MAX_MEDIA_BYTES_PER_RESULT)
                part = replace(part, data=None, note=f"not kept: {whose} images and audio pass {limit}")
        bounded.append(part)
    return bounded


def _cut(texts: list[str], max_chars: int) -> str:
    kept: list[str] = []
    room = max_chars
    for piece in texts:
        if room <= 0:
            break
        kept.append(piece[:room])
        room -= len(kept[-1]) + 1
    return "\n".join(kept)


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
    parts = [content_part(block, redactor.text(_block_text(block))) for block in raw.content]
    texts = [part.text for part in parts if part.for_model]
    full_size = sum(len(piece) for piece in texts) + max(0, len(texts) - 1)
    text = _cut(texts, max_chars)
    room = max_chars
    for index, part in enumerate(parts):  # what the screen keeps is bounded too
        parts[index] = replace(part, text=part.text[: max(room, 0)])
        room -= len(parts[index].text)
    parts = within_media_budget(parts, "the result's")
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
        parts=parts,
    )


SCHEMA_CHECK_FAILURES = (  # what the SDK's client raises when a result breaks the tool's outputSchema
    "Invalid structured content returned by tool",
    "has an output schema but did not return structured content",
    "Invalid schema for tool",
)


def schema_problem(exc: Exception) -> str:
    """The SDK client's own output-schema check failed: what is wrong ("" for any other error).

    The client checks every result that is not an error against the tool's ``outputSchema``
    (jsonschema) and raises instead of returning it; the check is not repeated here.
    """
    if isinstance(exc, RuntimeError) and any(marker in str(exc) for marker in SCHEMA_CHECK_FAILURES):
        return str(exc).strip().split("\n")[0]  # jsonschema adds the schema and the instance on later lines
    return ""


_ARM = re.compile(r"^[A-Z][A-Za-z0-9]*$")  # a model's name in an error's location: one arm of a union
_TAGS = ("type", "resultType")  # the fields whose value says which arm a value is


def validation_problems(exc: ValidationError, shown: int = 3) -> str:
    """What pydantic found wrong, in a line: each problem's place and what (``+N more`` past ``shown``).

    A value checked against a union fails once for every arm; the arms whose tag (``type``,
    ``resultType``) it does not carry are left out, since it never claimed to be one of them."""
    errors = exc.errors(include_url=False)
    rejected = [
        e["loc"][:-1] for e in errors if e["type"] == "literal_error" and e["loc"][-1:] in [(t,) for t in _TAGS]
    ]
    meant = [e for e in errors if not any(e["loc"][: len(arm)] == arm for arm in rejected)] or errors
    problems: list[str] = []
    for error in meant:
        where = ".".join(str(part) for part in error["loc"] if not _ARM.match(str(part))) or "the result"
        text = f"{where} is missing" if error["type"] == "missing" else f"{where}: {error['msg']}"
        if text not in problems:
            problems.append(text)
    more = len(problems) - shown
    return "; ".join(problems[:shown]) + (f" (+{more} more)" if more > 0 else "")


def server_broke_protocol(exc: Exception) -> bool:
    """Whether a failed call was the server's fault at the protocol level (a malformed result, one
    that breaks the tool's output schema or is nested too deep to check), to be counted against the server."""
    return isinstance(exc, ValidationError | RecursionError) or bool(schema_problem(exc))


# How the SDK's streamable HTTP transport says an event of an answer passed its size limit.
_TOO_LONG_EVENT = re.compile(r"^SSE stream failed: Server-sent event exceeded the \d+ byte limit")


def unreadable_answer(server: str, problem: str) -> str:
    """A call's failure when its answer could not be read (``noise.unreadable_message``)."""
    return f"server {server!r} broke the protocol: {problem}"


def call_failure(exc: Exception, server: str, tool: str, limit: float) -> tuple[FailureKind, str, str]:
    """What an exception from a tool call means for the user.

    Returns:
        The failure's kind, its message, and why the server now counts as crashed ("" when it does not).
    """
    import anyio
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED, PARSE_ERROR, REQUEST_TIMEOUT

    if isinstance(exc, MCPError):
        if exc.code == REQUEST_TIMEOUT:
            message = f"{tool} gave no result within {limit:g} s; the call was cancelled (the server keeps running)"
            return FailureKind.TIMEOUT, message, ""
        if exc.code == CONNECTION_CLOSED and _TOO_LONG_EVENT.search(exc.message):  # streamable HTTP: one answer
            limit = line_limit() // (1024 * 1024)
            message = f"its answer was longer than {limit} MiB (the most one message may be) and was dropped"
            return FailureKind.PROTOCOL_ERROR, unreadable_answer(server, message), ""
        if exc.code == CONNECTION_CLOSED:
            message = f"server {server!r} closed the connection during the call"
            return FailureKind.CRASHED, message, "the connection closed during a tool call"
        if exc.code == USER_REJECTED:  # what the server asked during the call was refused here (2026-07-28)
            return FailureKind.REFUSED, exc.message, ""
        if exc.code == PARSE_ERROR:  # its answer could not be read (servers/stdio_transport.py, the SDK's HTTP)
            return FailureKind.PROTOCOL_ERROR, unreadable_answer(server, exc.message), ""
        return FailureKind.PROTOCOL_ERROR, f"{exc.message} (error {exc.code})", ""
    if isinstance(exc, ValidationError):
        return FailureKind.PROTOCOL_ERROR, f"the server sent a malformed result: {validation_problems(exc)}", ""
    if isinstance(exc, RecursionError):  # the SDK checks structured content against the output schema by recursion
        message = (
            f"server {server!r} broke the protocol: its result, or the tool's output schema, is nested "
            "too deep to check the one against the other"
        )
        return FailureKind.PROTOCOL_ERROR, message, ""
    if schema_problem(exc):
        message = (
            f"the server broke the protocol: its result does not match the tool's output schema ({schema_problem(exc)})"
        )
        return FailureKind.PROTOCOL_ERROR, message, ""
    if isinstance(exc, (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError)):
        message = f"server {server!r} is gone ({type(exc).__name__})"
        return FailureKind.CRASHED, message, "the connection broke during a tool call"
    return FailureKind.PROTOCOL_ERROR, f"{type(exc).__name__}: {exc}", ""
