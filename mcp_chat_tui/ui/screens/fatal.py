"""A start-up error that ends the app: shown in full, then any key leaves (servers are shut down)."""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from mcp_chat_tui.ui.format import literal


class FatalScreen(ModalScreen[None]):
    CSS_PATH = Path(__file__).with_name("fatal.tcss")

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical(id="fatal-box"):
            yield Static("mcp-chat-tui cannot start", id="fatal-title")
            yield Static(literal(self.message), id="fatal-message")
            yield Static("press any key to exit", id="fatal-keys")

    def on_key(self, event: events.Key) -> None:
        event.stop()
        self.dismiss(None)
