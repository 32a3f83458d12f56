"""Where a conversation keeps the images and audio of its results and of its prompts' attachments.

Small ones (up to ``INLINE_MEDIA_BYTES``) go into the conversation file as base64: the file
stays whole and shareable. Larger ones go into a folder beside it, ``<file stem>.media/``,
one file per block named by the call id (an attachment's by a hash of its bytes), written atomically with the conversation's
permissions: the file is rewritten at every change of the conversation, and megabytes of
base64 on one line would be copied each time. A block whose file cannot be written stays in
memory and goes into the file as base64, so nothing is lost.
"""

from __future__ import annotations

import copy
import hashlib
import re
import stat
from dataclasses import replace
from pathlib import Path

from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.core.content import ContentPart
from mcp_chat_tui.transcript.format import render_exchange
from mcp_chat_tui.transcript.model import Exchange, Transcript
from mcp_chat_tui.transcript.store import NEW_FILE_MODE, write_bytes_atomically

INLINE_MEDIA_BYTES = 16 * 1024
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def worth_keeping(parts: list[ContentPart]) -> bool:
    """Whether the blocks say more than the text the model was told (media, annotations, text
    meant only for the user): then the transcript keeps them."""
    return any(part.is_media or part.annotated or not part.for_model for part in parts)


def media_folder(conversation: Path) -> Path:
    return conversation.with_name(f"{conversation.stem}.media")


def keep_media(parts: list[ContentPart], conversation: Path | None, call_id: str) -> list[ContentPart]:
    """``parts`` with the bytes of each large image or audio moved to a file beside ``conversation``
    (nothing moves without a conversation file)."""
    if conversation is None:
        return parts
    kept = []
    for index, part in enumerate(parts, 1):
        if part.data is not None and not part.file and len(part.data) > INLINE_MEDIA_BYTES:
            part = _to_file(part, conversation, f"{_UNSAFE.sub('_', call_id)[:80]}-{index}{part.extension()}")
        kept.append(part)
    return kept


def keep_attached_media(attachments: list[Attachment], conversation: Path | None) -> list[Attachment]:
    """``attachments`` with the bytes of each large image or audio moved to a file beside
    ``conversation``, as ``keep_media`` does for a result (named by a hash of the bytes: the same
    image attached twice is one file)."""
    kept = []
    for attachment in attachments:
        part = attachment.media
        if part is not None and part.data is not None:
            name = f"attached-{hashlib.sha256(part.data).hexdigest()[:16]}"
            [part] = keep_media([part], conversation, name)
            attachment = replace(attachment, media=part)
        kept.append(attachment)
    return kept


def _to_file(part: ContentPart, conversation: Path, name: str) -> ContentPart:
    folder = media_folder(conversation)
    try:
        mode = stat.S_IMODE(conversation.stat().st_mode)
    except OSError:
        mode = NEW_FILE_MODE
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        write_bytes_atomically(folder / name, part.data or b"", mode)
    except OSError:
        return part  # kept in memory: the conversation file takes it as base64
    return replace(part.with_file(f"{folder.name}/{name}", str(conversation.parent)), data=part.data)


def self_contained(transcript: Transcript) -> str:
    """The conversation as one file that needs no media folder (for an export to another place):
    every image and audio kept in a file goes in as base64 (one whose file is gone stays a reference)."""
    return "".join(render_exchange(_inlined(exchange)) for exchange in transcript.exchanges)


def _inlined(exchange: Exchange) -> Exchange:
    results = [p.result for step in exchange.steps for p in step.proposals if p.result is not None]
    attached = [a.media for a in exchange.attachments if a.media is not None]
    if not any(part.file for part in [*attached, *(part for result in results for part in result.parts)]):
        return exchange
    exchange = copy.deepcopy(exchange)
    exchange.attachments = [
        replace(a, media=_with_bytes(a.media)) if a.media is not None else a for a in exchange.attachments
    ]
    for step in exchange.steps:
        for proposal in step.proposals:
            if proposal.result is not None:
                proposal.result.parts = [_with_bytes(part) for part in proposal.result.parts]
    return exchange


def _with_bytes(part: ContentPart) -> ContentPart:
    data = part.media_bytes() if part.file else None
    return replace(part, data=data, file="") if data is not None else part
