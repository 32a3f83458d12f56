"""A streaming reply stopped while its Markdown takes in text: the update under way finishes on its own
(``asyncio.shield``), and when it fails (the reply was removed meanwhile) its error is read, not left to
asyncio's "Task exception was never retrieved" in the log."""

from __future__ import annotations

import asyncio
import gc

from textual.app import App, ComposeResult
from textual.widget import MountError
from textual.widgets import Markdown

from mcp_chat_tui.ui.streaming import DrawingBudget, PacedMarkdownStream


class OneMarkdown(App[None]):
    def compose(self) -> ComposeResult:
        yield Markdown()


async def test_a_failed_update_left_running_by_stop_is_read():
    app = OneMarkdown()
    unread: list[dict[str, object]] = []
    async with app.run_test():
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _loop, context: unread.append(context))
        markdown = app.query_one(Markdown)
        entered, fail = asyncio.Event(), asyncio.Event()

        async def append(text: str) -> None:  # the reply is removed while its update waits to mount
            entered.set()
            await fail.wait()
            raise MountError("the reply is gone")

        markdown.append = append  # type: ignore[method-assign]
        stream = PacedMarkdownStream(markdown, DrawingBudget())
        stream.start()
        stream.write_now("some text")
        await asyncio.wait_for(entered.wait(), 5)
        await stream.stop(show_the_rest=False)  # the update under way goes on: shielded
        fail.set()
        for _ in range(5):
            await asyncio.sleep(0)
        gc.collect()  # a task's unread error is logged as the task is collected
        await asyncio.sleep(0)
        loop.set_exception_handler(None)
    assert [context.get("message") for context in unread] == []
