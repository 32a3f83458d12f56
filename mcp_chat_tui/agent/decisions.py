"""How the agent decides and runs one reply's calls: a call already made in this turn is not run
again, the others are asked about in order (an interrupted call's explicit yes, an "always" that is
kept and saved when asked), then every allowed one runs, concurrently.

Mixed into ``Agent`` (``agent/loop.py``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import datetime

from mcp_chat_tui.agent.approval import ApprovalPolicy, decision_label
from mcp_chat_tui.agent.events import (
    AgentSink,
    ApprovalChoice,
    ApprovalDecision,
    ApprovalNeeded,
    CallDecided,
    CallFinished,
    CallProgress,
    CallStarted,
    CallStatus,
    Notice,
    PlannedCall,
    Recorded,
)
from mcp_chat_tui.agent.tool_provider import ToolProvider
from mcp_chat_tui.agent.turn import (
    DENIED_MESSAGE,
    INTERRUPTED_MESSAGE,
    TurnState,
    call_key,
    repeat_message,
    seconds,
)
from mcp_chat_tui.core.tools import FailureKind, ToolSpec


class CallDecisions:
    """The agent's part that decides and runs calls (uses its ``policy``, ``tools``, ``checkpoint``
    and ``_finish``)."""

    policy: ApprovalPolicy
    tools: ToolProvider
    checkpoint: Callable[[], Awaitable[None]] | None
    _finish: Callable[[TurnState, AgentSink, CallFinished], None]

    async def _decide_and_run(self, state: TurnState, sink: AgentSink) -> bool:
        """Ask about each call in order, then run every allowed one concurrently; a call that already
        ran to a result in an earlier round of this turn is given that result instead (never asked
        about, never run; the same call twice in one reply runs twice: the model asked for both).
        True stops the turn."""
        approved: list[PlannedCall] = []
        allow_rest = False
        deny_rest = False
        for index, call in enumerate(state.calls):
            recorded = state.recorded.get(call.id)
            if recorded is not None and recorded.interrupted:
                deny_rest = await self._decide_interrupted(state, call, len(state.calls) - index, sink, deny_rest)
                if call.id not in state.outcomes:
                    approved.append(call)
                continue
            earlier = state.ran.get(call_key(call)) if recorded is None else None
            if earlier is not None:  # the model has this call's result: not asked about, not run
                state.repeated.append((call, earlier))
                continue
            allowed_by = ""
            if deny_rest:
                choice = ApprovalChoice.DENY_ALL
            elif call.spec is None:
                message = f"Error ({FailureKind.NOT_READY.value}): no server offers {call.model_name!r} now"
                self._finish(state, sink, CallFinished(call, CallStatus.ERROR, message))
                continue
            elif recorded is not None and recorded.choice in (ApprovalChoice.DENY.value, ApprovalChoice.DENY_ALL.value):
                choice = ApprovalChoice(recorded.choice)  # a recorded no stands: it runs nothing
                deny_rest = choice == ApprovalChoice.DENY_ALL
            elif allow_rest:
                choice = state.batch_choice
                allowed_by = decision_label(choice, save=state.batch_save)
            elif (verdict := self.policy.verdict(call.spec)).runs:
                choice, allowed_by = ApprovalChoice.AUTO, verdict.why
            else:
                remaining = len(state.calls) - index
                choice, allowed_by, allow_rest = await self._ask_user(
                    state, call, remaining, recorded, verdict.why, sink
                )
                deny_rest = choice == ApprovalChoice.DENY_ALL
            if allow_rest and state.batch_choice == ApprovalChoice.ALWAYS_ALL and call.spec is not None:
                self._always_allow(call.spec, state.batch_save, sink)
            sink(CallDecided(call, choice, allowed_by))
            if choice.allows:
                approved.append(call)
            else:
                self._finish(state, sink, CallFinished(call, CallStatus.DENIED, DENIED_MESSAGE))
        if approved:
            await asyncio.gather(*(self._run_call(state, call, sink) for call in approved))
        self._answer_repeats(state, sink)
        return deny_rest

    def _answer_repeats(self, state: TurnState, sink: AgentSink) -> None:
        """Each repeated call is given the earlier call's result (what the model was told of it), and counted."""
        for call, earlier in state.repeated:
            state.repeats += 1
            told = repeat_message(call, earlier.content_for_model)
            self._finish(state, sink, CallFinished(call, CallStatus.REPEATED, told, repeat_of=earlier.call.id))
        state.repeated = []

    async def _run_call(self, state: TurnState, call: PlannedCall, sink: AgentSink) -> None:
        assert call.spec is not None
        sink(CallStarted(call, datetime.now()))
        if self.checkpoint is not None:
            await self.checkpoint()  # the start is on record before the call goes out
        started = state.started[call.id] = time.perf_counter()
        result = await self.tools.call_tool(
            call.spec.server,
            call.spec.name,
            call.arguments,
            on_progress=lambda progress: sink(CallProgress(call, progress)),
        )
        if result.failure is not None and result.failure.kind == FailureKind.TIMEOUT:
            status = CallStatus.TIMEOUT
        else:
            status = CallStatus.ERROR if not result.ok else CallStatus.DONE
        self._finish(
            state,
            sink,
            CallFinished(
                call,
                status,
                result.for_model(),
                result,
                seconds(result.duration or time.perf_counter() - started),
            ),
        )

    async def _ask_user(
        self,
        state: TurnState,
        call: PlannedCall,
        remaining: int,
        recorded: Recorded | None,
        why: str,
        sink: AgentSink,
    ) -> tuple[ApprovalChoice, str, bool]:
        """Ask the user about one call.

        Returns:
            The choice, who allowed the call, and whether the choice allows the rest of the batch.
        """
        assert call.spec is not None
        shown = recorded if recorded is not None and recorded.choice else None
        decision = await self._ask(call, remaining, sink, shown, why)
        choice = decision.choice
        saved = decision.save
        if choice == ApprovalChoice.ALWAYS_TOOL:  # ALWAYS_ALL: by the caller, with the rest of the batch
            saved = self._always_allow(call.spec, decision.save, sink)
        allow_rest = choice in (ApprovalChoice.ALLOW_PENDING, ApprovalChoice.ALWAYS_ALL)
        if allow_rest:
            state.batch_choice, state.batch_save = choice, decision.save
        return choice, decision_label(choice, save=saved), allow_rest

    async def _decide_interrupted(
        self, state: TurnState, call: PlannedCall, waiting: int, sink: AgentSink, deny_rest: bool
    ) -> bool:
        """An interrupted call runs again only on an explicit yes (never by policy); otherwise it
        ends as interrupted. Returns whether the rest of the calls are denied."""
        recorded = state.recorded[call.id]
        if not deny_rest and call.spec is not None:
            decision = await self._ask(call, waiting, sink, recorded)
            if decision.choice.allows:  # a yes for this call only: it does not allow the calls after it
                saved = decision.save
                if decision.choice in (ApprovalChoice.ALWAYS_TOOL, ApprovalChoice.ALWAYS_ALL):
                    saved = self._always_allow(call.spec, decision.save, sink)
                sink(CallDecided(call, decision.choice, decision_label(decision.choice, save=saved)))
                return False
            deny_rest = decision.choice == ApprovalChoice.DENY_ALL
        self._finish(state, sink, CallFinished(call, CallStatus.INTERRUPTED, INTERRUPTED_MESSAGE))
        return deny_rest

    def _always_allow(self, spec: ToolSpec, save: bool, sink: AgentSink) -> bool:
        """The user's "always" for a tool; a save that fails is said (the session keeps the choice).
        Returns whether it was saved."""
        problem = self.policy.always_allow(spec, save=save)
        if problem is not None:
            sink(Notice(f"{spec.server} › {spec.name}: always allowed for this session, {problem}"))
        return save and problem is None

    async def _ask(
        self, call: PlannedCall, waiting: int, sink: AgentSink, recorded: Recorded | None = None, why: str = ""
    ) -> ApprovalDecision:
        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        sink(ApprovalNeeded(call, waiting, future, recorded, why))
        try:
            return await future
        finally:
            if not future.done():
                future.cancel()
