"""The agent's events as Textual messages: one message class per event type.

The app posts each event as its message, in the order the agent reported them, and shows each
type with its own method (``ui/agent_events.py``'s ``SHOWN_BY``). ``agent_message`` makes the
message for an event.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar, Generic, TypeVar, get_args

from textual.message import Message

from mcp_chat_tui.agent import events

E = TypeVar("E")


class AgentMessage(Message, Generic[E]):
    """An agent event posted to the app.

    Args:
        event: The event, as the agent reported it.
    """

    for_event: ClassVar[dict[type, type[AgentMessage[Any]]]] = {}

    def __init__(self, event: E) -> None:
        super().__init__()
        self.event = event

    def __init_subclass__(cls, **options: Any) -> None:
        super().__init_subclass__(**options)
        for base in cls.__dict__.get("__orig_bases__", ()):
            for event_type in get_args(base):
                AgentMessage.for_event[event_type] = cls


class ReplyText(AgentMessage[events.AssistantText]):
    """Text of the reply; text that came while it waited in the queue rides along (``more_text``)."""

    def __init__(self, event: events.AssistantText) -> None:
        super().__init__(event)
        self.more_text: list[str] = []

    @property
    def whole_event(self) -> events.AssistantText:
        """The event with the text that came while it was queued after its own."""
        if not self.more_text:
            return self.event
        return replace(self.event, text="".join([self.event.text, *self.more_text]))


class ReplyThinking(AgentMessage[events.AssistantThinking]):
    """The model's thinking, as it streams."""


class TurnStarted(AgentMessage[events.TurnStarted]):
    """A turn began with the user's prompt."""


class CallProposed(AgentMessage[events.CallProposed]):
    """The model asked for a tool call."""


class MalformedCall(AgentMessage[events.MalformedCall]):
    """The model wrote a tool call that is not a valid one."""


class CallDecided(AgentMessage[events.CallDecided]):
    """A call was allowed or denied, and by what."""


class ApprovalNeeded(AgentMessage[events.ApprovalNeeded]):
    """A call waits for the user's decision."""


class CallStarted(AgentMessage[events.CallStarted]):
    """A call is running on its server."""


class StartNotSaved(AgentMessage[events.StartNotSaved]):
    """A call's start could not be saved: it waits, unsent, for the user's choice."""


class CallRunUnsaved(AgentMessage[events.CallRunUnsaved]):
    """The user sends a call although its start is not on disk."""


class CallProgress(AgentMessage[events.CallProgress]):
    """A running call's server reported progress."""


class CallTask(AgentMessage[events.CallTask]):
    """A call runs as a task: its status changed (or the task was just created, or followed again)."""


class CallFinished(AgentMessage[events.CallFinished]):
    """A call ended (done, failed, denied, cancelled or interrupted)."""


class ResultCut(AgentMessage[events.ResultCut]):
    """A call's result was cut for the model."""


class GenerationRate(AgentMessage[events.GenerationRate]):
    """The model's speed while it writes."""


class GenerationStats(AgentMessage[events.GenerationStats]):
    """A reply's figures, at its end."""


class Notice(AgentMessage[events.Notice]):
    """Something the user should know once."""


class ServerRequestAnswered(AgentMessage[events.ServerRequestAnswered]):
    """A server's request to the client was answered."""


class TurnFinished(AgentMessage[events.TurnFinished]):
    """The turn ended: answered, stopped or failed."""


class SummaryStarted(AgentMessage[events.SummaryStarted]):
    """The model is writing an exchange's summary."""


class SummaryWritten(AgentMessage[events.SummaryWritten]):
    """An exchange has its summary."""


class SummaryFailed(AgentMessage[events.SummaryFailed]):
    """An exchange could not be summarised."""


class SummariesEnded(AgentMessage[events.SummariesEnded]):
    """The summaries due are written (or stopped)."""


def agent_message(event: events.AgentEvent) -> AgentMessage[Any]:
    """The message that posts ``event`` to the app."""
    return AgentMessage.for_event[type(event)](event)
