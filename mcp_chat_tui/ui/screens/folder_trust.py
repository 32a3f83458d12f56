"""The dialog before a folder's ``mcp.json`` starts anything: what it would run, and y or n.

It appears at start, while the model loads and the user may already be typing a prompt, so it is a
``DecidingScreen``: its keys answer only once it has been drawn and no key typed for the guard time;
keys typed before go to the prompt (ui/dialog_keys.py).
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static

from mcp_chat_tui.config.folder_trust import FolderFile
from mcp_chat_tui.ui.format import literal
from mcp_chat_tui.ui.screens.arguments import ArgumentsScreen
from mcp_chat_tui.ui.screens.deciding import DecidingScreen
from mcp_chat_tui.ui.widgets.scrolling import Scroll

KEY_HINT = "[b]y[/] trust this file and start them  [b]n[/] or [b]Esc[/] chat without them"
WARNING = (
    "This file came with the folder: someone else may have written it, and the programs it names "
    "run as you. A yes is remembered for this version of the file; a changed file asks again."
)


class FolderTrustScreen(DecidingScreen[bool]):
    """Asks whether the servers of a folder's mcp.json may start; True: trusted."""

    CSS_PATH = Path(__file__).with_name("folder_trust.tcss")
    BINDINGS = [
        Binding("y", "answer(True)", "Trust and start", id="folder_trust.yes"),
        Binding("n,escape", "answer(False)", "Chat without them", id="folder_trust.no"),
    ]

    def __init__(self, folder: FolderFile) -> None:
        super().__init__()
        self.folder = folder

    def compose(self) -> ComposeResult:
        with Vertical(id="folder-trust-dialog"):
            yield Static(literal(f"Start the servers of {self.folder.source}?", "bold"), id="folder-trust-title")
            with Scroll(id="folder-trust-body"):
                yield Static(literal("\n".join(self.folder.describe())), id="folder-trust-servers")
            yield Static(WARNING, id="folder-trust-warning")
            yield Static(KEY_HINT, id="folder-trust-keys", classes="dialog-keys")

    def action_answer(self, trusted: bool) -> None:
        self.dismiss(trusted)


class FolderInputsScreen(ArgumentsScreen, DecidingScreen[dict[str, str] | None]):
    """The trusted file's ``${input:...}`` values: the form of ``ArgumentsScreen``, armed as a
    deciding dialog. It comes up on its own right after the yes, and Enter sends what its fields
    hold (a token, to a program about to start), so keys typed before it was drawn go to the prompt."""
