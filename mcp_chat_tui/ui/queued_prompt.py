"""A prompt sent and waiting for its turn: its text, its attachments, and the ``@`` resources
still being read when it was sent (the turn waits for them)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from textual.widget import Widget

from mcp_chat_tui.core.attachments import Attachment

Read = asyncio.Future[list[Attachment] | str]  # the resource's contents, or why they could not be read


@dataclass
class QueuedPrompt:
    prompt: str
    attached: list[tuple[str, Attachment]] = field(default_factory=list)  # (the @word, contents) read already
    reading: dict[str, Read] = field(default_factory=dict)  # @word: its read under way when sent
    shown: Widget | None = None  # the chat's message for it (replaced once the reads end)

    @property
    def attachments(self) -> tuple[Attachment, ...]:
        return tuple(attachment for _, attachment in self.attached)

    def failures(self) -> dict[str, str]:
        """The reads that ended without contents: @word -> why."""
        results = {word: read.result() for word, read in self.reading.items()}
        return {word: result for word, result in results.items() if isinstance(result, str)}

    def take_reads(self) -> None:
        """Add the contents of the reads (all ended, none failed) to ``attached``."""
        for word, read in self.reading.items():
            contents = read.result()
            assert not isinstance(contents, str), f"{word} failed: {contents}"  # failures() is empty
            self.attached += [(word, content) for content in contents]
        self.reading = {}
