"""The full-screen app's side of a folder's ``mcp.json`` (config/folder_trust.py): before any server
starts, the dialog says what the file would run; on a yes the yes is remembered, the file's inputs
are asked in a form (only now: an untrusted file asks nothing), and its servers join the hub. Both
appear on their own, so both take only keys typed once they are armed (``DecidingScreen``). On a
no, or when the form is cancelled, the app chats without them and says so in the chat.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

from textual.app import App
from textual.screen import Screen

from mcp_chat_tui.config import InputCache
from mcp_chat_tui.config.folder_trust import FolderFile, TrustStore
from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.ui.screens.arguments import Field
from mcp_chat_tui.ui.screens.folder_trust import FolderInputsScreen, FolderTrustScreen
from mcp_chat_tui.ui.widgets.chat import ChatLog, Notice

Result = TypeVar("Result")

INPUTS_ABOUT = "Asked once for this run; a password is typed without echo and never written to a file or log."


async def settle_folder_trust(app: App[Any], hub: ServerHub, chat: ChatLog, folder: FolderFile) -> None:
    """Ask about ``folder`` in ``app``'s dialogs and, when trusted, add its servers to ``hub`` (not
    started yet); a no, or inputs not given, is said in ``chat``. A file that cannot be loaded once
    its inputs are answered ends the app, as at the command line."""
    if not await answer(app, FolderTrustScreen(folder)):
        await chat.mount(Notice(folder.not_trusted_note(), error=True))
        return
    try:
        TrustStore().remember(folder.fingerprint)
    except UserFacingError as exc:
        app.notify(f"trusted for this run only: {exc}", severity="warning", markup=False, timeout=15)
    cache = InputCache()
    wanted = folder.pending_inputs(cache)
    if wanted:
        fields = [
            Field(spec.id, spec.description, value="" if spec.password else spec.default or "", password=spec.password)
            for spec in wanted
        ]
        values = await answer(app, FolderInputsScreen(f"Inputs for {folder.source}", INPUTS_ABOUT, fields))
        if values is None:
            await chat.mount(Notice(f"{folder.source}: inputs not given; running without its servers", error=True))
            return
        for spec in wanted:
            cache.set(spec.id, values.get(spec.id) or spec.default or "")
    config = folder.load(input_cache=cache, redactor=hub.redactor)
    if short := hub.redactor.short_warning():
        app.notify(short, title="secret not hidden", severity="warning", timeout=10)
    hub.add_servers(config.servers.values())


async def answer(app: App[Any], screen: Screen[Result]) -> Result | None:
    """Push ``screen`` and wait for its result (outside a worker, unlike ``push_screen_wait``); if the
    wait is cancelled, the dialog goes with it."""
    result: asyncio.Future[Result | None] = asyncio.get_running_loop().create_future()

    def settle(value: Result | None) -> None:
        if not result.done():
            result.set_result(value)

    app.push_screen(screen, callback=settle)
    try:
        return await result
    except asyncio.CancelledError:
        if app.screen_stack and app.screen_stack[-1] is screen:  # (none left once the app is ending)
            screen.dismiss(None)
        raise
