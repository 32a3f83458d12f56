"""What the UI remembers of each tool call, for the sidebar rows and the detail screen."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.core.content import ContentPart
from mcp_chat_tui.core.progress import ToolProgress
from mcp_chat_tui.core.tasks import TaskState
from mcp_chat_tui.core.tools import ToolCallResult

RUN_UNSAVED_NOTE = "; run unsaved (its start could not be saved first)"  # after a record's ``allowed_by``


@dataclass
class CallRecord:
    """One row of the tool-call sidebar."""

    key: str
    call_id: str  # unique in the conversation; ``given_id`` is the model's own when it had to change
    server: str
    tool: str
    arguments: dict[str, Any]
    proposed_at: datetime | None
    state: CallState = CallState.PROPOSED
    started_at: datetime | None = None
    started_clock: float | None = None
    duration: float | None = None
    result: ToolCallResult | None = None
    content_for_model: str = ""
    raw: str = ""
    reason: str = ""
    allowed_by: str = ""  # who or which rule let it run ("you (once)", "auto policy"…), once decided
    ran_with: dict[str, Any] | None = None  # the arguments the user edited it to before it ran
    given_id: str = ""
    progress: ToolProgress | None = None  # the last progress its server reported
    task: TaskState | None = None  # the task it runs (or ran) as at its server, as last heard
    cut_for_model: str = ""  # "cut for the model: 1.2k of 50k tokens" when the model got only its start
    repeat_of: str = ""  # a repeated call: the id of the earlier call whose result the model was given
    extra: dict[str, Any] = field(default_factory=dict)
    loaded_parts: list[ContentPart] = field(default_factory=list)  # a call read from a transcript
    loaded_structured: dict[str, Any] | None = None
    title: str = ""  # the tool's title, shown for its name where a person reads it ("" when none)

    @property
    def shown_tool(self) -> str:
        return self.title or self.tool

    @property
    def parts(self) -> list[ContentPart]:
        """The result's content blocks (live, or as a transcript kept them)."""
        return self.result.parts if self.result is not None else self.loaded_parts

    @property
    def structured(self) -> dict[str, Any] | None:
        return self.result.structured if self.result is not None else self.loaded_structured

    @property
    def media(self) -> list[ContentPart]:
        """The result's images and audio."""
        return [part for part in self.parts if part.is_media]

    def elapsed(self) -> float | None:
        if self.duration is not None:
            return self.duration
        if self.started_clock is not None:
            return time.perf_counter() - self.started_clock
        return None
