"""How the agent runs one allowed call: its start on disk first, the call (as a task when its server
runs it as one), its result; a call the user cancels alone; the task of a resumed call followed
again, which runs nothing anew.

Mixed into ``Agent`` (``agent/loop.py``), whose ``_decide_and_run`` runs the allowed calls together.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from mcp_chat_tui.agent.events import (
    AgentSink,
    CallFinished,
    CallProgress,
    CallStarted,
    CallStatus,
    CallTask,
    PlannedCall,
)
from mcp_chat_tui.agent.turn import CANCELLED_MESSAGE, EDITED_NOTE, TurnState, seconds, task_lost_message
from mcp_chat_tui.core.tools import FailureKind, ToolCallResult


class CallRunning:
    """The agent's part that sends calls (uses its ``tools``, ``_start_saved`` and ``_finish``)."""

    tools: Any
    _finish: Callable[[TurnState, AgentSink, CallFinished], None]
    _start_saved: Callable[[TurnState, PlannedCall, AgentSink], Awaitable[bool]]
    _turn_state: TurnState | None = None  # the turn running now

    def cancel_call(self, call_id: str) -> bool:
        """Cancel one running call of the turn (a task is cancelled at its server); the turn goes on
        and the model is told. False when no call of that id is running."""
        state = self._turn_state
        running = state.running.get(call_id) if state is not None else None
        if running is None or running.done():
            return False
        running.cancel()
        return True

    async def _run_call(self, state: TurnState, call: PlannedCall, sink: AgentSink) -> None:
        assert call.spec is not None
        task_id = state.resuming.get(call.id)
        if task_id is None:
            sink(CallStarted(call, datetime.now()))
            if not await self._start_saved(state, call, sink):  # the start is on disk before the call goes out
                return
        started = state.started[call.id] = time.perf_counter()

        def on_progress(progress: Any) -> None:
            sink(CallProgress(call, progress))

        def on_task(task: Any) -> None:
            sink(CallTask(call, task))

        arguments = state.edited.get(call.id, call.arguments)  # the user's edit, when they made one
        if task_id is None:
            work = self.tools.call_tool(
                call.spec.server, call.spec.name, arguments, on_progress=on_progress, on_task=on_task
            )
        else:
            work = self.tools.resume_task(
                call.spec.server, call.spec.name, arguments, task_id, on_progress=on_progress, on_task=on_task
            )
        result = await self._await_call(state, call, work)
        elapsed = seconds(time.perf_counter() - started)
        if result is None:
            self._finish(state, sink, CallFinished(call, CallStatus.CANCELLED, CANCELLED_MESSAGE, None, elapsed))
            return
        outcome = self._outcome(call, result, elapsed)
        if call.id in state.edited:  # the model is told the call ran with other arguments than its own
            note = EDITED_NOTE.format(arguments=json.dumps(state.edited[call.id], ensure_ascii=False))
            outcome = replace(outcome, content_for_model=f"{note}\n\n{outcome.content_for_model}")
        self._finish(state, sink, outcome)

    @staticmethod
    def _outcome(call: PlannedCall, result: ToolCallResult, elapsed: float) -> CallFinished:
        failure = result.failure
        if failure is not None and failure.kind == FailureKind.TASK_LOST:  # a resumed call's task is gone
            return CallFinished(call, CallStatus.INTERRUPTED, task_lost_message(failure.message), result)
        if failure is not None and failure.kind == FailureKind.TIMEOUT:
            status = CallStatus.TIMEOUT
        else:
            status = CallStatus.ERROR if not result.ok else CallStatus.DONE
        return CallFinished(call, status, result.for_model(), result, seconds(result.duration or elapsed))

    @staticmethod
    async def _await_call(
        state: TurnState, call: PlannedCall, work: Awaitable[ToolCallResult]
    ) -> ToolCallResult | None:
        """The call's result; None when the user cancelled this call alone (``cancel_call``). A stop of
        the whole turn goes on as the stop it is."""
        running = asyncio.ensure_future(work)
        state.running[call.id] = running
        try:
            return await running
        except asyncio.CancelledError:
            this = asyncio.current_task()
            if this is not None and this.cancelling():  # the turn itself is being stopped
                raise
            return None
        finally:
            state.running.pop(call.id, None)
