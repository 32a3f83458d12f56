"""A tool call that runs as a task at its server (2025-11-25 tasks): its state as last heard, shared by
the hub, the agent, the front ends and the transcript."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_chat_tui.core.text import one_line

TERMINAL_STATUSES = ("completed", "failed", "cancelled")
STATUS_MESSAGE_CHARS = 200  # a server's status message is cut to this
FINISHED_WHILE_CLOSED = "finished while the app was closed"


@dataclass(frozen=True)
class TaskState:
    """A call's task: its id at the server, its ``status`` (working, input_required, completed, failed,
    cancelled) and the server's ``message`` about it. ``poll_seconds`` is how often the server asks to
    be polled; ``finished_while_closed``: the task had ended when a resumed conversation asked for it."""

    task_id: str
    status: str = "working"
    message: str = ""
    poll_seconds: float | None = None
    finished_while_closed: bool = False

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    def describe(self) -> str:
        """``task working: frame 2 of 3``, as a row, a card or the console shows it."""
        status = self.status.replace("_", " ")
        said = f"task {status}: {self.message}" if self.message else f"task {status}"
        return f"{said} ({FINISHED_WHILE_CLOSED})" if self.finished_while_closed else said

    def to_json(self) -> dict[str, Any]:
        """What a result's header records of its task."""
        data: dict[str, Any] = {"id": self.task_id, "status": self.status}
        if self.message:
            data["message"] = self.message
        if self.finished_while_closed:
            data["finished_while_closed"] = True
        return data

    @classmethod
    def from_json(cls, data: object) -> TaskState | None:
        """The task a transcript recorded (None when the value is not one)."""
        if not isinstance(data, dict) or not isinstance(data.get("id"), str) or not data["id"]:
            return None
        status, message = data.get("status"), data.get("message")
        return cls(
            data["id"],
            status if isinstance(status, str) else "completed",
            message if isinstance(message, str) else "",
            finished_while_closed=data.get("finished_while_closed") is True,
        )


def status_message(text: str | None) -> str:
    """A server's status message as the app keeps it: one line, cut."""
    return one_line(text or "", STATUS_MESSAGE_CHARS)
