"""Feed agent events into a transcript recorder, so every conversation is saved as it happens,
and turn the calls a transcript left open back into the agent's terms."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_chat_tui.agent import Agent
from mcp_chat_tui.agent.events import (
    AgentEvent,
    AssistantText,
    AssistantThinking,
    CallDecided,
    CallFinished,
    CallProposed,
    CallStarted,
    CallTask,
    MalformedCall,
    PlannedCall,
    Recorded,
    ResultCut,
    ServerRequestAnswered,
    SummaryWritten,
    TurnEnd,
    TurnFinished,
    TurnStarted,
)
from mcp_chat_tui.agent.turn import wire_call
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.core.feedback import MALFORMED_NAME
from mcp_chat_tui.core.tools import CutForModel, ToolSpec
from mcp_chat_tui.transcript import Proposal, ServerRequest, ToolResult, TranscriptRecorder
from mcp_chat_tui.transcript.media import keep_attached_media, keep_media, worth_keeping

if TYPE_CHECKING:
    from mcp_chat_tui.engine.base import Engine


class RecordingSink:
    """Called with every agent event, in order; writes what matters into the transcript."""

    def __init__(self, recorder: TranscriptRecorder, model_label: str, engine: Engine | None = None) -> None:
        """``engine``: the one replying, whose generation settings each reply records (when it has them)."""
        self.recorder = recorder
        self.model_label = model_label
        self.engine = engine
        self.switched_from = ""  # the model before ``/model`` switched, until the next reply records it

    def use_model(self, engine: Engine, model_label: str) -> None:
        """``/model`` switched to ``engine``: the next reply is recorded as its, with the model before
        the first switch since the last reply (also before the conversation's first reply)."""
        self.switched_from = self.switched_from or self.model_label
        self.engine, self.model_label = engine, model_label

    def __call__(self, event: AgentEvent) -> None:
        self.record(event)

    def guard_starts(self, agent: Agent) -> None:
        """``agent`` sends a call only once its start is on disk (``Agent.checkpoint``), or when the
        user sends it unsaved, which the file says once it can (and a note says until then)."""
        agent.checkpoint = self.recorder.persisted
        agent.note_unsaved_run = self.recorder.run_unsaved

    @functools.singledispatchmethod
    def record(self, event: object) -> None:
        """Write ``event`` into the transcript, by its type (the events not listed are not kept)."""

    @record.register
    def _text(self, event: AssistantText) -> None:
        self.recorder.text(event.text)

    @record.register
    def _thinking(self, event: AssistantThinking) -> None:
        self.recorder.thought(event.text)

    @record.register
    def _turn_started(self, event: TurnStarted) -> None:
        saver = self.recorder.saver
        conversation = saver.path if saver is not None else None
        if event.retried:  # the prompt and its attachments are the discarded exchange's, already kept
            self.recorder.retried()
        else:
            self.recorder.user(event.prompt, keep_attached_media(list(event.attachments), conversation))
        seed = {"seed": event.seed} if event.seed is not None else {}
        switched_from = self.switched_from if self.switched_from != self.model_label else ""
        self.recorder.reply_started(self.model_label, recorded_settings(self.engine) | seed, switched_from)
        self.switched_from = ""

    @record.register
    def _proposed(self, event: CallProposed) -> None:
        self.recorder.proposed(wire_call(event.call), event.at)

    @record.register
    def _malformed(self, event: MalformedCall) -> None:
        call = {"id": event.id, "type": "function", "function": {"name": MALFORMED_NAME, "arguments": event.raw}}
        self.recorder.proposed(call, event.at)

    @record.register
    def _decided(self, event: CallDecided) -> None:
        self.recorder.chose(event.call.id, event.choice.value, event.allowed_by, event.ran_with)

    @record.register
    def _started(self, event: CallStarted) -> None:
        self.recorder.started(event.call.id, event.call.server, event.started_at, real_tool_name(event.call))

    @record.register
    def _task(self, event: CallTask) -> None:
        self.recorder.task_created(event.call.id, event.task.task_id)

    @record.register
    def _finished(self, event: CallFinished) -> None:
        saver = self.recorder.saver
        never_sent = event.status is CallState.CANCELLED and event.duration is None  # stopped, or not saved
        self.recorder.finished(tool_result(event, saver.path if saver is not None else None), sent=not never_sent)

    @record.register
    def _cut(self, event: ResultCut) -> None:
        self.recorder.cut_for_model(event.call.id, CutForModel(event.kept_chars, event.kept_tokens, event.total_tokens))

    @record.register
    def _server_request(self, event: ServerRequestAnswered) -> None:
        self.recorder.server_request(
            ServerRequest(event.server, event.kind, event.request, event.answer, event.result, event.at)
        )

    @record.register
    def _summarised(self, event: SummaryWritten) -> None:
        self.recorder.summarised(event.exchange, event.text)

    @record.register
    def _turn_finished(self, event: TurnFinished) -> None:
        if event.end is TurnEnd.ANSWERED:
            self.recorder.turn_ended()
        else:  # stopped, error, and the ends without an answer, with the line that says why
            self.recorder.turn_ended(event.end.value, event.error, note=event.note, empty_reply=event.empty_reply)


def tool_result(event: CallFinished, transcript_path: Path | None) -> ToolResult:
    """A call's outcome as the transcript keeps it (its media files beside ``transcript_path``)."""
    result = event.result
    parts = result.parts if result is not None and worth_keeping(result.parts) else []
    return ToolResult(
        name=event.call.model_name,
        call_id=event.call.id,
        status=event.status.value,
        content=event.content_for_model,
        server=event.call.server,
        duration=event.duration,
        tool=real_tool_name(event.call),
        parts=keep_media(parts, transcript_path, event.call.id),
        structured=result.structured if result is not None else None,
        progress=result.progress if result is not None else None,
        repeat_of=event.repeat_of,
        task=result.task if result is not None else None,
    )


def pending_calls(
    proposals: list[Proposal], find_tool: Callable[[str], ToolSpec | None]
) -> list[tuple[PlannedCall, Recorded]]:
    """The calls a transcript left open (``Transcript.pending_proposals``), with what the file says of each."""
    return [
        (
            PlannedCall(p.call_id, p.name, p.arguments, find_tool(p.name)),
            Recorded(p.choice, p.started_at, p.task_id if p.started_at is not None else ""),
        )
        for p in proposals
    ]


def recorded_settings(engine: Engine | None) -> dict[str, Any]:
    """The generation settings a reply of ``engine`` is recorded with (none for an engine that has none)."""
    generation = engine.generation if engine is not None else None
    return generation.recorded() if generation is not None else {}


def tee(*sinks: Callable[[AgentEvent], None]) -> Callable[[AgentEvent], None]:
    """One sink that hands each event to several, in order."""

    def both(event: AgentEvent) -> None:
        for sink in sinks:
            sink(event)

    return both


def real_tool_name(call: PlannedCall) -> str:
    """The tool's own name, for the file, when the model was given another name for it ("" otherwise)."""
    return call.tool if call.spec is not None and call.tool != call.model_name else ""
