"""One turn of the conversation as an async loop: generate, decide, call tools, generate again.

The agent owns the conversation's messages (OpenAI chat shape), reports everything it does to a
sink, and imports no UI. What enters the conversation passes through its ``Redactor`` first.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from mcp_chat_tui.agent.approval import ApprovalPolicy, decision_label
from mcp_chat_tui.agent.budget import ContextBudget
from mcp_chat_tui.agent.decisions import CallDecisions
from mcp_chat_tui.agent.events import (
    AgentSink,
    ApprovalChoice,
    AssistantText,
    AssistantThinking,
    CallDecided,
    CallFinished,
    CallProgress,
    CallProposed,
    CallStarted,
    CallStatus,
    GenerationRate,
    MalformedCall,
    Notice,
    PlannedCall,
    Recorded,
    TurnEnd,
    TurnFinished,
    TurnStarted,
)
from mcp_chat_tui.agent.summaries import Memory, summaries_text
from mcp_chat_tui.agent.summarising import Summarising
from mcp_chat_tui.agent.tool_provider import ToolProvider
from mcp_chat_tui.agent.turn import (
    DENIED_MESSAGE,
    MALFORMED_NAME,
    NOT_RUN_MESSAGE,
    STOPPED_MESSAGE,
    TurnState,
    free_id,
    malformed_content,
    seconds,
    wire_call,
)
from mcp_chat_tui.core.attachments import Attachment, user_content
from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.core.tools import CutForModel, FailureKind, ToolSpec
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


class Agent(CallDecisions, Summarising, ContextBudget):
    """Runs turns against an engine and a tool provider; keeps every message of the conversation.

    ``max_turns`` user turns (the current one included) go into each prompt in
    full; older turns go as their one-line summary (``write_summaries``; a turn
    whose summary is missing goes in full: agent/summaries.py). ``max_iterations``
    bounds the generate/call rounds of one turn (None: no limit); at the limit
    one last generation runs without tools. ``checkpoint``, when set, is awaited
    after ``CallStarted`` is reported and before the call goes to its server: it
    returns None once the start is on disk, else why not, and the call is then
    not sent unless the user chooses to run it unsaved (agent/decisions.py).
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
        redactor: Redactor | None = None,
    ) -> None:
        self.engine = engine
        self.redactor = redactor if redactor is not None else Redactor()
        self.tools = tools
        self.policy = policy
        self.system_prompt = system_prompt
        self.memory = Memory(max_turns)
        self.max_iterations = max_iterations
        self.turns: list[list[dict[str, Any]]] = []
        self._told_tool_prompt = False  # the line on how tools reach the model was shown
        self._running: asyncio.Task[TurnEnd] | None = None
        self._closed: asyncio.Event | None = None  # set once the running turn has ended and said how
        self._summarising: asyncio.Task[None] | None = None
        self.generating = False  # the model is writing a reply of the user's turn now
        self.checkpoint: Callable[[], Awaitable[str | None]] | None = None
        self._context_used: int | None = None  # the prompt's tokens so far: the last reply's figures, then results
        self._loaded_results: dict[int, tuple[dict[str, Any], str]] = {}  # fitted before the model is sent them

    # ----- the prompt ------------------------------------------------------------------------

    @property
    def messages(self) -> list[dict[str, Any]]:
        """Every message of the conversation so far, oldest first (no system prompt)."""
        return [message for turn in self.turns for message in turn]

    def prompt_messages(self) -> list[dict[str, Any]]:
        """What the model is sent: the system prompt (the servers' instructions after the user's own),
        one user message with the summaries of the turns outside the window (when there are any),
        then the window's turns in full (docs/architecture.md, "Memory and summaries")."""
        summarised = self.summarised_count
        window = [message for turn in self.turns[summarised:] for message in turn]
        if summarised:
            window.insert(
                0,
                {
                    "role": "user",
                    "content": summaries_text([s for s in self.memory.summaries[:summarised] if s is not None]),
                },
            )
        system = "\n\n".join(part for part in (self.system_prompt, self.tools.instructions_prompt()) if part)
        if system:
            return [{"role": "system", "content": system}, *window]
        return window

    def load_messages(
        self,
        messages: Sequence[dict[str, Any]],
        summaries: Sequence[str | None] = (),
        cuts: Mapping[str, CutForModel] | None = None,
    ) -> None:
        """Replace the conversation (e.g. from a transcript); a turn starts at each user message.
        ``summaries`` are the turns' summaries, in order (None: none yet); ``cuts``, by call id, how
        results were cut for the model (cut so again). Every loaded result is fitted to the context
        before the model is next sent it (``fit_loaded_results``, agent/budget.py)."""
        self.turns = []
        for message in messages:
            if message.get("role") == "user" or not self.turns:
                self.turns.append([])
            self.turns[-1].append(dict(message))
        self.memory.summaries = list(summaries)
        self.memory.fit(len(self.turns))
        self._load_results(cuts or {})

    def clear(self) -> None:
        """Forget the conversation (the running turn and summaries are stopped; a turn still closing
        closes its own messages, not the next conversation's; ``stop_and_wait`` first waits for it)."""
        self.stop()
        self.turns = []
        self.memory.summaries = []
        self._loaded_results = {}

    # ----- stopping --------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._running is not None and not self._running.done()

    def stop(self) -> bool:
        """Stop the running turn (generation ends within a token, running calls are cancelled), or
        the summaries being written."""
        if self.busy and self._running is not None:
            self._running.cancel()
            return True
        if self.summarising and self._summarising is not None:
            self._summarising.cancel()
            return True
        return False

    async def stop_and_wait(self, timeout: float = 5.0) -> bool:
        """Stop the running turn and wait (at most ``timeout`` seconds) until it has closed: every
        call it stopped is reported, so a transcript records how each ended before the caller goes
        on (opens another conversation, clears this one). False when no turn was running."""
        closed = self._closed
        if not self.stop() or closed is None:
            return False
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(closed.wait(), timeout)
        return True

    # ----- a turn ----------------------------------------------------------------------------

    async def run_turn(self, prompt: str, sink: AgentSink, attachments: Sequence[Attachment] = ()) -> TurnEnd:
        """Run one user turn to its end; the partial answer is kept when the user stops it.
        ``attachments`` (resource contents, the prompt command it came from) go with the prompt."""
        prompt = self.redactor.text(prompt)
        redact = self.redactor.text
        attached = tuple(replace(a, text=redact(a.text), uri=redact(a.uri), name=redact(a.name)) for a in attachments)
        self.turns.append([{"role": "user", "content": user_content(prompt, attached)}])
        sink(TurnStarted(prompt, attached))
        state = TurnState(self.redactor, self.turns[-1])
        return await self._supervise(state, sink, self._turn(state, sink))

    async def continue_turn(self, pending: list[tuple[PlannedCall, Recorded]], sink: AgentSink) -> TurnEnd:
        """Finish a turn a transcript left open at its last reply's tool calls.

        The conversation (loaded with ``load_messages``) ends with the assistant
        message that proposed ``pending``. Nothing runs on the file's word: a
        recorded denial stands; a recorded yes is decided again in this run (the
        policy, or the user, shown what the file recorded); an interrupted call is
        run again only on the user's explicit yes, else the model is told it may
        or may not have run. Then the turn goes on as usual.
        """
        state = TurnState(self.redactor, self.turns[-1])
        state.calls = [call for call, _ in pending]
        state.open_calls = list(state.calls)
        state.recorded = {call.id: recorded for call, recorded in pending}
        state.reply_recorded = True
        return await self._supervise(state, sink, self._turn(state, sink, resume=True))

    async def _supervise(self, state: TurnState, sink: AgentSink, work: Coroutine[Any, Any, TurnEnd]) -> TurnEnd:
        self.fit_loaded_results(sink)  # a resumed conversation's results, before the model is sent them
        self._context_used = None
        self._closed = closed = asyncio.Event()
        self._running = asyncio.ensure_future(work)
        try:
            end = await asyncio.shield(self._running)
        except asyncio.CancelledError:
            if not self._running.cancelled():
                self._running.cancel()  # our caller was cancelled: stop the work too
                await asyncio.wait({self._running})
                self._close_stopped(state, sink)
                sink(TurnFinished(TurnEnd.STOPPED, state.iterations))
                raise
            end = TurnEnd.STOPPED
            self._close_stopped(state, sink)
        except EngineError as exc:
            end = TurnEnd.ERROR
            self._close_stopped(state, sink)  # keep what the reply said before the engine failed
            sink(TurnFinished(end, state.iterations, self.redactor.text(str(exc))))
            return end
        finally:
            self._running = None
            closed.set()
        sink(TurnFinished(end, state.iterations))
        return end

    async def _turn(self, state: TurnState, sink: AgentSink, *, resume: bool = False) -> TurnEnd:
        turn = state.turn
        if resume:
            stop_turn = await self._decide_and_run(state, sink)
            state.clear_calls()
            if stop_turn:
                return TurnEnd.STOPPED
        while True:
            state.iterations += 1
            at_limit = self.max_iterations is not None and state.iterations > self.max_iterations
            if state.iterations > 1 or resume:
                await self.tools.settle_tools()  # a call may have changed a tool list: offer the new one
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
                self._finish(
                    state, sink, CallFinished(malformed, CallStatus.MALFORMED, state.malformed_reasons[malformed.id])
                )
            stop_turn = await self._decide_and_run(state, sink)
            state.clear_calls()
            if stop_turn:
                return TurnEnd.STOPPED

    def _offered_tools(self, sink: AgentSink) -> list[ToolSpec]:
        """The tools for this generation; the first time, a line when they go in text or not at all."""
        name = self.engine.model_name
        in_text = getattr(self.engine, "tools_in_text", False)
        if not self._told_tool_prompt and (in_text or not self.engine.supports_tools):
            self._told_tool_prompt = True
            if in_text:
                sink(Notice(f'{name}: the tools are described in text in the system prompt (tool_prompt = "text").'))
            else:
                sink(Notice(f"{name} has no tool support in its chat template: plain chat only."))
        return self.tools.tools() if in_text or self.engine.supports_tools else []

    async def _generate(self, state: TurnState, offered: list[ToolSpec], sink: AgentSink) -> None:
        openai_tools = [spec.to_openai() for spec in offered] or None
        known = {spec.model_name for spec in offered}
        stream = self.engine.stream(self.prompt_messages(), openai_tools, known_tools=known)
        redact = self.redactor
        self.generating = True
        try:
            async for event in stream:
                if isinstance(event, TextDelta):
                    self._show_thinking(state.thinking_stream.flush(), sink)
                    self._show_text(state, state.text_stream.feed(event.text), sink)
                elif isinstance(event, ThinkingDelta):
                    self._show_text(state, state.text_stream.flush(), sink)
                    self._show_thinking(state.thinking_stream.feed(event.text), sink)
                elif isinstance(event, ToolCallProposed):
                    self._flush_reply(state, sink)
                    call_id = self._unique_id(state, event.id)
                    name = redact.text(event.name)
                    call = PlannedCall(
                        call_id,
                        name,
                        redact.value(dict(event.arguments)),
                        self.tools.find_tool(name),
                        given_id=event.id if event.id != call_id else "",
                    )
                    state.calls.append(call)
                    sink(CallProposed(call))
                elif isinstance(event, ToolCallMalformed):
                    self._flush_reply(state, sink)
                    call_id = self._unique_id(state, event.id)
                    raw, reason = redact.text(event.raw), redact.text(event.reason)
                    call = PlannedCall(
                        call_id, MALFORMED_NAME, {"raw": raw}, given_id=event.id if event.id != call_id else ""
                    )
                    state.malformed.append(call)
                    state.malformed_planned.append(call)
                    state.malformed_reasons[call.id] = malformed_content(reason)
                    sink(MalformedCall(call.id, raw, reason))
                elif isinstance(event, Throughput):
                    sink(GenerationRate(event.generated_tokens, event.tokens_per_second))
                elif isinstance(event, Stats):
                    self._report_stats(event, sink)
                elif isinstance(event, Done):
                    break
            self._flush_reply(state, sink)
        finally:
            self.generating = False
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()

    @staticmethod
    def _show_text(state: TurnState, text: str, sink: AgentSink) -> None:
        if text:
            state.text += text
            sink(AssistantText(text))

    @staticmethod
    def _show_thinking(text: str, sink: AgentSink) -> None:
        if text:
            sink(AssistantThinking(text))

    def _flush_reply(self, state: TurnState, sink: AgentSink) -> None:
        """Report the text held back in case it began a secret (the reply, or its part, is over)."""
        self._show_thinking(state.thinking_stream.flush(), sink)
        self._show_text(state, state.text_stream.flush(), sink)

    def _unique_id(self, state: TurnState, given: str) -> str:
        """The model's id for a call, made unique within the whole conversation (tool messages are
        matched by id): a taken ``call_N`` (or no id) becomes the next free ``call_N``, another
        taken id gets a ``_2``, ``_3``… suffix. The conversation's ids are gathered once a turn."""
        if state.taken_ids is None:
            state.taken_ids = {str(call["id"]) for message in self.messages for call in message.get("tool_calls") or []}
            state.taken_ids |= {call.id for call in state.calls + state.malformed}
        taken = state.taken_ids
        unique = given if given and given not in taken else free_id(given, taken)
        taken.add(unique)
        return unique

    async def _decide_and_run(self, state: TurnState, sink: AgentSink) -> bool:
        """Ask about each call in order, then run every allowed one concurrently; True stops the turn."""
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
        return deny_rest

    async def _run_call(self, state: TurnState, call: PlannedCall, sink: AgentSink) -> None:
        assert call.spec is not None
        sink(CallStarted(call, datetime.now()))
        if not await self._start_saved(state, call, sink):  # the start is on disk before the call goes out
            return
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

    def _finish(self, state: TurnState, sink: AgentSink, finished: CallFinished) -> None:
        """Record a call's outcome as its ``tool`` message (in proposal order) and report it."""
        state.outcomes[finished.call.id] = finished
        sink(finished)
        self._append_tool_messages(state, sink)

    def _append_tool_messages(self, state: TurnState, sink: AgentSink) -> None:
        turn = state.turn
        while state.open_calls and state.open_calls[0].id in state.outcomes:
            call = state.open_calls.pop(0)
            outcome = state.outcomes[call.id]
            turn.append(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "name": call.model_name,
                    "content": self._within_budget(call, outcome.content_for_model, sink),
                }
            )

    def _close_stopped(self, state: TurnState, sink: AgentSink) -> None:
        """After a stop: keep the partial answer, and end every open call (a running one is
        cancelled at its server by then) with its outcome, reported and as a tool message."""
        turn = state.turn
        calls = state.calls + state.malformed
        if not state.reply_recorded:
            self._flush_reply(state, sink)
        if not state.reply_recorded and (state.text or calls):
            assistant: dict[str, Any] = {"role": "assistant", "content": state.text}
            if calls:
                assistant["tool_calls"] = [wire_call(call) for call in calls]
                state.open_calls = list(calls)
            turn.append(assistant)
            state.reset_reply()
        for call in list(state.open_calls):
            if call.id in state.outcomes:
                continue
            began = state.started.get(call.id)
            if call.id in state.malformed_reasons:
                finished = CallFinished(call, CallStatus.MALFORMED, state.malformed_reasons[call.id])
            elif began is None:
                finished = CallFinished(call, CallStatus.CANCELLED, NOT_RUN_MESSAGE)
            else:
                finished = CallFinished(
                    call, CallStatus.CANCELLED, STOPPED_MESSAGE, None, seconds(time.perf_counter() - began)
                )
            state.outcomes[call.id] = finished
            sink(finished)
        self._append_tool_messages(state, sink)
        state.clear_calls()
