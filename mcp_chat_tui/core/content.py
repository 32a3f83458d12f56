"""One block of what a server sent (a tool result, a prompt message, a resource), kept for the screen.

The model is told the text of each block (an image or audio block is one line describing it);
the screen also shows the block's bytes, its annotations, and text meant only for the user.
Bytes are kept only up to ``MAX_MEDIA_BYTES`` a block (``note`` says why when they are not).
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
from dataclasses import dataclass, field, replace
from typing import Any

MAX_MEDIA_BYTES = 8 * 1024 * 1024  # an image or audio block larger than this is described, not kept
MEDIA_KINDS = ("image", "audio")
EXTENSIONS = {  # the usual ones first: what ``mimetypes`` knows differs between systems
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "audio/wav": ".wav",
    "audio/x-wav": ".wav",
    "audio/mpeg": ".mp3",
    "audio/ogg": ".ogg",
}


@dataclass(frozen=True)
class ContentPart:
    """A content block: ``kind`` is text, image, audio, resource, link or other.

    ``text`` is the block's text, or for any other kind the one line the model is told.
    ``data`` holds an image's or audio's bytes (None when not kept: ``note`` says why, or
    ``file`` names where a transcript keeps them: ``NAME.media/FILE``, the file ``FILE`` in the
    conversation's media folder ``folder``, and ``unread`` why it could not be read).
    """

    kind: str
    text: str = ""
    mime_type: str = ""
    size: int = 0  # bytes of an image or audio as sent
    data: bytes | None = field(default=None, repr=False, compare=False)
    note: str = ""
    audience: tuple[str, ...] | None = None
    priority: float | None = None
    file: str = ""
    folder: str = field(default="", compare=False)  # the conversation's media folder, for a part read from one
    unread: str = field(default="", compare=False)  # why the bytes of ``file`` were not read (not kept in a file)

    @property
    def is_media(self) -> bool:
        return self.kind in MEDIA_KINDS

    @property
    def for_model(self) -> bool:
        """Whether the model is told this block: not when its audience names only the user."""
        return not self.audience or "assistant" in self.audience

    @property
    def annotated(self) -> bool:
        return self.audience is not None or self.priority is not None

    def annotations_line(self) -> str:
        """``audience: user · priority: 0.9`` ("" when the block has no annotations)."""
        shown = []
        if self.audience is not None:
            shown.append(f"audience: {', '.join(self.audience) or '(none)'}")
        if self.priority is not None:
            shown.append(f"priority: {self.priority:g}")
        if not self.for_model:
            shown.append("not sent to the model")
        return " · ".join(shown)

    def media_bytes(self) -> bytes | None:
        """The bytes of an image or audio, from memory only (None when not there: ``media_problem``
        says why). Those a transcript keeps in its media folder are read when it is loaded, off the
        screen's thread (``transcript.media.load_media``), never here."""
        return self.data

    def media_problem(self) -> str:
        """Why the bytes of an image or audio cannot be shown ("" when they can)."""
        if self.note:
            return self.note
        if self.data is None:
            if self.file:
                return self.unread or f"its file {self.file} was not read"
            return "its bytes were not kept"
        return ""

    def extension(self) -> str:
        """A file extension for the bytes, from the MIME type (``.bin`` when unknown)."""
        mime = self.mime_type.split(";")[0].strip().lower()
        return EXTENSIONS.get(mime) or (mimetypes.guess_extension(mime) if mime else None) or ".bin"

    def to_json(self, *, inline: bool) -> dict[str, Any]:
        """The part as a transcript keeps it; ``inline``: bytes kept in memory go in as base64."""
        entry: dict[str, Any] = {"kind": self.kind}
        if self.text:
            entry["text"] = self.text
        for key, value in (("mime", self.mime_type), ("size", self.size), ("note", self.note), ("file", self.file)):
            if value:
                entry[key] = value
        if self.audience is not None:
            entry["audience"] = list(self.audience)
        if self.priority is not None:
            entry["priority"] = self.priority
        if inline and self.data is not None and not self.file:
            entry["data"] = base64.b64encode(self.data).decode("ascii")
        return entry

    @classmethod
    def from_json(cls, entry: object, folder: str = "") -> ContentPart | None:
        """A part a transcript kept (None when ``entry`` is not one); ``folder``: the conversation's media folder."""
        if not isinstance(entry, dict) or not isinstance(entry.get("kind"), str):
            return None
        data = None
        if isinstance(entry.get("data"), str):
            try:
                data = base64.b64decode(entry["data"], validate=True)
            except (binascii.Error, ValueError):
                data = None
        audience = entry.get("audience")
        priority = entry.get("priority")
        size = entry.get("size")
        return cls(
            kind=entry["kind"],
            text=str(entry.get("text", "")),
            mime_type=str(entry.get("mime", "")),
            size=size if isinstance(size, int) else 0,
            data=data,
            note=str(entry.get("note", "")),
            audience=tuple(str(role) for role in audience) if isinstance(audience, list) else None,
            priority=float(priority) if isinstance(priority, (int, float)) else None,
            file=str(entry.get("file", "")),
            folder=folder,
        )

    def with_file(self, file: str, folder: str) -> ContentPart:
        """The part whose bytes now live in the file ``file`` of the media folder ``folder``."""
        return replace(self, file=file, folder=folder)


def size_text(size: int) -> str:
    """``512 B``, ``12.3 KB``, ``4.0 MB``."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"
