"""The chat follows the conversation: sending a prompt brings the chat to its end and follows the
reply, wherever the user had scrolled; scrolling up during a reply stops following until the user
is back at the end (or sends again), as terminals and chat apps do."""

from __future__ import annotations

import asyncio

from mcp_chat_tui.engine.events import TextDelta
from mcp_chat_tui.ui.widgets.chat import UserMessage
from mcp_chat_tui.ui.widgets.reply import AssistantReply
from tests.fakes import ScriptedEngine
from tests.ui_helpers import chat_text, make_app, send, wait_for, wait_ready, wait_turn_done

LONG_ANSWER = "\n\n".join(f"Paragraph {number} of a long answer." for number in range(1, 25))


def at_end(chat) -> bool:
    return round(chat.scroll_y) >= chat.max_scroll_y


def shown(chat, widget) -> bool:
    """Whether ``widget`` is inside the part of the chat on screen now."""
    return chat.region.overlaps(widget.region) and widget.region.height > 0


async def fill_chat(pilot, app, exchanges: int = 3) -> None:
    for number in range(exchanges):
        await send(pilot, f"question {number}")
        await wait_turn_done(pilot, app)


async def test_sending_after_reading_the_start_brings_the_chat_to_its_end_and_follows_the_reply():
    app = make_app(ScriptedEngine([LONG_ANSWER] * 3))  # the new question's answer is short
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot, app)
        await fill_chat(pilot, app)
        chat = app.chat
        await pilot.press("f2", "home")
        await wait_for(pilot, lambda: chat.scroll_y == 0, what="the start of the chat")
        await send(pilot, "the new question")
        await wait_turn_done(pilot, app)
        await wait_for(pilot, lambda: at_end(chat), what="the chat at its end")
        prompt = list(chat.query(UserMessage))[-1]
        assert prompt.prompt == "the new question"
        assert shown(chat, prompt) and shown(chat, list(chat.query(AssistantReply))[-1])
        assert at_end(chat), (chat.scroll_y, chat.max_scroll_y)


class GatedEngine(ScriptedEngine):
    """Plays a long answer, then waits for ``gate`` before each further paragraph."""

    def __init__(self, replies) -> None:
        super().__init__(replies)
        self.gate = asyncio.Event()
        self.waiting = asyncio.Event()

    async def stream(self, messages, tools=None, **options):
        if self.replies and self.replies[0] == "gated":
            self.replies.pop(0)
            self.replies.insert(0, [TextDelta(LONG_ANSWER)] + [TextDelta(f"\n\nMore {n}.") for n in range(3)])
            async for event in super().stream(messages, tools, **options):
                if isinstance(event, TextDelta) and event.text.startswith("\n\nMore"):
                    self.waiting.set()
                    await self.gate.wait()
                    self.gate.clear()
                yield event
            return
        async for event in super().stream(messages, tools, **options):
            yield event


async def test_scrolling_up_during_a_reply_stops_following_until_back_at_the_end():
    engine = GatedEngine([LONG_ANSWER, "gated"])
    app = make_app(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot, app)
        await fill_chat(pilot, app, 1)
        await send(pilot, "a long one")
        await wait_for(pilot, lambda: engine.waiting.is_set() and at_end(app.chat), what="the reply followed")
        chat = app.chat
        await pilot.press("f2", "pageup")
        await wait_for(pilot, lambda: not at_end(chat), what="the chat scrolled up")
        kept = chat.scroll_y
        engine.gate.set()  # more of the reply comes
        await wait_for(pilot, lambda: "More 0." in chat_text(app), what="more text")
        await pilot.pause()
        assert chat.scroll_y == kept, "the chat jumped to the end while the user read above"
        await pilot.press("end")
        await wait_for(pilot, lambda: at_end(chat), what="the end")
        engine.gate.set()
        await wait_for(pilot, lambda: "More 1." in chat_text(app), what="more text")
        await pilot.pause()
        await wait_for(pilot, lambda: at_end(chat), what="following again")
        engine.gate.set()
        await wait_turn_done(pilot, app)
