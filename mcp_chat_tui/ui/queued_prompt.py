"""A prompt sent and waiting for its turn: its text, its attachments, and the ``@`` resources
still being read when it was sent (the turn waits for them)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from mcp_chat_tui.core.attachments import Attachment

Read = asyncio.Future  # its result: the resource's contents, or why they could not be read (str)


@dataclass
class QueuedPrompt:
    prompt: str
    attached: list[tuple[str, Attachment]] = field(default_factory=list)  # (the @word, contents) read already
    reading: dict[str, Read] = field(default_factory=dict)  # @word: its read under way when sent
    shown: object = None  # the chat's message for it (replaced once the reads end)

    @property
    def attachments(self) -> tuple[Attachment, ...]:
        return tuple(attachment for _, attachment in self.attached)

    def failures(self) -> dict[str, str]:
        """The reads that ended without contents: @word -> why."""
        return {word: read.result() for word, read in self.reading.items() if isinstance(read.result(), str)}

    def take_reads(self) -> None:
        """Add the contents of the reads (all ended) to ``attached``."""
        for word, read in self.reading.items():
            self.attached += [(word, contents) for contents in read.result()]
        self.reading = {}
