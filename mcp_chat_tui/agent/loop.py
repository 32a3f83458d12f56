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
from typing import Any

from mcp_chat_tui.agent.approval import ApprovalPolicy
from mcp_chat_tui.agent.budget import ContextBudget
from mcp_chat_tui.agent.calling import CallRunning
from mcp_chat_tui.agent.decisions import CallDecisions
from mcp_chat_tui.agent.events import (
    AgentSink,
    AssistantText,
    AssistantThinking,
    CallFinished,
    CallProposed,
    GenerationRate,
    MalformedCall,
    Notice,
    PlannedCall,
    Recorded,
    TurnEnd,
    TurnFinished,
    TurnStarted,
)
from mcp_chat_tui.agent.memory_window import Memory, summaries_text
from mcp_chat_tui.agent.retrying import Retrying
from mcp_chat_tui.agent.summary_writing import Summarising
from mcp_chat_tui.agent.tool_provider import ToolProvider
from mcp_chat_tui.agent.turn import (
    NO_ANSWER_NOTE,
    NOT_RUN_MESSAGE,
    REPEAT_REPLIES,
    STOPPED_MESSAGE,
    TurnState,
    call_key,
    echoes,
    free_id,
    has_answer,
    limit_message,
    limit_note,
    malformed_key,
    malformed_parts,
    ran_with_result,
    repeat_note,
    seconds,
    told_sentences,
    wire_call,
)
from mcp_chat_tui.core.attachments import Attachment, user_content
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.core.feedback import MALFORMED_NAME, feedback_message, is_app_message, written_reply
from mcp_chat_tui.core.memory import give_back_memory
from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.core.tools import CutForModel, ToolSpec
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
from mcp_chat_tui.engine.generation import ReplyOverrides


class Agent(CallDecisions, CallRunning, Summarising, ContextBudget, Retrying):
    """Runs turns against an engine and a tool provider; keeps every message of the conversation.

    ``max_turns`` user turns (the current one included) go into each prompt in
    full; older turns go as their one-line summary (``write_summaries``; a turn
    whose summary is missing goes in full: agent/memory_window.py). ``max_tool_rounds``
    bounds the rounds of calls of one turn (None: no limit): the calls of the reply
    after the last round are not run, the model is told so, and its next reply (with
    the same tools offered, so the prompt's cache still serves) ends the turn.
    ``checkpoint``, when set, is awaited after ``CallStarted`` is reported and
    before the call goes to its server: it returns None once the start is on disk,
    else why not, and the call is then not sent unless the user chooses to run it
    unsaved (agent/decisions.py).
    """

    def __init__(
        self,
        engine: Engine,
        tools: ToolProvider,
        policy: ApprovalPolicy,
        *,
        system_prompt: str = "",
        max_turns: int = 3,
        max_tool_rounds: int | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        self.engine = engine
        self.redactor = redactor if redactor is not None else Redactor()
        self.tools = tools
        self.policy = policy
        self.system_prompt = system_prompt
        self.memory = Memory(max_turns)
        self.max_tool_rounds = max_tool_rounds
        self.turns: list[list[dict[str, Any]]] = []
        self._told_tool_prompt = False  # the line on how tools reach the model was shown
        self._running: asyncio.Task[TurnEnd] | None = None
        self._closed: asyncio.Event | None = None  # set once the running turn has ended and said how
        self._summarising: asyncio.Task[None] | None = None
        self.generating = False  # the model is writing a reply of the user's turn now
        self.checkpoint: Callable[[], Awaitable[str | None]] | None = None
        self._context_used: int | None = None  # the prompt's tokens so far: the last reply's figures, then results
        self._loaded_results: dict[int, tuple[dict[str, Any], str]] = {}  # fitted before the model is sent them
        self.turn_grants: list[ToolSpec] = []
        self.reply_overrides: ReplyOverrides | None = None  # this turn's replies' own settings (a retry's seed)

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
            if (message.get("role") == "user" and not is_app_message(message)) or not self.turns:
                self.turns.append([])
            self.turns[-1].append(dict(message))
        self.memory.summaries = list(summaries)
        self.memory.fit(len(self.turns))
        self._load_results(cuts or {})

    def use_engine(self, engine: Engine) -> None:
        """Another model answers from the next turn on (``/model``), told again how the tools reach it."""
        self.engine = engine
        self._told_tool_prompt = False

    def clear(self) -> None:
        """Forget the conversation (the running turn and summaries are stopped; a turn still closing
        closes its own messages, not the next conversation's; ``stop_and_wait`` first waits for it)."""
        self.stop()
        self.turns = []
        self.memory.summaries = []
        self._loaded_results = {}

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

    async def continue_turn(
        self, pending: list[tuple[PlannedCall, Recorded]], sink: AgentSink, feedback: Sequence[str] = ()
    ) -> TurnEnd:
        """Finish a turn a transcript left open at its last reply's tool calls.

        The conversation (loaded with ``load_messages``) ends with the assistant
        message that proposed ``pending``. Nothing runs on the file's word: a
        recorded denial stands; a recorded yes is decided again in this run (the
        policy, or the user, shown what the file recorded); an interrupted call is
        run again only on the user's explicit yes, else the model is told it may
        or may not have run. ``feedback``: what the model is told of that reply's
        malformed calls, after the pending calls' results (``Transcript.pending_feedback``).
        Then the turn goes on as usual.
        """
        state = TurnState(self.redactor, self.turns[-1])
        state.calls = [call for call, _ in pending]
        state.open_calls = list(state.calls)
        state.feedback = list(feedback)
        state.recorded = {call.id: recorded for call, recorded in pending}
        state.reply_recorded = True
        return await self._supervise(state, sink, self._turn(state, sink, resume=True))

    async def _supervise(self, state: TurnState, sink: AgentSink, work: Coroutine[Any, Any, TurnEnd]) -> TurnEnd:
        self.fit_loaded_results(sink)  # a resumed conversation's results, before the model is sent them
        self._context_used, self.turn_grants = None, []
        self._closed = closed = asyncio.Event()
        self._turn_state = state
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
            self._running = self._turn_state = None
            closed.set()
            give_back_memory()
        sink(TurnFinished(end, state.iterations, note=state.note, empty_reply=state.empty_reply))
        return end

    async def _turn(self, state: TurnState, sink: AgentSink, *, resume: bool = False) -> TurnEnd:
        if resume:
            end = await self._run_round(state, sink)
            if end is not None:
                return end
        while True:
            state.iterations += 1
            if state.iterations > 1 or resume:
                await self.tools.settle_tools()  # a call may have changed a tool list: offer the new one
            offered = self._offered_tools(sink)
            state.reply_recorded, state.repeats_before_reply = False, state.repeats
            await self._generate(state, offered, sink)
            refused = state.at_limit or (self.max_tool_rounds is not None and state.rounds >= self.max_tool_rounds)
            calls = self._close_reply(state, sink, refused=refused)
            if not calls:
                return self._final_end(state)
            if refused:
                self._refuse_calls(state, sink)
                if state.at_limit:  # the last reply asked for more still
                    return self._final_end(state)
                state.at_limit = True
                continue
            end = await self._run_round(state, sink)
            if end is not None:
                return end

    async def _run_round(self, state: TurnState, sink: AgentSink) -> TurnEnd | None:
        """Decide and run the reply's calls; how the turn ends when it ends here (None: it goes on)."""
        state.rounds += 1
        stop_turn = await self._decide_and_run(state, sink)
        state.clear_calls()
        if stop_turn:
            return TurnEnd.STOPPED
        state.repeat_replies += state.repeats > state.repeats_before_reply
        if state.repeat_replies >= REPEAT_REPLIES:  # it repeated again after it was told
            state.note = repeat_note(state.last_repeat, state.repeats)
            return TurnEnd.REPEATED_CALLS
        return None

    def _final_end(self, state: TurnState) -> TurnEnd:
        """How a turn ends with the model's last reply: answered, unless the turn took its rounds or
        the reply says nothing."""
        if state.at_limit:
            state.note = limit_note(self.max_tool_rounds or 0)
            return TurnEnd.TOOL_ROUND_LIMIT
        if not has_answer(state.last_text):
            state.note = NO_ANSWER_NOTE
            return TurnEnd.NO_ANSWER
        return TurnEnd.ANSWERED

    def _close_reply(self, state: TurnState, sink: AgentSink, *, refused: bool = False) -> list[PlannedCall]:
        """The reply becomes the assistant message: its text, with the text of the calls that could not
        be used (never a call the model would imitate), and its good calls; the malformed calls are
        finished, and the model will be told why (``feedback_message``) after the calls' results.
        Returns the reply's calls. ``refused``: none of its calls will run (the turn took its rounds)."""
        calls, malformed = list(state.calls), list(state.malformed)
        raws = [call.arguments.get("raw", "") for call in malformed]
        assistant: dict[str, Any] = {"role": "assistant", "content": written_reply(state.text, raws)}
        if calls:
            assistant["tool_calls"] = [wire_call(call) for call in calls]
        state.last_text = state.text
        state.empty_reply = not state.text and not calls and not malformed
        state.reset_reply()
        state.turn.append(assistant)
        state.reply_recorded = True
        state.open_calls = calls
        for raw in raws:  # the same malformed call written again, or what it was told of one, is a repeat too
            if malformed_key(raw) in state.malformed_seen or echoes(raw, state.told):
                state.repeats, state.last_repeat = state.repeats + 1, ""
            state.malformed_seen.add(malformed_key(raw))
        reasons = [state.malformed_reasons[call.id] for call in malformed]
        tail = limit_message(self.max_tool_rounds or 0) if refused else ""
        state.feedback = malformed_parts(reasons, raws, state.offered, tail)
        state.told += told_sentences(state.feedback)
        for call, told in zip(malformed, state.feedback, strict=True):
            state.outcomes[call.id] = finished = CallFinished(call, CallState.MALFORMED, told)
            sink(finished)
        self._append_tool_messages(state, sink)
        return calls + malformed

    def _refuse_calls(self, state: TurnState, sink: AgentSink) -> None:
        """The calls of a reply after the turn's last round: not run, and the model is told to answer."""
        for call in list(state.calls):
            self._finish(state, sink, CallFinished(call, CallState.CANCELLED, limit_message(self.max_tool_rounds or 0)))
        state.clear_calls()

    def _offered_tools(self, sink: AgentSink) -> list[ToolSpec]:
        """The tools for this generation; the first time, a line when they go in text or not at all."""
        name = self.engine.model_name
        in_text = self.engine.tools_in_text
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
        state.offered = [spec.model_name for spec in offered]
        overrides = self.reply_overrides  # a retry's seed; passed only when set (engines of old take none)
        asked: dict[str, Any] = {"overrides": overrides} if overrides is not None else {}
        stream = self.engine.stream(self.prompt_messages(), openai_tools, known_tools=known, **asked)
        self.generating = True
        cut = False  # the reply was cut at its repeats: only its figures are read from here on
        try:
            async for event in stream:
                if isinstance(event, Stats):
                    self._report_stats(event, sink)
                elif isinstance(event, Done):
                    break
                elif not cut and self._take(state, event, sink) and state.looping():
                    # the turn will end on these repeats: the rest is not waited for, but the figures
                    # of what was generated are (a stream that cannot be cut is left at once)
                    cut = True
                    if (stop := getattr(stream, "cut", None)) is None:
                        break
                    stop()
            self._flush_reply(state, sink)
        finally:
            self.generating = False
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()

    def _take(self, state: TurnState, event: object, sink: AgentSink) -> bool:
        """Show the reply's text or thinking, or take the call it wrote; True when it was a call."""
        if isinstance(event, TextDelta):
            self._show_thinking(state.thinking_stream.flush(), sink)
            self._show_text(state, state.text_stream.feed(event.text), sink)
        elif isinstance(event, ThinkingDelta):
            self._show_text(state, state.text_stream.flush(), sink)
            self._show_thinking(state.thinking_stream.feed(event.text), sink)
        elif isinstance(event, (ToolCallProposed, ToolCallMalformed)):
            self._propose(state, event, sink)
            return True
        elif isinstance(event, Throughput):
            sink(GenerationRate(event.generated_tokens, event.tokens_per_second))
        return False

    def _propose(self, state: TurnState, event: ToolCallProposed | ToolCallMalformed, sink: AgentSink) -> None:
        """A call the model wrote, with an id unique in the conversation, redacted: resolved to its tool,
        or (malformed) kept with its text and why it cannot be used."""
        self._flush_reply(state, sink)
        call_id = self._unique_id(state, event.id)
        given_id = event.id if event.id != call_id else ""
        if isinstance(event, ToolCallMalformed):
            raw, reason = self.redactor.text(event.raw), self.redactor.text(event.reason)
            state.malformed.append(PlannedCall(call_id, MALFORMED_NAME, {"raw": raw}, given_id=given_id))
            state.malformed_reasons[call_id] = reason
            sink(MalformedCall(call_id, raw, reason))
            return
        name = self.redactor.text(event.name)
        call = PlannedCall(
            call_id,
            name,
            self.redactor.value(dict(event.arguments)),
            self.tools.find_tool(name),
            given_id=given_id,
        )
        state.calls.append(call)
        sink(CallProposed(call))

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

    def _finish(self, state: TurnState, sink: AgentSink, finished: CallFinished) -> None:
        """Record a call's outcome as its ``tool`` message (in proposal order) and report it."""
        state.outcomes[finished.call.id] = finished
        if ran_with_result(finished):
            state.ran.setdefault(call_key(finished.call), finished)
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
        if not state.open_calls and state.feedback:  # after the reply's tool messages, as templates want
            turn.append(feedback_message(state.feedback))
            state.feedback = []

    def _close_stopped(self, state: TurnState, sink: AgentSink) -> None:
        """After a stop: keep the partial answer, and end every open call (a running one is
        cancelled at its server by then) with its outcome, reported and as a tool message."""
        if not state.reply_recorded:
            self._flush_reply(state, sink)
            if state.text or state.calls or state.malformed:
                self._close_reply(state, sink)
        for call in list(state.open_calls):
            if call.id in state.outcomes:
                continue
            began = state.started.get(call.id)
            if began is None:
                finished = CallFinished(call, CallState.CANCELLED, NOT_RUN_MESSAGE)
            else:
                finished = CallFinished(
                    call, CallState.CANCELLED, STOPPED_MESSAGE, None, seconds(time.perf_counter() - began)
                )
            state.outcomes[call.id] = finished
            sink(finished)
        self._append_tool_messages(state, sink)
        state.clear_calls()
