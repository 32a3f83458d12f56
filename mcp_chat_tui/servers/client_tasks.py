"""The tasks this client runs for one server: its sampling and elicitation requests that asked for a
task (2025-11-25's task-augmented requests), and the server's ``tasks/get``, ``tasks/result``,
``tasks/list`` and ``tasks/cancel`` about them.

The request is answered at once with a ``CreateTaskResult``; the work (asking the user, sampling
the model: the same callbacks as a plain request) goes on in the background, and its answer becomes
the task's result. A task is kept for its ``ttl`` from its creation (what the server asked, at most
``MAX_TTL_MS``), then forgotten.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from mcp_chat_tui.core.tasks import TERMINAL_STATUSES

if TYPE_CHECKING:
    import mcp_types
    from mcp.shared.exceptions import MCPError

RELATED_TASK_KEY = "io.modelcontextprotocol/related-task"
TASK_METHODS = ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel")
DEFAULT_TTL_MS = 10 * 60 * 1000
MAX_TTL_MS = 60 * 60 * 1000
POLL_INTERVAL_MS = 500

Work = Callable[[], Awaitable[dict[str, Any]]]  # the request's answer, as sent; raises MCPError for an error


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(eq=False)
class ClientTask:
    """One request this client runs as a task: its state, and its answer once over."""

    task_id: str
    kind: str  # the request's method
    ttl_ms: int
    created: str = field(default_factory=_now)
    created_clock: float = field(default_factory=time.monotonic)
    updated: str = field(default_factory=_now)
    status: str = "working"
    message: str = ""
    answer: dict[str, Any] | None = None
    error: MCPError | None = None
    over: asyncio.Event = field(default_factory=asyncio.Event)
    work: asyncio.Task[None] | None = None

    def wire(self) -> dict[str, Any]:
        task = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created,
            "lastUpdatedAt": self.updated,
            "ttl": self.ttl_ms,
            "pollInterval": POLL_INTERVAL_MS,
        }
        if self.message:
            task["statusMessage"] = self.message
        return task

    def move(self, status: str, message: str) -> None:
        """A new status; once terminal it never changes (the spec's rule)."""
        if self.status in TERMINAL_STATUSES:
            return
        self.status, self.message, self.updated = status, message, _now()
        if status in TERMINAL_STATUSES:
            self.over.set()

    def expired(self, now: float) -> bool:
        return now - self.created_clock > self.ttl_ms / 1000


class ClientTasks:
    """The tasks of one connection; ``close`` stops the work still under way."""

    def __init__(self) -> None:
        self._tasks: dict[str, ClientTask] = {}

    def create(self, method: str, requested: mcp_types.TaskMetadata | None, work: Work) -> dict[str, Any]:
        """Start ``work`` as a task; returns the ``CreateTaskResult`` to answer the request with."""
        ttl = requested.ttl if requested is not None and requested.ttl is not None else DEFAULT_TTL_MS
        task = ClientTask(str(uuid.uuid4()), method, max(0, min(ttl, MAX_TTL_MS)))
        task.message = "waiting for the user" if method == "elicitation/create" else "waiting for the model"
        self._tasks[task.task_id] = task
        task.work = asyncio.get_running_loop().create_task(self._run(task, work), name=f"client-task-{method}")
        return {"task": task.wire()}

    async def _run(self, task: ClientTask, work: Work) -> None:
        import mcp_types
        from mcp.shared.exceptions import MCPError

        try:
            task.answer = await work()
        except asyncio.CancelledError:
            task.move("cancelled", "cancelled")
            raise
        except MCPError as exc:
            task.error = exc
            task.move("failed", exc.error.message)
            return
        except Exception as exc:  # noqa: BLE001 - the task fails, the connection goes on
            task.error = MCPError(code=mcp_types.INTERNAL_ERROR, message=f"{type(exc).__name__}: {exc}")
            task.move("failed", task.error.error.message)
            return
        task.move("completed", "")

    async def serve(self, method: str, params: Any) -> dict[str, Any]:
        """The answer to one of the server's ``tasks/*`` requests."""
        import mcp_types
        from mcp.shared.exceptions import MCPError

        self._forget_expired()
        if method == "tasks/list":
            return {"tasks": [task.wire() for task in self._tasks.values()]}
        task_id = params.get("taskId") if isinstance(params, dict) else None
        task = self._tasks.get(task_id) if isinstance(task_id, str) else None
        if task is None:
            raise MCPError(code=mcp_types.INVALID_PARAMS, message=f"Failed to retrieve task: no task {task_id!r}")
        if method == "tasks/get":
            return task.wire()
        if method == "tasks/cancel":
            return self._cancel(task)
        await task.over.wait()  # tasks/result waits for the end (the spec's rule)
        if task.error is not None:
            raise task.error
        if task.answer is None:
            raise MCPError(code=mcp_types.INVALID_PARAMS, message=f"task {task.task_id} was {task.status}")
        meta = {**(task.answer.get("_meta") or {}), RELATED_TASK_KEY: {"taskId": task.task_id}}
        return {**task.answer, "_meta": meta}

    def _cancel(self, task: ClientTask) -> dict[str, Any]:
        import mcp_types
        from mcp.shared.exceptions import MCPError

        if task.status in TERMINAL_STATUSES:
            raise MCPError(code=mcp_types.INVALID_PARAMS, message=f"task {task.task_id} is already {task.status}")
        task.move("cancelled", "cancelled at the server's request")
        if task.work is not None:
            task.work.cancel()  # the question to the user or the model is withdrawn
        return task.wire()

    def _forget_expired(self) -> None:
        now = time.monotonic()
        for task_id in [key for key, task in self._tasks.items() if task.expired(now)]:
            task = self._tasks.pop(task_id)
            if task.work is not None:
                task.work.cancel()

    def close(self) -> None:
        """The connection ends: work still under way is cancelled."""
        for task in self._tasks.values():
            if task.work is not None and not task.work.done():
                task.work.cancel()
        self._tasks.clear()
