"""Pick a saved conversation to resume, or choose where to export this one."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Static

from mcp_chat_tui.core.text import one_line
from mcp_chat_tui.transcript.store import SavedConversation
from mcp_chat_tui.ui.format import literal
from mcp_chat_tui.ui.widgets.sidebar import ListTable

CSS = Path(__file__).with_name("detail.tcss")


class ResumeScreen(ModalScreen[Path | None]):
    """Recent conversations, newest first: first question, date, model. Enter opens one."""

    CSS_PATH = CSS
    BINDINGS = [
        Binding("escape,q", "dismiss(None)", "Close", id="resume.close"),
    ]

    def __init__(self, conversations: list[SavedConversation]) -> None:
        super().__init__()
        self.conversations = conversations

    def compose(self) -> ComposeResult:
        with Vertical(classes="detail-box"):
            yield Static("Resume a conversation", classes="detail-title")
            if not self.conversations:
                yield Static("No saved conversations yet.")
            yield ListTable(id="conversations")
            yield Static("[b]Enter[/] open  [b]Esc[/] or [b]q[/] close", classes="detail-keys")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("first question", key="question")
        table.add_column("date", key="date")
        table.add_column("model", key="model")
        for index, saved in enumerate(self.conversations):
            table.add_row(
                literal(one_line(saved.first_question or "(empty)", 70)),
                Text(saved.modified.strftime("%Y-%m-%d %H:%M"), style="dim"),
                literal(one_line(saved.model, 30), "dim"),
                key=str(index),
            )
        table.focus()

    @on(DataTable.RowSelected)
    def _chosen(self, message: DataTable.RowSelected) -> None:
        self.dismiss(self.conversations[int(message.row_key.value)].path)


class ExportScreen(ModalScreen[Path | None]):
    """Ask where to write a copy of the transcript."""

    CSS_PATH = CSS
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="export.cancel")]

    def __init__(self, suggestion: Path) -> None:
        super().__init__()
        self.suggestion = suggestion

    def compose(self) -> ComposeResult:
        with Vertical(classes="detail-box small-box"):
            yield Static("Export the transcript to:", classes="detail-title")
            yield Input(str(self.suggestion), id="export-path")
            yield Static("[b]Enter[/] export  [b]Esc[/] cancel", classes="detail-keys")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, message: Input.Submitted) -> None:
        value = message.value.strip()
        self.dismiss(Path(value).expanduser() if value else None)
