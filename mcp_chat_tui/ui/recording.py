"""Feed agent events into a transcript recorder, so every conversation is saved as it happens."""

from __future__ import annotations

from mcp_chat_tui.agent.events import (
    AgentEvent,
    AssistantText,
    AssistantThinking,
    CallDecided,
    CallFinished,
    CallProposed,
    MalformedCall,
    TurnFinished,
    TurnStarted,
)
from mcp_chat_tui.agent.loop import MALFORMED_NAME, wire_call
from mcp_chat_tui.transcript import ToolResult, TranscriptRecorder


class RecordingSink:
    """Called with every agent event, in order; writes what matters into the transcript."""

    def __init__(self, recorder: TranscriptRecorder, model_label: str) -> None:
        self.recorder = recorder
        self.model_label = model_label

    def __call__(self, event: AgentEvent) -> None:
        recorder = self.recorder
        if isinstance(event, AssistantText):
            recorder.text(event.text)
        elif isinstance(event, AssistantThinking):
            recorder.thought(event.text)
        elif isinstance(event, TurnStarted):
            recorder.user(event.prompt)
            recorder.reply_started(self.model_label)
        elif isinstance(event, CallProposed):
            recorder.proposed(wire_call(event.call))
        elif isinstance(event, MalformedCall):
            recorder.proposed({"id": event.id, "type": "function",
                               "function": {"name": MALFORMED_NAME, "arguments": event.raw}})
        elif isinstance(event, CallDecided):
            recorder.chose(event.call.id, event.choice.value)
        elif isinstance(event, CallFinished):
            recorder.finished(ToolResult(
                name=event.call.model_name, call_id=event.call.id, status=event.status.value,
                content=event.content_for_model, server=event.call.server,
                duration=event.duration if event.result is not None else None,
            ))
        elif isinstance(event, TurnFinished):
            recorder.turn_ended()


def tee(*sinks):
    """One sink that hands each event to several, in order."""

    def both(event: AgentEvent) -> None:
        for sink in sinks:
            sink(event)

    return both
