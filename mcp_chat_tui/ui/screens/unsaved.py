"""The dialog for a call whose start could not be saved: it was not sent; try saving again, run it
unsaved, or leave it unsent.

It comes up on its own, at the moment a call was about to go out, so it is a ``DecidingScreen``:
its keys answer only once it has been drawn and no key typed for the guard time, and keys typed
before go to the prompt. That guard is what keeps a letter typed in passing from answering it, so
running unsaved is a plain ``u`` (a capital ``U`` stood in for the guard before there was one).
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from mcp_chat_tui.agent.events import PlannedCall, UnsavedChoice
from mcp_chat_tui.agent.turn import SAVE_ADVICE
from mcp_chat_tui.core.text import pretty_json
from mcp_chat_tui.ui.format import literal
from mcp_chat_tui.ui.screens.deciding import DecidingScreen
from mcp_chat_tui.ui.widgets.scrolling import Scroll

KEY_HINT = "[b]r[/] try saving again  [b]u[/] run it unsaved  [b]n[/] or [b]Esc[/] don't run it"


class UnsavedStartScreen(DecidingScreen[UnsavedChoice]):
    """Asks what to do with ``call``, whose start could not be saved (``problem``: the file, the OS error)."""

    CSS_PATH = Path(__file__).with_name("unsaved.tcss")
    BINDINGS = [
        Binding("r", "choose('RETRY')", "Try saving again", id="unsaved.retry"),
        Binding("u", "choose('RUN_UNSAVED')", "Run it unsaved", id="unsaved.run"),
        Binding("n,escape", "choose('DONT_RUN')", "Don't run it", id="unsaved.dont_run"),
    ]

    def __init__(self, call: PlannedCall, problem: str) -> None:
        super().__init__()
        self.call = call
        self.problem = problem

    def compose(self) -> ComposeResult:
        with Scroll(id="unsaved-dialog"):
            yield Static(self._title(), id="unsaved-title")
            yield Static(KEY_HINT, id="unsaved-keys", classes="dialog-keys")
            yield Static(literal(self.problem), id="unsaved-problem")
            yield Static(
                "A call is sent only once its start is saved, so that a resume never runs it twice. "
                f"To send it, {SAVE_ADVICE}, then press r.",
                id="unsaved-why",
            )
            yield Static(
                "u sends it now. The conversation says so once it can be saved; until then a note in the "
                "app's data folder keeps its start, so a resume asks before running it again.",
                id="unsaved-risk",
            )
            yield Static(literal(pretty_json(self.call.arguments)), id="unsaved-arguments")

    def _title(self) -> Text:
        title = Text("Not sent: ", style="bold")
        title.append_text(literal(self.call.tool, "bold"))
        title.append(" on ", style="bold")
        title.append_text(literal(self.call.server or "?", "bold"))
        title.append(" (the conversation could not be saved)", style="bold")
        return title

    def action_choose(self, choice: str) -> None:
        self.dismiss(UnsavedChoice[choice])
