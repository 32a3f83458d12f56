"""Textual messages the app posts to itself: server changes, policy changes, engine progress, saving.

The agent's events have theirs in ``ui/agent_messages.py``."""

from __future__ import annotations

from pathlib import Path

from textual.message import Message

from mcp_chat_tui.engine import LoadProgress
from mcp_chat_tui.servers import ServerStatus


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
