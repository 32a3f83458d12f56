"""The app's ``Asker``: each server request becomes a dialog (ui/screens/requests.py), pushed from
whatever task the request came in on and answered through a future; ``dialog_requests`` is what
the hub answers the servers' requests with in the app."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, TypeVar

from textual.app import App
from textual.screen import Screen

from mcp_chat_tui.agent.asking_requests import AskingClientRequests, YesAsker
from mcp_chat_tui.agent.events import AgentSink
from mcp_chat_tui.agent.sampling import ToolUse
from mcp_chat_tui.conversation import Conversation
from mcp_chat_tui.servers import FormField, withdrawal
from mcp_chat_tui.ui.screens.deciding import withdraw_dialog
from mcp_chat_tui.ui.screens.requests import (
    ElicitFormScreen,
    ElicitUrlScreen,
    PageDoneScreen,
    SampleReviewScreen,
    SamplingScreen,
    ToolUseScreen,
)

if TYPE_CHECKING:
    from mcp_types import CreateMessageRequestParams

Answer = TypeVar("Answer")


class DialogAsker:
    """Asks the user in the app's dialogs."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app

    async def _ask(self, screen: Screen[Answer], what: str) -> Answer | None:
        """The dialog's answer. When what it answers ends first (the server took the request back or
        went away, the call it came during ended), it is taken away with a notice saying why
        (``what``: the dialog, as the notice names it), and nothing typed in it is sent."""
        future: asyncio.Future[Answer | None] = asyncio.get_running_loop().create_future()

        def answered(result: Answer | None) -> None:
            if not future.done():
                future.set_result(result)

        def show() -> None:
            if not future.done():  # not when it ended before it could be shown
                self.app.push_screen(screen, answered)

        self.app.call_later(show)
        try:
            return await future
        except asyncio.CancelledError as exc:
            future.cancel()
            withdraw_dialog(self.app, screen, what, withdrawal(exc) or "what it answered has ended")
            raise

    async def approve_sampling(
        self, server: str, params: CreateMessageRequestParams
    ) -> CreateMessageRequestParams | None:
        return await self._ask(SamplingScreen(server, params), f"{server}'s sampling request")

    async def approve_tool_use(self, server: str, use: ToolUse) -> bool:
        allowed = await self._ask(ToolUseScreen(server, use), f"the tool use {use.name} for {server}")
        return bool(allowed)

    async def review_sample(self, server: str, text: str, tool_uses: list[ToolUse]) -> str | None:
        return await self._ask(SampleReviewScreen(server, text, tool_uses), f"the sampled answer for {server}")

    async def fill_form(self, server: str, message: str, fields: list[FormField]) -> tuple[str, dict[str, Any]]:
        return await self._ask(ElicitFormScreen(server, message, fields), f"{server}'s form") or ("cancel", {})

    async def visit_url(self, server: str, message: str, url: str) -> str:
        return await self._ask(ElicitUrlScreen(server, message, url), f"{server}'s page to open") or "cancel"

    async def page_done(self, server: str, tool: str, url: str, completed: asyncio.Event) -> bool:
        done = await self._ask(PageDoneScreen(server, tool, url, completed), f"{server}'s page for {tool}")
        return bool(done)


def dialog_requests(app: App[Any], conversation: Conversation, sink: AgentSink, *, yes: bool) -> AskingClientRequests:
    """The servers' samples and forms, asked in ``app``'s dialogs (``--yes``: allowed); the model
    answering the conversation now samples, under its name (``/model`` changes both), and what was
    answered goes to ``sink``. The secrets typed into forms are hidden by the agent's redactor (the hub's)."""
    asker = DialogAsker(app)
    agent = conversation.agent
    return AskingClientRequests(
        lambda: agent.engine,
        YesAsker(asker) if yes else asker,
        sink,
        model_busy=lambda: agent.generating,
        model_name=lambda: conversation.model_label,
        redactor=agent.redactor,
    )
