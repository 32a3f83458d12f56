"""How the agent decides and runs one reply's calls: a call already made in this turn is not run
again, the others are asked about in order (an interrupted call's explicit yes, an "always" that is
kept and saved when asked), then every allowed one runs, concurrently, once its start is saved (or
the user chose to run it unsaved).

Mixed into ``Agent`` (``agent/loop.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from mcp_chat_tui.agent.approval import EDITED_LABEL, ApprovalPolicy, decision_label
from mcp_chat_tui.agent.events import (
    AgentSink,
    ApprovalChoice,
    ApprovalDecision,
    ApprovalNeeded,
    CallDecided,
    CallFinished,
    CallRunUnsaved,
    Notice,
    PlannedCall,
    Recorded,
    StartNotSaved,
    UnsavedChoice,
)
from mcp_chat_tui.agent.tool_provider import ToolProvider
from mcp_chat_tui.agent.turn import (
    DENIED_MESSAGE,
    INTERRUPTED_MESSAGE,
    NOT_ALLOWED_MESSAGE,
    REPEAT_REPLIES,
    SAME_RESULT,
    TurnState,
    call_key,
    not_saved_message,
)
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.core.feedback import answer_prompt, question_of
from mcp_chat_tui.core.tools import FailureKind, ToolSpec


class CallDecisions:
    """The agent's part that decides and runs calls (uses its ``policy``, ``tools``, ``checkpoint``
    and ``_finish``)."""

    policy: ApprovalPolicy
    tools: ToolProvider
    _finish: Callable[[TurnState, AgentSink, CallFinished], None]
    checkpoint: Callable[[], Awaitable[str | None]] | None
    # Called with a call's id when the user sends it unsaved; returns why it could not be noted elsewhere.
    note_unsaved_run: Callable[[str], str | None] | None = None
    _unsaved_question: asyncio.Lock | None = None  # one "run it unsaved?" question at a time
    turn_grants: list[ToolSpec]  # the tools the user said "always" to (this session only) in the last turn

    if TYPE_CHECKING:

        async def _run_call(self, state: TurnState, call: PlannedCall, sink: AgentSink) -> None: ...  # calling.py

    async def _decide_and_run(self, state: TurnState, sink: AgentSink) -> bool:
        """Ask about each call in order, then run every allowed one concurrently; a call made already in
        this turn is given the earlier one's result instead (``_set_repeats_apart``). True stops the turn."""
        approved: list[PlannedCall] = []
        allow_rest = deny_rest = False
        calls = self._set_repeats_apart(state)
        for index, call in enumerate(calls):
            recorded = state.recorded.get(call.id)
            if recorded is not None and recorded.task_id and call.spec is not None and not deny_rest:
                state.resuming[call.id] = recorded.task_id  # its task is followed again: nothing runs anew
                approved.append(call)
                continue
            if recorded is not None and recorded.interrupted:
                deny_rest = await self._decide_interrupted(state, call, len(calls) - index, sink, deny_rest)
                if call.id not in state.outcomes:
                    approved.append(call)
                continue
            allowed_by = ""
            if deny_rest:
                choice = ApprovalChoice.DENY_ALL
            elif call.spec is None:
                message = f"Error ({FailureKind.NOT_READY.value}): no server offers {call.model_name!r} now"
                self._finish(state, sink, CallFinished(call, CallState.ERROR, message))
                continue
            elif recorded is not None and recorded.choice in (ApprovalChoice.DENY.value, ApprovalChoice.DENY_ALL.value):
                choice = ApprovalChoice(recorded.choice)  # a recorded no stands: it runs nothing
                deny_rest = choice == ApprovalChoice.DENY_ALL
            elif allow_rest:
                choice = state.batch_choice
                allowed_by = decision_label(choice, save=state.batch_save)
            elif (verdict := self.policy.verdict(call.spec, call.arguments)).denied:
                self._deny_by_rule(state, call, verdict.why, sink)
                continue
            elif verdict.runs:
                choice, allowed_by = ApprovalChoice.AUTO, verdict.why
            else:
                left = len(calls) - index
                choice, allowed_by, allow_rest = await self._ask_user(state, call, left, recorded, verdict.why, sink)
                deny_rest = choice == ApprovalChoice.DENY_ALL
            if allow_rest and state.batch_choice == ApprovalChoice.ALWAYS_ALL and call.spec is not None:
                self._always_allow(call.spec, state.batch_save, sink)
            sink(CallDecided(call, choice, allowed_by, state.edited.get(call.id)))
            if choice.allows:
                approved.append(call)
            else:
                self._finish(state, sink, CallFinished(call, CallState.DENIED, DENIED_MESSAGE))
        if approved:
            await asyncio.gather(*(self._run_call(state, call, sink) for call in approved))
        self._answer_repeats(state, sink)
        return deny_rest

    def _deny_by_rule(self, state: TurnState, call: PlannedCall, why: str, sink: AgentSink) -> None:
        """config.toml says "never" for this call: it is not run, nobody is asked, the model is told."""
        sink(CallDecided(call, ApprovalChoice.DENY, why))
        self._finish(state, sink, CallFinished(call, CallState.DENIED, NOT_ALLOWED_MESSAGE))

    @staticmethod
    def _set_repeats_apart(state: TurnState) -> list[PlannedCall]:
        """The reply's calls to decide. A call that repeats one of this turn that ran to a result, or
        one before it in this reply, goes to ``state.repeated``: it is not asked about and not run, and
        is given that call's result (small models write the same call many times over)."""
        calls: list[PlannedCall] = []
        first: dict[tuple[str, str], PlannedCall] = {}
        for call in state.calls:
            key = call_key(call)
            ran = state.ran.get(key) if call.id not in state.recorded else None
            earlier = ran.call if ran is not None else first.get(key)
            if earlier is not None:
                state.repeated.append((call, earlier))
            else:
                first.setdefault(key, call)
                calls.append(call)
        return calls

    def _answer_repeats(self, state: TurnState, sink: AgentSink) -> None:
        """Each repeated call is given the earlier call's outcome (what the model was told of it), and
        counted; the app's message after the reply's results puts the user's question again."""
        if state.repeated and state.repeat_replies + 1 < REPEAT_REPLIES:  # not when these end the turn
            state.feedback.append(answer_prompt(question_of(state.turn)))
        for call, earlier in state.repeated:
            state.repeats, state.last_repeat = state.repeats + 1, call.model_name
            self._finish(state, sink, CallFinished(call, CallState.REPEATED, SAME_RESULT, repeat_of=earlier.id))
        state.repeated = []

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
        label = decision_label(choice, save=saved)
        if choice.allows and decision.arguments is not None and decision.arguments != call.arguments:
            state.edited[call.id] = decision.arguments  # it runs with the user's arguments
            label = EDITED_LABEL
        return choice, label, allow_rest

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
        self._finish(state, sink, CallFinished(call, CallState.INTERRUPTED, INTERRUPTED_MESSAGE))
        return deny_rest

    def _always_allow(self, spec: ToolSpec, save: bool, sink: AgentSink) -> bool:
        """The user's "always" for a tool; a save that fails is said (the session keeps the choice).
        Returns whether it was saved."""
        problem = self.policy.always_allow(spec, save=save)
        if not save:
            self.turn_grants.append(spec)  # withdrawn if ``/retry`` discards this reply
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
        self._finish(state, sink, CallFinished(call, CallState.CANCELLED, message, not_sent=problem))
        return False

    async def _ask_unsaved(self, call: PlannedCall, problem: str, sink: AgentSink) -> UnsavedChoice:
        future: asyncio.Future[UnsavedChoice] = asyncio.get_running_loop().create_future()
        sink(StartNotSaved(call, problem, future))
        try:
            return await future
        finally:
            if not future.done():
                future.cancel()
