"""The approval dialog: what would run, where, with which arguments; a typed decision comes back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from mcp_chat_tui.agent.events import ApprovalChoice, ApprovalDecision, PlannedCall, Recorded
from mcp_chat_tui.core.text import pretty_json
from mcp_chat_tui.ui.format import literal
from mcp_chat_tui.ui.screens.deciding import DecidingScreen
from mcp_chat_tui.ui.screens.edit_arguments import EditArgumentsScreen
from mcp_chat_tui.ui.widgets.scrolling import Scroll

ANNOTATION_NAMES = {
    "readOnlyHint": "read-only",
    "destructiveHint": "destructive",
    "idempotentHint": "idempotent",
    "openWorldHint": "reaches outside",
}


KEY_HINT = (
    "[b]y[/] once  [b]a[/] all waiting  [b]n[/] deny  [b]e[/] edit\n"
    "[b]t[/] always  [b]T[/] always, saved\n"
    "[b]s[/] or [b]Esc[/] deny all and stop"
)


SHORT_BELOW = 24  # terminal rows under which the dialog drops its spacing and uses the whole height


class ApprovalScreen(DecidingScreen[ApprovalDecision]):
    """Asks before one tool call runs. Every text from the server or model is shown literally; its
    keys act only once it is armed (``DecidingScreen``)."""

    CSS_PATH = Path(__file__).with_name("approval.tcss")
    VERTICAL_BREAKPOINTS = [(0, "-short"), (SHORT_BELOW, "-tall")]  # a short terminal wastes no row
    BINDINGS = [
        Binding("y", "decide('yo')", "Allow once", id="approval.once"),
        Binding("a", "decide('ya')", "Allow all waiting", id="approval.all"),
        Binding("t", "decide('yO')", "Always (session)", id="approval.always"),
        Binding("T", "decide('yO', True)", "Always (saved)", id="approval.always_saved"),
        Binding("n", "decide('n')", "Deny", id="approval.deny"),
        Binding("s,escape", "decide('nA')", "Deny all, stop", id="approval.deny_all"),
        Binding("e", "edit", "Edit the arguments, then run", id="approval.edit"),
    ]

    def __init__(self, call: PlannedCall, waiting: int, recorded: Recorded | None = None, why: str = "") -> None:
        super().__init__()
        self.call = call
        self.waiting = waiting
        self.recorded = recorded
        self.why = why  # why the policy asks about this call

    def compose(self) -> ComposeResult:
        # Everything about the call scrolls between the title and the keys, which are docked:
        # they show however long the arguments and however small the terminal.
        with Scroll(id="approval-dialog"):
            yield Static(self._title(), id="approval-title")
            yield Static(KEY_HINT, id="approval-keys", classes="dialog-keys")
            yield from self._body()

    def _title(self) -> Text:
        title = Text("Run ", style="bold")
        title.append_text(literal(self.call.shown_tool, "bold"))
        if self.call.title:  # what runs is the name: a title is the server's word
            title.append_text(literal(f" ({self.call.tool})", "dim"))
        title.append(" on ", style="bold")
        title.append_text(literal(self.call.server or "?", "bold"))
        title.append("?", style="bold")
        return title

    def _body(self) -> ComposeResult:
        # What y approves comes first: the warnings, then the arguments; the tool's own description
        # and annotations (as long as a server likes) come after, so they never push the arguments
        # out of a small dialog's view.
        spec = self.call.spec
        if self.recorded is not None:
            yield Static(literal(self.recorded.describe()), id="approval-recorded")
        if self.why:
            yield Static(literal(f"asking: {self.why}"), id="approval-why")
        if self.waiting > 1:
            yield Static(f"{self.waiting} calls waiting (this one and {self.waiting - 1} more)", id="approval-waiting")
        if spec is not None and spec.destructive:
            yield Static("⚠ the server marks this tool destructive", id="approval-destructive")
        yield Static(literal(pretty_json(self.call.arguments)), id="approval-arguments")
        if spec is not None and spec.description:
            yield Static(literal(spec.description), id="approval-description")
        marks = [name for key, name in ANNOTATION_NAMES.items() if spec is not None and spec.annotations.get(key)]
        if marks:
            yield Static(literal("annotations: " + ", ".join(marks)), id="approval-annotations")

    def action_decide(self, choice: str, save: bool = False) -> None:
        self.dismiss(ApprovalDecision(ApprovalChoice(choice), save=save))

    def action_edit(self) -> None:
        """The arguments in an editor; taken, the call runs once with them (Esc there: back here)."""
        if self.call.spec is None:
            return

        def edited(arguments: dict[str, Any] | None) -> None:
            if arguments is not None:
                self.dismiss(ApprovalDecision(ApprovalChoice.ALLOW_ONCE, arguments=arguments))

        self.app.push_screen(EditArgumentsScreen(self.call.spec, self.call.arguments), callback=edited)
