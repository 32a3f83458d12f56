"""The dialog before a folder's ``mcp.json`` starts anything: what it would run, and y or n.

Keys pressed before the dialog could be read do not answer it: it is armed ``ARM_DELAY`` seconds
after it is first drawn, and until then a typed character goes to the prompt it was meant for
(the other keys are ignored). ``armed`` says when it takes its keys.
"""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from mcp_chat_tui.config.folder_trust import FolderFile
from mcp_chat_tui.ui.format import literal

ARM_DELAY = 0.5  # seconds from the first frame that shows the dialog until its keys answer it
NOT_ARMED_HINT = "(its keys answer once you can read it)"
KEY_HINT = "[b]y[/] trust this file and start them  [b]n[/] or [b]Esc[/] chat without them"
WARNING = (
    "This file came with the folder: someone else may have written it, and the programs it names "
    "run as you. A yes is remembered for this version of the file; a changed file asks again."
)


class FolderTrustScreen(ModalScreen[bool]):
    """Asks whether the servers of a folder's mcp.json may start; True: trusted."""

    CSS_PATH = Path(__file__).with_name("folder_trust.tcss")
    BINDINGS = [
        Binding("y", "answer(True)", "Trust and start", id="folder_trust.yes"),
        Binding("n,escape", "answer(False)", "Chat without them", id="folder_trust.no"),
    ]

    def __init__(self, folder: FolderFile) -> None:
        super().__init__()
        self.folder = folder
        self.armed = False
        self._shown = 0  # times it became the top screen: a timer of an earlier showing arms nothing

    def compose(self) -> ComposeResult:
        with Vertical(id="folder-trust-dialog"):
            yield Static(literal(f"Start the servers of {self.folder.source}?", "bold"), id="folder-trust-title")
            with VerticalScroll(id="folder-trust-body"):
                yield Static(literal("\n".join(self.folder.describe())), id="folder-trust-servers")
            yield Static(WARNING, id="folder-trust-warning")
            yield Static(NOT_ARMED_HINT, id="folder-trust-keys")

    def on_screen_resume(self) -> None:
        """Shown (first, or again once a screen over it closed): armed after the next frame plus
        ``ARM_DELAY``, so keys typed for what was on top do not answer it."""
        self._show_armed(False)
        self._shown += 1
        showing = self._shown
        self.call_after_refresh(lambda: self.set_timer(ARM_DELAY, lambda: self._arm(showing)))

    def on_screen_suspend(self) -> None:
        self._shown += 1
        self._show_armed(False)

    def _arm(self, showing: int) -> None:
        if showing == self._shown:
            self._show_armed(True)

    def _show_armed(self, armed: bool) -> None:
        self.armed = armed
        self.query_one("#folder-trust-keys", Static).update(KEY_HINT if armed else NOT_ARMED_HINT)
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.armed if action == "answer" else True

    def on_key(self, event: events.Key) -> None:
        """Before it is armed, a key is not this dialog's: a character goes to the prompt."""
        if self.armed:
            return
        event.stop()
        event.prevent_default()
        if event.is_printable and event.character:
            for prompt in self.app.screen_stack[0].query("#prompt").results(Input):
                prompt.insert_text_at_cursor(event.character)

    def action_answer(self, trusted: bool) -> None:
        self.dismiss(trusted)
