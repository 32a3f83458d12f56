"""How the agent decides one proposed call with the user: asking, an interrupted call's explicit
yes, an "always" that is kept (and saved, when asked), and a call whose start could not be saved.

Mixed into ``Agent`` (``agent/loop.py``), whose ``_decide_and_run`` goes through the calls in order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from mcp_chat_tui.agent.approval import ApprovalPolicy, decision_label
from mcp_chat_tui.agent.events import (
    AgentSink,
    ApprovalChoice,
    ApprovalDecision,
    ApprovalNeeded,
    CallDecided,
    CallFinished,
    CallRunUnsaved,
    CallStatus,
    Notice,
    PlannedCall,
    Recorded,
    StartNotSaved,
    UnsavedChoice,
)
from mcp_chat_tui.agent.turn import INTERRUPTED_MESSAGE, TurnState, not_saved_message
from mcp_chat_tui.core.tools import ToolSpec


class CallDecisions:
    """The agent's part that asks about calls (uses its ``policy`` and ``_finish``)."""

    policy: ApprovalPolicy
    _finish: Callable[[TurnState, AgentSink, CallFinished], None]
    checkpoint: Callable[[], Awaitable[str | None]] | None
    # Called with a call's id when the user sends it unsaved; returns why it could not be noted elsewhere.
    note_unsaved_run: Callable[[str], str | None] | None = None
    _unsaved_question: asyncio.Lock | None = None  # one "run it unsaved?" question at a time

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

    async def _start_saved(self, state: TurnState, call: PlannedCall, sink: AgentSink) -> bool:
        """Whether ``call`` may be sent now that ``CallStarted`` was reported: its start is on disk
        (``checkpoint`` returns None), or the user chose to run it unsaved. Otherwise it is finished
        here as not sent, and the model is told why."""
        if self.checkpoint is None or (problem := await self.checkpoint()) is None:
            return True
        if self._unsaved_question is None:
            self._unsaved_question = asyncio.Lock()
        async with self._unsaved_question:  # calls run together: their questions come one by one
            while (problem := await self.checkpoint()) is not None:
                choice = await self._ask_unsaved(call, problem, sink)
                if choice is UnsavedChoice.RUN_UNSAVED:
                    noted = self.note_unsaved_run(call.id) if self.note_unsaved_run is not None else None
                    sink(CallRunUnsaved(call, problem, noted or ""))
                    return True
                if choice is UnsavedChoice.DONT_RUN:
                    break
        if problem is None:
            return True
        message = not_saved_message(problem)
        self._finish(state, sink, CallFinished(call, CallStatus.CANCELLED, message, not_sent=problem))
        return False

    async def _ask_unsaved(self, call: PlannedCall, problem: str, sink: AgentSink) -> UnsavedChoice:
        future: asyncio.Future[UnsavedChoice] = asyncio.get_running_loop().create_future()
        sink(StartNotSaved(call, problem, future))
        try:
            return await future
        finally:
            if not future.done():
                future.cancel()
