"""Textual messages the app posts to itself: agent events, server changes, engine progress."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from textual.message import Message

from mcp_chat_tui.agent.events import AgentEvent
from mcp_chat_tui.engine.events import LoadProgress
from mcp_chat_tui.servers.state import ServerStatus


class AgentEventPosted(Message):
    """One event from the agent, in the order the agent reported it."""

    def __init__(self, event: AgentEvent) -> None:
        super().__init__()
        self.event = event
        self.more_text: list[str] = []  # text that arrived while this text event was queued

    def whole_event(self) -> AgentEvent:
        """The event, with the text that came while it was queued (``more_text``) after its own."""
        if not self.more_text:
            return self.event
        return replace(self.event, text="".join([self.event.text, *self.more_text]))


class ServerChanged(Message):
    def __init__(self, status: ServerStatus) -> None:
        super().__init__()
        self.status = status


class PolicyChanged(Message):
    """The approval policy changed (a toggle, an "always"): the ⚡ marks are drawn again from it."""


class EngineProgress(Message):
    def __init__(self, progress: LoadProgress) -> None:
        super().__init__()
        self.progress = progress


class SaveChanged(Message):
    """Saving the conversation to ``path`` started to fail (``problem``: why, in one line) or works
    again (None)."""

    def __init__(self, path: Path, problem: str | None) -> None:
        super().__init__()
        self.path = path
        self.problem = problem
