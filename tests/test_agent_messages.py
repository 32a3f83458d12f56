"""Every agent event reaches the app as its own message, which is shown by its own method."""

from typing import get_args

from mcp_chat_tui.agent.events import AgentEvent, AssistantText
from mcp_chat_tui.ui import agent_messages as am
from mcp_chat_tui.ui.agent_events import SHOWN_BY
from mcp_chat_tui.ui.app import ChatApp


def test_each_agent_event_type_has_its_message_and_a_handler():
    event_types = set(get_args(AgentEvent))
    assert len(event_types) >= 20
    assert set(am.AgentMessage.for_event) == event_types
    message_types = set(am.AgentMessage.for_event.values())
    assert len(message_types) == len(event_types)  # one message class per event type
    assert set(SHOWN_BY) == message_types  # each shown by its method, and nothing else in the table
    for message_type in message_types:
        assert callable(SHOWN_BY[message_type]), message_type.__name__
    handled = ChatApp.__dict__["_decorated_handlers"]  # the app hands every one of them to that table
    assert len(handled.get(am.AgentMessage, [])) == 1
    assert not set(handled) & message_types, "a message type is also handled on its own"


def test_a_text_message_carries_the_text_that_came_while_it_waited():
    message = am.agent_message(AssistantText("Hel"))
    assert isinstance(message, am.ReplyText)
    assert message.whole_event == AssistantText("Hel")
    message.more_text += ["lo", "!"]
    assert message.whole_event == AssistantText("Hello!")


async def test_a_message_handled_while_the_screens_are_taken_down_draws_nothing():
    """Textual closes the screens before the app's queue is done: an agent message handled then
    (a summary written as a test or the user leaves) is skipped, not an error as the app ends."""
    import asyncio

    from mcp_chat_tui.agent.events import SummaryWritten
    from tests.fakes import ScriptedEngine
    from tests.ui_helpers import SIZE, make_app, wait_ready

    app = make_app(ScriptedEngine([]), servers=[])
    close_all = app._close_all
    handled: list[int] = []

    async def close_all_then_a_message() -> None:
        await close_all()
        app.post_message(am.agent_message(SummaryWritten(0, "a summary")))
        for _ in range(50):  # the app's queue still runs after its screens are gone
            await asyncio.sleep(0.02)
            if app.agent_view.agent_messages < 0:  # the handler ran (the message was not counted when posted)
                break
        handled.append(app.agent_view.agent_messages)

    app._close_all = close_all_then_a_message
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
    assert handled == [-1]
