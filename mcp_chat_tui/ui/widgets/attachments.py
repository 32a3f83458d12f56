"""Attachments on screen: the lines under a user's message (and the images and audio attached,
drawn under it as a result's are), and a resource's contents in a preview."""

from __future__ import annotations

import json
from collections.abc import Sequence

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Markdown, Static

from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.core.text import pretty_json
from mcp_chat_tui.ui.format import literal
from mcp_chat_tui.ui.queued_prompt import QueuedPrompt
from mcp_chat_tui.ui.widgets.chat import UserMessage
from mcp_chat_tui.ui.widgets.media import MediaView


class UserMessageWithAttachments(UserMessage):
    """The prompt, then one ``📎`` line per attachment (the prompt command it came from, resources);
    each attached image or audio follows the message in the chat (a ``MediaView``)."""

    DEFAULT_CSS = """
    UserMessageWithAttachments { margin: 1 0 0 0; color: $text; text-style: bold; }
    """

    def __init__(self, prompt: str, attachments: Sequence[Attachment]) -> None:
        super().__init__(prompt)
        self.attachments = list(attachments)
        text = literal("prompt -> ", "dim")
        text.append_text(literal(prompt))
        for attachment in attachments:
            text.append("\n")
            text.append_text(attachment_line(attachment))
        self.update(text)

    async def on_mount(self) -> None:
        media = [MediaView(a.media, classes="-attached") for a in self.attachments if a.media is not None]
        if media and isinstance(self.parent, Widget):  # siblings: the chat trims an exchange from its message on
            await self.parent.mount_all(media, after=self)


def user_message(prompt: str, attachments: Sequence[Attachment] = ()) -> UserMessage:
    return UserMessageWithAttachments(prompt, attachments) if attachments else UserMessage(prompt)


def reading_message(queued: QueuedPrompt) -> UserMessage:
    """A prompt sent while resources it carries were still being read: a line says so for each
    (their images come with the message that replaces this one once they are read)."""
    message = UserMessage(queued.prompt)
    text = literal("prompt -> ", "dim")
    text.append_text(literal(queued.prompt))
    for attachment in queued.attachments:
        text.append("\n")
        text.append_text(attachment_line(attachment))
    for word in queued.reading:
        text.append_text(literal(f"\n  ⏳ reading {word}… (Esc: do not send)", "not bold italic"))
    message.update(text)
    return message


def attachment_line(attachment: Attachment) -> Text:
    line = Text("  📎 ", style="not bold")
    line.append_text(literal(attachment.label(), "not bold italic"))
    return line


def preview(attachment: Attachment) -> Widget:
    """A resource's contents as they read best: Markdown rendered, JSON pretty-printed, text as it is;
    an image or audio as a result's (``MediaView``), other binary contents through ``binary_preview``."""
    if attachment.media is not None:
        return MediaView(attachment.media, classes="resource-preview")
    if attachment.binary:
        return binary_preview(attachment)
    mime = attachment.mime_type.split(";", 1)[0].strip().lower()
    if mime in ("text/markdown", "text/x-markdown") or attachment.uri.endswith(".md"):
        return Markdown(attachment.text, classes="resource-preview")
    if mime.endswith("json") or mime.endswith("+json"):
        try:
            return Static(literal(pretty_json(json.loads(attachment.text))), classes="resource-preview")
        except (ValueError, RecursionError):  # not JSON, or nested deeper than Python's parser goes: as it is
            pass
    return Static(literal(attachment.text), classes="resource-preview")


def binary_preview(attachment: Attachment) -> Widget:
    """Binary contents that are not an image or audio: a line that says what they are."""
    kind = "image" if attachment.kind == "image" else "binary"
    return Static(
        literal(f"[{kind} {attachment.mime_type or 'of unknown type'}, {attachment.size} bytes]"),
        classes="resource-preview",
    )
