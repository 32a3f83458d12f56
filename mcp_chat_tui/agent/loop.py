"""One turn of the conversation as an async loop: generate, decide, call tools, generate again.

The agent owns the conversation's messages (OpenAI chat shape) and reports
everything it does to a sink. It holds no widgets and imports no UI.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from mcp_chat_tui.agent.approval import ApprovalPolicy
from mcp_chat_tui.agent.events import (
    AgentSink,
    ApprovalChoice,
    ApprovalDecision,
    ApprovalNeeded,
    AssistantText,
    AssistantThinking,
    CallDecided,
    CallFinished,
    CallProposed,
    CallStarted,
    CallStatus,
    GenerationRate,
    GenerationStats,
    MalformedCall,
    Notice,
    PlannedCall,
    TurnEnd,
    TurnFinished,
    TurnStarted,
)
from mcp_chat_tui.core.tools import FailureKind, ToolCallResult, ToolSpec
from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.engine.events import (
    Done,
    EngineError,
    Stats,
    TextDelta,
    ThinkingDelta,
    Throughput,
    ToolCallMalformed,
    ToolCallProposed,
)

DENIED_MESSAGE = "The user denied this tool call. Do not retry it; answer without it or ask the user."
STOPPED_MESSAGE = "The user stopped this tool call before it finished."
MALFORMED_NAME = "malformed_tool_call"


class ToolProvider(Protocol):
    """What the agent needs from the server hub."""

    def tools(self) -> list[ToolSpec]: ...

    def find_tool(self, model_name: str) -> ToolSpec | None: ...

    async def call_tool(self, server: str, tool: str, arguments: dict[str, Any] | None = None) -> ToolCallResult: ...


def malformed_content(reason: str) -> str:
    return (
        f"Error: that tool call could not be used ({reason}). "
        "Call a listed tool by its exact name with a JSON object of arguments."
    )


class Agent:
    """Runs turns against an engine and a tool provider; keeps every message of the conversation.

    ``max_turns`` user turns (the current one included) go into each prompt;
    older turns are dropped whole, tool messages with them. ``max_iterations``
    bounds the generate/call rounds of one turn (None: no limit); at the limit
    one last generation runs without tools.
    """

    def __init__(
        self,
        engine: Engine,
        tools: ToolProvider,
        policy: ApprovalPolicy,
        *,
        system_prompt: str = "",
        max_turns: int = 3,
        max_iterations: int | None = None,
    ) -> None:
        self.engine = engine
        self.tools = tools
        self.policy = policy
        self.system_prompt = system_prompt
        self.max_turns = max_turns
        self.max_iterations = max_iterations
        self.turns: list[list[dict[str, Any]]] = []
        self._told_no_tools = False
        self._running: asyncio.Task[Any] | None = None

    # ----- the prompt ------------------------------------------------------------------------

    @property
    def messages(self) -> list[dict[str, Any]]:
        """Every message of the conversation so far, oldest first (no system prompt)."""
        return [message for turn in self.turns for message in turn]

    def prompt_messages(self) -> list[dict[str, Any]]:
        """What the model is sent: the system prompt and the last ``max_turns`` turns."""
        window = [message for turn in self.turns[-self.max_turns:] for message in turn]
        if self.system_prompt:
            return [{"role": "system", "content": self.system_prompt}, *window]
        return window

    def load_messages(self, messages: Sequence[dict[str, Any]]) -> None:
        """Replace the conversation (e.g. from a transcript); a turn starts at each user message."""
        self.turns = []
        for message in messages:
            if message.get("role") == "user" or not self.turns:
                self.turns.append([])
            self.turns[-1].append(dict(message))

    # ----- stopping --------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._running is not None and not self._running.done()

    def stop(self) -> bool:
        """Stop the running turn: generation ends within a token, running calls are cancelled."""
        if self.busy and self._running is not None:
            self._running.cancel()
            return True
        return False

    # ----- a turn ----------------------------------------------------------------------------

    async def run_turn(self, prompt: str, sink: AgentSink) -> TurnEnd:
        """Run one user turn to its end; the partial answer is kept when the user stops it."""
        self.turns.append([{"role": "user", "content": prompt}])
        sink(TurnStarted(prompt))
        state = _TurnState()
        return await self._supervise(state, sink, self._turn(state, sink))

    async def continue_turn(
        self, pending: list[tuple[PlannedCall, ApprovalChoice | None]], sink: AgentSink
    ) -> TurnEnd:
        """Finish a turn a transcript left open at its last reply's tool calls.

        The conversation (loaded with ``load_messages``) ends with the assistant
        message that proposed ``pending``; calls with a choice run (or are
        denied) without asking, the others are asked about; then the turn goes
        on as usual.
        """
        state = _TurnState()
        state.calls = [call for call, _ in pending]
        state.open_calls = list(state.calls)
        state.predecided = {call.id: choice for call, choice in pending if choice is not None}
        state.reply_recorded = True
        return await self._supervise(state, sink, self._turn(state, sink, resume=True))

    async def _supervise(self, state: _TurnState, sink: AgentSink, work: Any) -> TurnEnd:
        self._running = asyncio.ensure_future(work)
        try:
            end = await asyncio.shield(self._running)
        except asyncio.CancelledError:
            if not self._running.cancelled():
                self._running.cancel()  # our caller was cancelled: stop the work too
                await asyncio.wait({self._running})
                self._close_stopped(state)
                sink(TurnFinished(TurnEnd.STOPPED, state.iterations))
                raise
            end = TurnEnd.STOPPED
            self._close_stopped(state)
        except EngineError as exc:
            end = TurnEnd.ERROR
            self._close_stopped(state)  # keep what the reply said before the engine failed
            sink(TurnFinished(end, state.iterations, str(exc)))
            return end
        finally:
            self._running = None
        sink(TurnFinished(end, state.iterations))
        return end

    async def _turn(self, state: _TurnState, sink: AgentSink, *, resume: bool = False) -> TurnEnd:
        turn = self.turns[-1]
        if resume:
            stop_turn = await self._decide_and_run(state, sink)
            state.clear_calls()
            if stop_turn:
                return TurnEnd.STOPPED
        while True:
            state.iterations += 1
            at_limit = self.max_iterations is not None and state.iterations > self.max_iterations
            offered = [] if at_limit else self._offered_tools(sink)
            state.reply_recorded = False
            await self._generate(state, offered, sink)
            assistant: dict[str, Any] = {"role": "assistant", "content": state.text}
            calls = state.calls + state.malformed
            if calls:
                assistant["tool_calls"] = [wire_call(call) for call in calls]
            state.reset_reply()
            turn.append(assistant)
            state.reply_recorded = True
            if not calls:
                return TurnEnd.LIMIT if at_limit else TurnEnd.ANSWERED
            state.open_calls = list(calls)
            for malformed in state.malformed_planned:
                self._finish(state, sink, CallFinished(malformed, CallStatus.MALFORMED, state.malformed_reasons[malformed.id]))
            stop_turn = await self._decide_and_run(state, sink)
            state.clear_calls()
            if stop_turn:
                return TurnEnd.STOPPED

    def _offered_tools(self, sink: AgentSink) -> list[ToolSpec]:
        if not self.engine.supports_tools:
            if not self._told_no_tools:
                self._told_no_tools = True
                sink(Notice(f"{self.engine.model_name} has no tool support in its chat template: plain chat only."))
            return []
        return self.tools.tools()

    async def _generate(self, state: _TurnState, offered: list[ToolSpec], sink: AgentSink) -> None:
        openai_tools = [spec.to_openai() for spec in offered] or None
        known = {spec.model_name for spec in offered}
        stream = self.engine.stream(self.prompt_messages(), openai_tools, known_tools=known)
        try:
            async for event in stream:
                if isinstance(event, TextDelta):
                    state.text += event.text
                    sink(AssistantText(event.text))
                elif isinstance(event, ThinkingDelta):
                    sink(AssistantThinking(event.text))
                elif isinstance(event, ToolCallProposed):
                    call_id = state.unique_id(event.id)
                    call = PlannedCall(call_id, event.name, dict(event.arguments), self.tools.find_tool(event.name))
                    state.calls.append(call)
                    sink(CallProposed(call))
                elif isinstance(event, ToolCallMalformed):
                    call = PlannedCall(state.unique_id(event.id), MALFORMED_NAME, {"raw": event.raw})
                    state.malformed.append(call)
                    state.malformed_planned.append(call)
                    state.malformed_reasons[call.id] = malformed_content(event.reason)
                    sink(MalformedCall(call.id, event.raw, event.reason))
                elif isinstance(event, Throughput):
                    sink(GenerationRate(event.generated_tokens, event.tokens_per_second))
                elif isinstance(event, Stats):
                    sink(GenerationStats(event))
                elif isinstance(event, Done):
                    break
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()

    async def _decide_and_run(self, state: _TurnState, sink: AgentSink) -> bool:
        """Ask about each call in order, then run every allowed one concurrently; True stops the turn."""
        approved: list[PlannedCall] = []
        allow_rest = False
        deny_rest = False
        for index, call in enumerate(state.calls):
            if deny_rest:
                choice = ApprovalChoice.DENY_ALL
            elif call.spec is None:
                self._finish(state, sink, CallFinished(
                    call, CallStatus.ERROR, f"Error ({FailureKind.NOT_READY.value}): no server offers {call.model_name!r} now",
                ))
                continue
            elif call.id in state.predecided:
                choice = state.predecided[call.id]
                deny_rest = choice == ApprovalChoice.DENY_ALL
            elif allow_rest or self.policy.runs_without_asking(call.spec):
                choice = ApprovalChoice.AUTO if not allow_rest else state.batch_choice
            else:
                decision = await self._ask(call, len(state.calls) - index, sink)
                choice = decision.choice
                if choice in (ApprovalChoice.ALWAYS_TOOL, ApprovalChoice.ALWAYS_ALL):
                    self.policy.always_allow(call.spec, save=decision.save)
                if choice in (ApprovalChoice.ALLOW_PENDING, ApprovalChoice.ALWAYS_ALL):
                    allow_rest, state.batch_choice = True, choice
                    state.batch_save = decision.save
                deny_rest = choice == ApprovalChoice.DENY_ALL
            if allow_rest and state.batch_choice == ApprovalChoice.ALWAYS_ALL and call.spec is not None:
                self.policy.always_allow(call.spec, save=state.batch_save)
            sink(CallDecided(call, choice))
            if choice.allows:
                approved.append(call)
            else:
                self._finish(state, sink, CallFinished(call, CallStatus.DENIED, DENIED_MESSAGE))
        if approved:
            await asyncio.gather(*(self._run_call(state, call, sink) for call in approved))
        return deny_rest

    async def _ask(self, call: PlannedCall, waiting: int, sink: AgentSink) -> ApprovalDecision:
        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        sink(ApprovalNeeded(call, waiting, future))
        try:
            return await future
        finally:
            if not future.done():
                future.cancel()

    async def _run_call(self, state: _TurnState, call: PlannedCall, sink: AgentSink) -> None:
        assert call.spec is not None
        sink(CallStarted(call, datetime.now()))
        started = time.perf_counter()
        result = await self.tools.call_tool(call.spec.server, call.spec.name, call.arguments)
        if result.failure is not None and result.failure.kind == FailureKind.TIMEOUT:
            status = CallStatus.TIMEOUT
        else:
            status = CallStatus.ERROR if not result.ok else CallStatus.DONE
        self._finish(state, sink, CallFinished(
            call, status, result.for_model(), result, result.duration or time.perf_counter() - started,
        ))

    def _finish(self, state: _TurnState, sink: AgentSink, finished: CallFinished) -> None:
        """Record a call's outcome as its ``tool`` message (in proposal order) and report it."""
        state.outcomes[finished.call.id] = finished
        sink(finished)
        self._append_tool_messages(state)

    def _append_tool_messages(self, state: _TurnState) -> None:
        turn = self.turns[-1]
        while state.open_calls and state.open_calls[0].id in state.outcomes:
            call = state.open_calls.pop(0)
            outcome = state.outcomes[call.id]
            turn.append({
                "role": "tool", "tool_call_id": call.id, "name": call.model_name, "content": outcome.content_for_model,
            })

    def _close_stopped(self, state: _TurnState) -> None:
        """After a stop: keep the partial answer and give every open call a tool message."""
        turn = self.turns[-1]
        calls = state.calls + state.malformed
        if not state.reply_recorded and (state.text or calls):
            assistant: dict[str, Any] = {"role": "assistant", "content": state.text}
            if calls:
                assistant["tool_calls"] = [wire_call(call) for call in calls]
                state.open_calls = list(calls)
            turn.append(assistant)
            state.reset_reply()
        for call in list(state.open_calls):
            if call.id not in state.outcomes:
                state.outcomes[call.id] = CallFinished(call, CallStatus.CANCELLED, STOPPED_MESSAGE)
        self._append_tool_messages(state)
        state.clear_calls()


class _TurnState:
    """What one turn has produced so far (kept outside the task so a stop can finish the record)."""

    def __init__(self) -> None:
        self.iterations = 0
        self.batch_choice = ApprovalChoice.ALLOW_PENDING
        self.batch_save = False
        self.reset_reply()
        self.clear_calls()

    def reset_reply(self) -> None:
        self.text = ""
        self.reply_recorded = False

    def unique_id(self, call_id: str) -> str:
        """The model's id for a call, made unique within this reply (tool messages are matched by id)."""
        taken = {call.id for call in self.calls + self.malformed}
        unique, n = call_id or "call", 2
        while unique in taken:
            unique, n = f"{call_id}_{n}", n + 1
        return unique

    def clear_calls(self) -> None:
        self.calls: list[PlannedCall] = []
        self.malformed: list[PlannedCall] = []
        self.malformed_planned: list[PlannedCall] = []
        self.malformed_reasons: dict[str, str] = {}
        self.open_calls: list[PlannedCall] = []
        self.outcomes: dict[str, CallFinished] = {}
        self.predecided: dict[str, ApprovalChoice] = {}


def wire_call(call: PlannedCall) -> dict[str, Any]:
    """A call as the OpenAI ``tool_calls`` entry the model and the transcript see."""
    arguments = call.arguments.get("raw", "") if call.model_name == MALFORMED_NAME else json.dumps(
        call.arguments, ensure_ascii=False
    )
    return {"id": call.id, "type": "function", "function": {"name": call.model_name, "arguments": arguments}}
