"""Every agent event reaches the app as its own message, which has its own handler."""

from typing import get_args

from mcp_chat_tui.agent.events import AgentEvent, AssistantText
from mcp_chat_tui.ui import agent_messages as am
from mcp_chat_tui.ui.agent_events import AgentEventView


def test_each_agent_event_type_has_its_message_and_a_handler():
    event_types = set(get_args(AgentEvent))
    assert len(event_types) >= 20
    assert set(am.AgentMessage.for_event) == event_types
    message_types = set(am.AgentMessage.for_event.values())
    assert len(message_types) == len(event_types)  # one message class per event type
    handled = AgentEventView.__dict__["_decorated_handlers"]
    for message_type in message_types:
        assert len(handled.get(message_type, [])) == 1, message_type.__name__


def test_a_text_message_carries_the_text_that_came_while_it_waited():
    message = am.agent_message(AssistantText("Hel"))
    assert isinstance(message, am.ReplyText)
    assert message.whole_event == AssistantText("Hel")
    message.more_text += ["lo", "!"]
    assert message.whole_event == AssistantText("Hello!")
