"""What comes with a user's message besides its text: resource contents, images, the prompt it came from.

Shared by the hub (which makes them), the agent (which sends them), the UI and the transcript
(which show and keep them). The model gets each one as text after the message (``user_content``):
text contents as they are, binary contents as a one-line description. An image or audio also
keeps its bytes as a ``ContentPart`` (``media``), bounded as a tool result's are, for the screen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcp_chat_tui.core.content import ContentPart
from mcp_chat_tui.core.content import size_text as content_size_text

RESOURCE = "resource"
IMAGE = "image"
PROMPT = "prompt"
FILE = "file"  # a text file from the user's disk (core/local_files.py)
CALL = "call"  # a tool the user called, and its result (servers/user_calls.py)
KINDS = (RESOURCE, IMAGE, PROMPT, FILE, CALL)


@dataclass(frozen=True)
class Attachment:
    """One thing attached to a user's message.

    ``kind`` is ``resource`` (a resource's contents), ``image`` (an image a prompt gave), or
    ``prompt`` (the ``/server:prompt`` command the message came from, with its ``arguments``;
    it has no text). ``text`` is what the model is told: the contents, or for binary contents
    a placeholder that says what they are. ``size`` is the size of binary contents in bytes.
    ``media`` is an image or audio to show (its bytes, or why they were not kept; None otherwise).
    """

    kind: str
    server: str = ""
    name: str = ""
    uri: str = ""
    mime_type: str = ""
    text: str = ""
    size: int | None = None
    arguments: dict[str, str] = field(default_factory=dict)
    media: ContentPart | None = None

    @property
    def binary(self) -> bool:
        return self.size is not None

    def label(self) -> str:
        """One line naming it, for the chip under the message and the plain console."""
        if self.kind == PROMPT:
            given = " ".join(f"{key}={_quoted(value)}" for key, value in self.arguments.items())
            return f"/{self.server}:{self.name}" + (f" {given}" if given else "")
        if self.kind == FILE:
            return f"file › {self.name}"
        if self.kind == CALL:
            given = ", ".join(f"{key}={_quoted(value)}" for key, value in self.arguments.items())
            return f"you called {self.server} › {self.name}({given})"
        what = self.uri or self.name or self.kind
        details = ", ".join(part for part in (self.mime_type, size_text(self.size)) if part)
        return f"{self.server} › {what}" + (f" ({details})" if details else "")

    def to_json(self) -> dict[str, Any]:
        """The header the transcript keeps (the text goes in its own block)."""
        data: dict[str, Any] = {"kind": self.kind}
        for key, value in (("server", self.server), ("name", self.name), ("uri", self.uri)):
            if value:
                data[key] = value
        if self.mime_type:
            data["mimeType"] = self.mime_type
        if self.size is not None:
            data["size"] = self.size
        if self.arguments:
            data["arguments"] = dict(self.arguments)
        if self.media is not None:
            data["media"] = self.media.to_json(inline=True)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], text: str = "", folder: str = "") -> Attachment:
        """The inverse of ``to_json``; raises ValueError on a header that is not one.

        Args:
            folder: The transcript's folder, where a ``media`` file named in it is found.
        """
        kind = data.get("kind")
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
        size = data.get("size")
        arguments = data.get("arguments") or {}
        if size is not None and not isinstance(size, int):
            raise ValueError("size must be a whole number of bytes")
        if not isinstance(arguments, dict):
            raise ValueError("arguments must be an object")
        return cls(
            kind=kind,
            server=str(data.get("server", "")),
            name=str(data.get("name", "")),
            uri=str(data.get("uri", "")),
            mime_type=str(data.get("mimeType", "")),
            text=text,
            size=size,
            arguments={str(key): str(value) for key, value in arguments.items()},
            media=_media(data.get("media"), folder),
        )


def _media(entry: object, folder: str) -> ContentPart | None:
    """The image or audio a header keeps (None for anything else: the attachment is then described only)."""
    part = ContentPart.from_json(entry, folder)
    return part if part is not None and part.is_media else None


def binary_placeholder(mime_type: str, size: int) -> str:
    """What the model is told in place of binary contents."""
    return f"[binary contents: {mime_type or 'unknown type'}, {size_text(size)}; not shown to the model]"


def user_content(text: str, attachments: tuple[Attachment, ...] | list[Attachment] = ()) -> str:
    """The user message the model gets: the text, then each attachment's text under a header line
    (not an image or audio whose audience is only the user, as a result's is left out)."""
    parts = [text] if text else []
    for attachment in attachments:
        if attachment.kind == PROMPT or (attachment.media is not None and not attachment.media.for_model):
            continue
        parts.append(f"[attached: {attachment.label()}]\n{attachment.text}")
    return "\n\n".join(parts)


def size_text(size: int | None) -> str:
    """``core/content.py``'s size (``12.3 KB``), or "" for a size not known."""
    return "" if size is None else content_size_text(size)


def _quoted(value: str) -> str:
    return f'"{value}"' if not value or any(ch.isspace() for ch in value) or '"' in value else value
