"""The app's ``Asker``: each server request becomes a dialog (ui/screens/requests.py), pushed from
whatever task the request came in on and answered through a future."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_types import CreateMessageRequestParams
from textual.app import App
from textual.screen import Screen

from mcp_chat_tui.agent.sampling import ToolUse
from mcp_chat_tui.servers import FormField
from mcp_chat_tui.ui.screens.requests import (
    ElicitFormScreen,
    ElicitUrlScreen,
    PageDoneScreen,
    SampleReviewScreen,
    SamplingScreen,
    ToolUseScreen,
)


class DialogAsker:
    """Asks the user in the app's dialogs."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def _ask(self, screen: Screen) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def answered(result: Any) -> None:
            if not future.done():
                future.set_result(result)

        self.app.call_later(self.app.push_screen, screen, answered)
        try:
            return await future
        except asyncio.CancelledError:  # the server gave up (or is gone): take its dialog away
            if screen.is_current:
                screen.dismiss(None)
            raise

    async def approve_sampling(
        self, server: str, params: CreateMessageRequestParams
    ) -> CreateMessageRequestParams | None:
        return await self._ask(SamplingScreen(server, params))

    async def approve_tool_use(self, server: str, use: ToolUse) -> bool:
        return bool(await self._ask(ToolUseScreen(server, use)))

    async def review_sample(self, server: str, text: str, tool_uses: list[ToolUse]) -> str | None:
        return await self._ask(SampleReviewScreen(server, text, tool_uses))

    async def fill_form(self, server: str, message: str, fields: list[FormField]) -> tuple[str, dict[str, Any]]:
        return await self._ask(ElicitFormScreen(server, message, fields)) or ("cancel", {})

    async def visit_url(self, server: str, message: str, url: str) -> str:
        return await self._ask(ElicitUrlScreen(server, message, url)) or "cancel"

    async def page_done(self, server: str, tool: str, url: str, completed: asyncio.Event) -> bool:
        return bool(await self._ask(PageDoneScreen(server, tool, url, completed)))
