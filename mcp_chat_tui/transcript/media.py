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
import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path, PurePosixPath

from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.core.content import MAX_MEDIA_BYTES, ContentPart, size_text
from mcp_chat_tui.core.files import link_refused, mode_of, read_in_folder, replace_file
from mcp_chat_tui.core.paths import media_folder
from mcp_chat_tui.transcript.format import parse, render_exchange
from mcp_chat_tui.transcript.model import Exchange, Transcript
from mcp_chat_tui.transcript.store import read_transcript_text

INLINE_MEDIA_BYTES = 16 * 1024
MAX_LOADED_MEDIA_BYTES = 256 * 1024 * 1024  # of one conversation's media files, read when it is loaded
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def worth_keeping(parts: list[ContentPart]) -> bool:
    """Whether the blocks say more than the text the model was told (media, annotations, text
    meant only for the user): then the transcript keeps them."""
    return any(part.is_media or part.annotated or not part.for_model for part in parts)


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
    mode = mode_of(conversation)
    try:
        _ready(folder)
        replace_file(folder / name, part.data or b"", mode)
    except OSError:
        return part  # kept in memory: the conversation file takes it as base64
    return replace(part.with_file(f"{folder.name}/{name}", str(folder)), data=part.data)


def _ready(folder: Path) -> None:
    """Make the media folder if it is not there; one that is a link is ``RefusedFile`` (never written into)."""
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        if os.path.islink(folder) or not folder.is_dir():
            raise link_refused(folder) from None


def read_conversation(path: Path) -> Transcript:
    """The conversation in the file ``path`` with the images and audio of its media folder
    (``TranscriptError`` when it cannot be read). Reads files: not on the screen's thread."""
    return load_media(parse(read_transcript_text(path), path))


def load_media(transcript: Transcript) -> Transcript:
    """Read the images and audio ``transcript`` keeps in its media folder into memory (in place),
    so nothing reads them later on the screen's thread; returns ``transcript``.

    A part's ``"file"`` names a file of the conversation's own media folder (``NAME.media/FILE``):
    anything else (``..``, an absolute path), a link, a FIFO, a device, a file larger than
    ``MAX_MEDIA_BYTES``, or more than ``MAX_LOADED_MEDIA_BYTES`` in all, is not read, and the part
    says why (``ContentPart.unread``). The same file named twice is read once."""
    read: dict[tuple[str, str], bytes | str] = {}
    for exchange in transcript.exchanges:
        _map_parts(exchange, lambda part: _loaded(part, read))
    return transcript


def _loaded(part: ContentPart, read: dict[tuple[str, str], bytes | str]) -> ContentPart:
    if part.data is not None or not part.file:
        return part
    key = (part.folder, part.file)
    if key not in read:
        read[key] = _read_media(part, sum(len(data) for data in read.values() if isinstance(data, bytes)))
    data = read[key]
    return replace(part, data=data) if isinstance(data, bytes) else replace(part, unread=data)


def _read_media(part: ContentPart, loaded: int) -> bytes | str:
    """The bytes of ``part``'s file, or why they are not read."""
    reference = PurePosixPath(part.file)
    if len(reference.parts) != 2 or not reference.parts[0].endswith(".media") or not part.folder:
        return f"its file {part.file} is not read: only a file of the conversation's media folder (NAME.media/FILE) is"
    try:
        data = read_in_folder(Path(part.folder), reference.name, MAX_MEDIA_BYTES)
    except OSError as exc:
        return f"its file {part.file} is not read: {exc.strerror or exc}"
    if loaded + len(data) > MAX_LOADED_MEDIA_BYTES:
        return f"its file {part.file} is not read: the conversation's images and audio pass {size_text(MAX_LOADED_MEDIA_BYTES)}"
    return data


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
    _map_parts(exchange, _with_bytes)
    return exchange


def _map_parts(exchange: Exchange, change: Callable[[ContentPart], ContentPart]) -> None:
    """Replace each image or audio part of ``exchange`` (its attachments' and its results') by ``change(part)``."""
    exchange.attachments = [
        replace(a, media=change(a.media)) if a.media is not None else a for a in exchange.attachments
    ]
    for step in exchange.steps:
        for proposal in step.proposals:
            if proposal.result is not None:
                proposal.result.parts = [change(part) for part in proposal.result.parts]


def _with_bytes(part: ContentPart) -> ContentPart:
    """A part kept in a file, with its bytes (read when the conversation was loaded) inline; one
    whose bytes are not in memory stays a reference."""
    data = part.media_bytes() if part.file else None
    return replace(part, data=data, file="") if data is not None else part
