"""A tool call run as a task (2025-11-25): created, followed until it ends, cancelled, resumed.

The app waits for a task as for any call, and polls it: ``tools/call`` with a ``task`` field gives the
task, whose id goes to the call's listener at once (the transcript records it); ``tasks/result`` is
asked for at once (the server answers when the task ends, so a quick task costs no poll), and
``tasks/get`` every ``pollInterval`` the server asks for meanwhile (``MIN_POLL_SECONDS`` to
``MAX_POLL_SECONDS``) for its status and message, as do ``notifications/tasks/status``. Each answer
is a sign of life for the call's clock (a task has no cap on its whole time; its server's ``ttl``
bounds it). Progress comes with the token the call was sent with, for the task's whole life.

Cancelling the call (Esc, the sidebar, a timeout) sends ``tasks/cancel``, waiting at most
``CANCEL_WAIT_SECONDS``; not once the app is ending (``leaving``): the task goes on at its server,
and a resumed conversation fetches its result (``resume_task``).

Mixed into ``ServerHub`` with ``ToolCalls`` (``calls.py``), whose call path runs a call through here
when its tool runs as a task.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.core.tasks import TERMINAL_STATUSES, TaskState, status_message
from mcp_chat_tui.servers.call_clock import CallClock, ProgressRelay

if TYPE_CHECKING:
    import mcp_types
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    from mcp_chat_tui.servers.runtime import ServerRuntime
    from mcp_chat_tui.servers.task_session import TaskSession

TASK_TTL_MS = 24 * 60 * 60 * 1000  # asked of the server: a day, so a conversation resumed later finds it
DEFAULT_POLL_SECONDS = 1.0
MIN_POLL_SECONDS = 0.1
MAX_POLL_SECONDS = 60.0
CANCEL_WAIT_SECONDS = 0.5

TaskListener = Callable[[TaskState], None]


class TaskLost(Exception):
    """A resumed call's task cannot be followed: its server no longer knows it."""


def task_state(task: mcp_types.Task, redactor: Redactor, *, finished_while_closed: bool = False) -> TaskState:
    """The app's record of a server's ``Task`` (its message redacted and cut)."""
    poll = task.poll_interval / 1000 if task.poll_interval is not None else None
    return TaskState(
        task.task_id,
        task.status,
        redactor.text(status_message(task.status_message)),
        poll,
        finished_while_closed,
    )


class TaskCalls:
    """The hub's part for calls run as tasks (mixed in; uses its ``redactor``)."""

    redactor: Redactor
    leaving: bool = False  # the app is ending: tasks are left to finish at their servers, not cancelled

    async def _run_task(
        self, runtime: ServerRuntime, client: Client, call: Any, progress: ProgressRelay, meta: Any
    ) -> Any:
        """The call's ``CallToolResult``, once its task has ended (``call.resume_task``: a task an earlier
        run created). ``call.task`` follows the task's state."""
        import mcp_types
        from mcp.shared.exceptions import MCPError

        from mcp_chat_tui.servers.task_session import task_session

        session = task_session(client)
        if session is None:
            raise MCPError(code=mcp_types.INTERNAL_ERROR, message="this connection cannot run tasks")
        token = f"mct-task-{uuid.uuid4().hex}"
        runtime.task_progress[token] = progress
        try:
            if call.resume_task:
                await self._find_task(session, call)
            else:
                progress_meta = {**(meta or {}), "progressToken": token}
                created = await session.call_tool_as_task(
                    call.tool, call.arguments, ttl_ms=TASK_TTL_MS, meta=progress_meta
                )
                self._heard(call, task_state(created.task, self.redactor))
            runtime.task_calls[call.task.task_id] = (call, progress.clock)
            return await self._follow(session, call, progress.clock)
        except asyncio.CancelledError:
            if call.task is not None and not call.task.terminal and not self.leaving:
                await self._cancel_at_server(session, call)
            raise
        finally:
            runtime.task_progress.pop(token, None)
            if call.task is not None:
                runtime.task_calls.pop(call.task.task_id, None)

    async def _find_task(self, session: TaskSession, call: Any) -> None:
        """A resumed call's task as its server has it now; ``TaskLost`` when it has none."""
        from mcp.shared.exceptions import MCPError

        try:
            task = await self._get(session, call.resume_task)
        except MCPError as exc:
            raise TaskLost(
                f"its task {call.resume_task} (started in an earlier run) is not known to the server now: "
                f"{self.redactor.text(exc.error.message)}"
            ) from None
        self._heard(call, task_state(task, self.redactor, finished_while_closed=task.status in TERMINAL_STATUSES))

    async def _follow(self, session: TaskSession, call: Any, clock: CallClock) -> mcp_types.CallToolResult:
        """Poll the task until ``tasks/result`` answers (asked again once the task has ended when the
        server answered it early with an error)."""
        from mcp.shared.exceptions import MCPError

        fetching: asyncio.Future[mcp_types.CallToolResult] | None = asyncio.ensure_future(self._payload(session, call))
        try:
            while True:
                wait = min(self._poll_seconds(call), clock.limit / 3)
                if fetching is None:
                    await asyncio.sleep(wait)
                else:
                    await asyncio.wait({fetching}, timeout=wait)
                if fetching is not None and fetching.done():
                    error = fetching.exception()
                    if error is None:
                        return self._ended(call, fetching.result())
                    if not isinstance(error, MCPError):
                        raise error
                    if call.task.terminal:
                        return self._failed_task(call, error)
                    fetching = None  # the server would not wait for the end: poll until it comes
                self._heard(call, task_state(await self._get(session, call.task.task_id), self.redactor))
                clock.heard()
                if fetching is None and call.task.terminal:
                    fetching = asyncio.ensure_future(self._payload(session, call))
        finally:
            if fetching is not None and not fetching.done():
                fetching.cancel()
                await asyncio.wait({fetching})

    @staticmethod
    async def _get(session: TaskSession, task_id: str) -> mcp_types.GetTaskResult:
        import mcp_types

        request = mcp_types.GetTaskRequest(params=mcp_types.GetTaskRequestParams(task_id=task_id))
        return await session.send_request(request, mcp_types.GetTaskResult)

    @staticmethod
    async def _payload(session: TaskSession, call: Any) -> mcp_types.CallToolResult:
        """``tasks/result``: the tool's result, checked against its output schema as the SDK checks a call's."""
        import mcp_types

        request = mcp_types.GetTaskPayloadRequest(
            params=mcp_types.GetTaskPayloadRequestParams(task_id=call.task.task_id)
        )
        result = await session.send_request(request, mcp_types.CallToolResult)
        if not result.is_error:
            await session.validate_tool_result(call.tool, result)
        return result

    def _ended(self, call: Any, result: mcp_types.CallToolResult) -> mcp_types.CallToolResult:
        """The task ended with ``result``: its state says so even when no poll saw the end."""
        if not call.task.terminal:
            self._heard(call, replace(call.task, status="failed" if result.is_error else "completed", message=""))
        return result

    def _failed_task(self, call: Any, error: MCPError) -> mcp_types.CallToolResult:
        """A task that ended without a result (failed, or cancelled by its server): an error result."""
        import mcp_types

        task = call.task
        detail = self.redactor.text(error.error.message)
        said = f"the task {task.status.replace('_', ' ')} at the server: {detail}"
        if task.message and task.message != detail:
            said += f" ({task.message})"
        return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=said)], is_error=True)

    @staticmethod
    def _poll_seconds(call: Any) -> float:
        poll = call.task.poll_seconds if call.task is not None else None
        return max(MIN_POLL_SECONDS, min(MAX_POLL_SECONDS, poll if poll is not None else DEFAULT_POLL_SECONDS))

    async def _cancel_at_server(self, session: TaskSession, call: Any) -> None:
        """``tasks/cancel`` for a call stopped here; a server that does not answer in time is left to it."""
        import mcp_types
        from mcp.shared.exceptions import MCPError

        request = mcp_types.CancelTaskRequest(params=mcp_types.CancelTaskRequestParams(task_id=call.task.task_id))
        try:
            answer = await asyncio.wait_for(
                session.send_request(request, mcp_types.CancelTaskResult), CANCEL_WAIT_SECONDS
            )
            self._heard(call, task_state(answer, self.redactor))
        except (TimeoutError, MCPError, OSError) as exc:
            message = self.redactor.text(exc.error.message if isinstance(exc, MCPError) else "no answer in time")
            self._heard(call, replace(call.task, status="cancelled", message=f"tasks/cancel: {message}"))

    def _heard(self, call: Any, state: TaskState) -> None:
        """The task's state changed: kept on the call, told to its listener."""
        if call.task is not None and call.task.finished_while_closed:
            state = replace(state, finished_while_closed=True)
        changed = state != call.task
        call.task = state
        if changed and call.on_task is not None:
            call.on_task(state)

    async def _on_task_status(self, runtime: ServerRuntime, task: mcp_types.Task) -> None:
        """``notifications/tasks/status`` about a task being followed."""
        following = runtime.task_calls.get(task.task_id)
        if following is not None:
            call, clock = following
            self._heard(call, task_state(task, self.redactor))
            clock.heard()

    async def _task_progress(self, runtime: ServerRuntime, params: mcp_types.ProgressNotificationParams) -> None:
        """Progress with the token a task's call was sent with (the SDK hands on what it cannot match)."""
        relay = runtime.task_progress.get(params.progress_token)
        if relay is not None:
            await relay(params.progress, params.total, params.message)
