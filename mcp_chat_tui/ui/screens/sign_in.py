"""The sign-in dialog: which server asks (and, for a call that wants more access, which scopes), the
full authorization address and where it goes, and the browser opened only on the user's key, once
the dialog is armed (``DecidingScreen``), and only for an https address or an http one to this
computer (``core/page_address.py``). It closes itself when the browser comes back (or the sign-in
fails)."""

from __future__ import annotations

import asyncio
import webbrowser
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from mcp_chat_tui.core.page_address import check_page_address
from mcp_chat_tui.servers import SignInRequest
from mcp_chat_tui.ui.format import literal
from mcp_chat_tui.ui.screens.deciding import DecidingScreen
from mcp_chat_tui.ui.widgets.scrolling import Scroll

KEY_HINT = "[b]o[/] or [b]Enter[/] open in the browser  [b]c[/] copy the address  [b]Esc[/] cancel"
REFUSED_KEY_HINT = "[b]c[/] copy the address  [b]Esc[/] cancel"


class SignInScreen(DecidingScreen[None]):
    """Shows one ``SignInRequest``; nothing is opened until the user presses ``o`` or Enter."""

    CSS_PATH = Path(__file__).with_name("sign_in.tcss")
    BINDINGS = [
        Binding("o,enter", "open_browser", "Open in browser", id="sign_in.open"),
        Binding("c", "copy_address", "Copy address", id="sign_in.copy"),
        Binding("escape", "cancel", "Cancel sign-in", id="sign_in.cancel"),
    ]

    def __init__(self, request: SignInRequest) -> None:
        super().__init__()
        self.request = request
        self.address = check_page_address(request.url)

    def compose(self) -> ComposeResult:
        with Scroll(id="sign-in-dialog"):
            server, more = self.request.server, self.request.more_access
            title = f"Sign in to {server} again, with more access" if more else f"Sign in to {server}"
            why = (
                f"A call to {server} needs more access: authorize mcp-chat-tui for {more}; the call is sent "
                "again once you are back. "
                if more
                else f"{server} wants you to authorize mcp-chat-tui. "
            )
            yield Static(literal(title, "bold"), id="sign-in-title")
            yield Static(
                literal(f"{why}Open this address in a browser (it then comes back to {self.request.redirect_uri}):"),
                id="sign-in-about",
            )
            if self.address.host:
                yield Static(literal(f"goes to {self.address.host}"), id="sign-in-host")
            yield Static(literal(self.request.url), id="sign-in-url")
            status = self.address.refusal or "waiting for the browser…"
            yield Static(literal(status), id="sign-in-status", classes="refused" if self.address.refusal else "")
            keys = KEY_HINT if self.address.openable else REFUSED_KEY_HINT
            yield Static(keys, id="sign-in-keys", classes="dialog-keys")

    def on_mount(self) -> None:
        self._close_when_finished()

    @work(group="sign-in")
    async def _close_when_finished(self) -> None:
        await self.request.finished()
        self.dismiss(None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "open_browser" and not self.address.openable:
            return False
        return super().check_action(action, parameters)

    async def action_open_browser(self) -> None:
        if not self.address.openable:
            return
        opened = await asyncio.to_thread(webbrowser.open, self.address.url)
        if self.request.outcome.done() or not self.is_attached:  # the browser came back first: closed
            return
        status = (
            "opened in the browser; waiting for it to come back…"
            if opened
            else "no browser could be opened here: copy the address"
        )
        self.query_one("#sign-in-status", Static).update(status)

    def action_copy_address(self) -> None:
        self.app.copy_to_clipboard(self.request.url)
        self.query_one("#sign-in-status", Static).update("address copied (where the terminal allows it)")

    def action_cancel(self) -> None:
        self.request.cancel()
