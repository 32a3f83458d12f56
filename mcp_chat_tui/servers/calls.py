"""The hub's tool call path: one call to a server's tool, its progress, and the server's usage figures.

Mixed into ``ServerHub`` (like ``CatalogAccess`` and ``ServerContext``), so ``hub.py`` stays the
place that starts, stops and tracks the servers.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from mcp_chat_tui.core.progress import ToolProgress
from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.core.tasks import TaskState
from mcp_chat_tui.core.text import lone_surrogate
from mcp_chat_tui.core.tools import FailureKind, ToolCallResult, ToolFailure, ToolSpec
from mcp_chat_tui.servers.builtin import BUILTIN_SERVER, Resources, call_builtin
from mcp_chat_tui.servers.call_clock import CallClock, ProgressListener, ProgressRelay, still_quiet
from mcp_chat_tui.servers.client_context import log_level_meta
from mcp_chat_tui.servers.incoming_requests import RequestDesk
from mcp_chat_tui.servers.request_ties import how_it_ended
from mcp_chat_tui.servers.results import call_failure, convert_result, server_broke_protocol, unreadable_answer
from mcp_chat_tui.servers.runtime import needs_sign_in, sign_in_failure
from mcp_chat_tui.servers.state import ServerState, ToolUsage
from mcp_chat_tui.servers.task_calls import TaskCalls, TaskListener, TaskLost
from mcp_chat_tui.servers.url_required import MAX_ROUNDS, not_visited, pages_required, redacted_pages, still_required

if TYPE_CHECKING:
    from mcp_types import ElicitRequestURLParams

    from mcp_chat_tui.servers.runtime import ServerRuntime


@dataclass
class _Call:
    """One call under way: which tool, with what, and since when; a call run as a task
    (``task_support``, or ``resume_task``: the id of the task an earlier run created) has its
    ``task``'s latest state, which ``on_task`` hears."""

    server: str
    tool: str
    arguments: dict[str, Any]
    started_at: datetime = field(default_factory=datetime.now)
    clock: float = field(default_factory=time.perf_counter)
    task_support: str = ""
    resume_task: str = ""
    on_task: TaskListener | None = None
    task: TaskState | None = None
    pages: list[ElicitRequestURLParams] | None = None  # what its server asked to be visited first (-32042)

    @property
    def as_task(self) -> bool:
        return bool(self.task_support or self.resume_task)

    def elapsed(self) -> float:
        return time.perf_counter() - self.clock


class ToolCalls(TaskCalls):
    """What ``ServerHub`` does to call tools (mixed in; uses its ``_runtimes``, ``redactor``,
    ``tool_timeout``, ``max_result_chars``, ``find_tool``, ``_set_state`` and ``_changed``)."""

    _runtimes: dict[str, ServerRuntime]
    redactor: Redactor
    tool_timeout: float
    max_result_chars: int
    _changed: Callable[..., None]
    _set_state: Callable[..., None]
    find_tool: Callable[[str], ToolSpec | None]
    requests: RequestDesk

    async def call_tool(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressListener | None = None,
        on_task: TaskListener | None = None,
    ) -> ToolCallResult:
        """Call one tool; a failure comes back as ``result.failure``, never as an exception.

        ``on_progress`` hears the call's progress (redacted): the latest at most once a frame, and
        the last before the call returns (``call_clock.py``); the last one is kept on the result.
        A tool its server runs as a task runs as one (``task_calls.py``): ``on_task`` hears its
        state as it changes, the first time as soon as the task exists. Cancelling the awaiting
        task cancels the request at the server (the SDK sends ``notifications/cancelled``; a task
        gets ``tasks/cancel``) and leaves the server usable.
        """
        arguments = dict(arguments or {})
        if server == BUILTIN_SERVER:
            return await call_builtin(cast(Resources, self), tool, arguments)  # the hub is also CatalogAccess
        call = _Call(server, tool, arguments, on_task=on_task)
        return await self._call_or_resume(call, timeout, on_progress)

    async def resume_task(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        task_id: str,
        *,
        on_progress: ProgressListener | None = None,
        on_task: TaskListener | None = None,
    ) -> ToolCallResult:
        """Follow the task an earlier run created for a call until it ends, as ``call_tool`` follows
        one (nothing is called again); its state says whether it had ``finished_while_closed``. A
        failure of kind ``TASK_LOST`` says why it cannot be followed (the server is not running, or
        no longer knows the task)."""
        call = _Call(server, tool, dict(arguments), resume_task=task_id, on_task=on_task)
        return await self._call_or_resume(call, None, on_progress)

    async def _call_or_resume(
        self, call: _Call, timeout: float | None, on_progress: ProgressListener | None
    ) -> ToolCallResult:
        runtime = self._runtimes.get(call.server)
        if runtime is None:
            return self._failed_call(
                call, self._kind(call, FailureKind.UNKNOWN_TOOL), f"there is no server named {call.server!r}"
            )
        refusal = self._refusal(call, runtime)
        if refusal is not None:
            return self._failed_call(call, self._kind(call, refusal[0]), refusal[1])
        spec = next((spec for spec in runtime.status.tools if spec.name == call.tool), None)
        call.task_support = spec.task_support if spec is not None else ""
        limit = timeout or runtime.config.timeout or self.tool_timeout
        result = await self._call_on_server(runtime, call, limit, on_progress)
        return await self._visit_and_call_again(runtime, call, result, limit, on_progress)

    async def _visit_and_call_again(
        self,
        runtime: ServerRuntime,
        call: _Call,
        result: ToolCallResult,
        limit: float,
        on_progress: ProgressListener | None,
    ) -> ToolCallResult:
        """The server answered that pages must be visited first (-32042, ``url_required.py``): the
        user is shown them, and once done the call is sent again (at most ``MAX_ROUNDS`` times). The
        time they are shown stops the clocks of the server's other calls, as a form's does."""
        for _ in range(MAX_ROUNDS):
            pages, call.pages = call.pages, None
            if not pages:
                return result
            pages = redacted_pages(pages, self.redactor)
            with runtime.life.asking():  # a person's time on the pages is no call's (``call_clock.py``)
                why = await self.requests.visit_required(runtime.status, call.tool, pages)
            if why:
                return self._failed_call(call, FailureKind.REFUSED, not_visited(call.tool, pages, why))
            refusal = self._refusal(call, runtime)  # the server may have gone meanwhile
            if refusal is not None:
                return self._failed_call(call, *refusal)
            result = await self._call_on_server(runtime, call, limit, on_progress)
        if call.pages:
            return self._failed_call(call, FailureKind.REFUSED, still_required(call.tool, call.pages))
        return result

    @staticmethod
    def _kind(call: _Call, kind: FailureKind) -> FailureKind:
        """A resumed task that cannot be reached is lost to this run, whatever kept it from being reached."""
        return FailureKind.TASK_LOST if call.resume_task else kind

    def _refusal(self, call: _Call, runtime: ServerRuntime) -> tuple[FailureKind, str] | None:
        """Why ``call`` cannot go to its server now (not ready, no such tool), or None."""
        server, tool = call.server, call.tool
        if runtime.status.state is ServerState.NEEDS_SIGN_IN:
            return FailureKind.NEEDS_SIGN_IN, needs_sign_in(runtime)
        if not runtime.status.state.usable or runtime.client is None:
            why = f": {runtime.status.reason}" if runtime.status.reason else ""
            return FailureKind.NOT_READY, f"server {server!r} is {runtime.status.state.value}{why}"
        if runtime.status.tools and not any(spec.name == tool for spec in runtime.status.tools):
            return FailureKind.UNKNOWN_TOOL, f"server {server!r} has no tool named {tool!r}"
        surrogate = lone_surrogate(call.arguments)
        if surrogate is not None:  # the SDK could not encode the request, and the connection would end
            return (
                FailureKind.REFUSED,
                f"the arguments hold a lone surrogate ({surrogate}), which no server can be sent",
            )
        return None

    def _failed_call(self, call: _Call, kind: FailureKind, message: str) -> ToolCallResult:
        return ToolCallResult(
            server=call.server,
            tool=call.tool,
            arguments=call.arguments,
            started_at=call.started_at,
            duration=call.elapsed(),
            failure=ToolFailure(kind, self.redactor.text(message)),
            is_error=True,
            task=call.task,
        )

    async def _call_on_server(
        self, runtime: ServerRuntime, call: _Call, limit: float, on_progress: ProgressListener | None
    ) -> ToolCallResult:
        """Send the call; the server is busy while any call is in flight. The call is given up when
        its clock runs out (``call_clock.py``: ``limit`` counts from the server's last sign of life)."""
        client = runtime.client
        if client is None:  # gone since it was found ready
            return self._failed_call(call, FailureKind.NOT_READY, f"server {call.server!r} is not connected")
        runtime.status.calls_in_flight += 1
        if runtime.status.state == ServerState.READY:
            self._set_state(runtime, ServerState.BUSY)
        result: ToolCallResult | None = None
        clock = CallClock(limit, runtime.life, capped=not call.as_task)
        progress = ProgressRelay(on_progress, self.redactor, clock)
        lost: asyncio.Future[str] = asyncio.get_running_loop().create_future()  # the hub read its answer and failed
        runtime.answers_awaited.add(lost)
        under_way = runtime.calls.begin()  # the server's requests meanwhile are for it (request_ties.py)
        meta = log_level_meta(client, runtime.status.log_level)
        if call.as_task:
            sending = asyncio.ensure_future(self._run_task(runtime, client, call, progress, meta))
        else:
            sending = asyncio.ensure_future(
                client.call_tool(call.tool, call.arguments, progress_callback=progress, meta=meta)  # type: ignore[arg-type]
            )
        try:
            either: list[asyncio.Future[Any]] = [sending, lost]
            while not (sending.done() or lost.done()):
                if clock.seconds_left() <= 0 and await still_quiet(clock):
                    break
                await asyncio.wait(either, timeout=max(clock.seconds_left(), 0), return_when=asyncio.FIRST_COMPLETED)
            result = self._outcome(call, sending, lost, clock)
        except Exception as exc:  # noqa: BLE001 - a tool failure never raises into the caller
            result = self._call_failed(runtime, call, exc, limit)
        finally:
            progress.close()  # the last progress is heard before the result
            runtime.answers_awaited.discard(lost)
            runtime.calls.end(under_way, how_it_ended(call.tool, result))
            if not sending.done():
                sending.cancel()  # stopped, given up, or its answer is lost: the SDK tells the server
                await asyncio.wait({sending})
            self._call_over(runtime, call, result, progress.latest)
        return result

    def _outcome(
        self, call: _Call, sending: asyncio.Future[Any], lost: asyncio.Future[str], clock: CallClock
    ) -> ToolCallResult:
        """The call's result: the server's answer (raises what the SDK raised), its answer lost, or out of time."""
        if sending.done():
            result = convert_result(
                sending.result(),
                call.server,
                call.tool,
                call.arguments,
                call.started_at,
                self.max_result_chars,
                self.redactor,
            )
            result.task = call.task
            return result
        if lost.done():
            return self._failed_call(call, FailureKind.PROTOCOL_ERROR, unreadable_answer(call.server, lost.result()))
        why = f"{call.tool} {clock.out_of_time()}; the call was cancelled (the server keeps running)"
        return self._failed_call(call, FailureKind.TIMEOUT, why)

    def _call_failed(self, runtime: ServerRuntime, call: _Call, exc: Exception, limit: float) -> ToolCallResult:
        """The failed call's result; a crash marks the server crashed, a protocol breach is counted.
        A call its server's sign-in ended (``servers/oauth_sign_in.py``) says so instead."""
        if isinstance(exc, TaskLost):
            return self._failed_call(call, FailureKind.TASK_LOST, str(exc))
        signing = sign_in_failure(runtime)
        if signing is not None:
            return self._failed_call(call, *signing)
        kind, message, crash = call_failure(exc, call.server, call.tool, limit)
        call.pages = pages_required(exc)
        result = self._failed_call(call, kind, message)
        if crash:
            self._mark_crashed(runtime, crash)
        if server_broke_protocol(exc):
            runtime.status.protocol_problem_count += 1
            runtime.status.protocol_problems.append(
                f"{call.tool}: {result.failure.message if result.failure else message}"
            )
        return result

    def _call_over(
        self, runtime: ServerRuntime, call: _Call, result: ToolCallResult | None, latest: ToolProgress | None
    ) -> None:
        """The call ended (``result`` is None when it was cancelled): its duration, last progress,
        the server's usage figures and state."""
        runtime.status.calls_in_flight -= 1
        if result is not None:
            if latest is not None:
                result.progress = latest
            result.duration = call.elapsed()
            self._record_usage(runtime, result)
        if runtime.status.calls_in_flight == 0 and runtime.status.state == ServerState.BUSY:
            self._set_state(runtime, ServerState.READY)
        elif result is not None:
            self._changed(runtime)

    def _record_usage(self, runtime: ServerRuntime, result: ToolCallResult) -> None:
        status = runtime.status
        status.call_count += 1
        status.last_latency = result.duration
        status.total_latency += result.duration
        usage = status.usage.setdefault(result.tool, ToolUsage())
        usage.calls += 1
        usage.total_seconds += result.duration
        if not result.ok:
            usage.errors += 1

    def _mark_crashed(self, runtime: ServerRuntime, reason: str) -> None:
        if runtime.status.state.usable and not runtime.stopping:
            self._set_state(runtime, ServerState.CRASHED, reason)
            runtime.stop.set()
