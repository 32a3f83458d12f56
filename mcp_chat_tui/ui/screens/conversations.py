"""Pick a saved conversation to resume, or choose where to export this one."""

from __future__ import annotations

import os
from dataclasses import dataclass
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
        index = message.row_key.value  # each row's key is its index
        if index is not None:
            self.dismiss(self.conversations[int(index)].path)


@dataclass(frozen=True)
class ExportTarget:
    """Where to export, and whether the user agreed to replace the file already there."""

    path: Path
    replace: bool = False


class ExportScreen(ModalScreen[ExportTarget | None]):
    """Ask where to write a copy of the transcript; a file already there is replaced only after a
    second Enter on the same path, and the conversation's own file never."""

    CSS_PATH = CSS
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="export.cancel")]

    def __init__(self, suggestion: Path, own_file: Path | None = None) -> None:
        super().__init__()
        self.suggestion = suggestion
        self.own_file = own_file  # the file this conversation is saved to as it goes
        self._replace_agreed: Path | None = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="detail-box small-box"):
            yield Static("Export the transcript to:", classes="detail-title")
            yield Input(str(self.suggestion), id="export-path")
            yield Static("", id="export-question")
            yield Static("[b]Enter[/] export  [b]Esc[/] cancel", classes="detail-keys")

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        self._ask("")

    @on(Input.Changed)
    def _changed(self) -> None:
        self._replace_agreed = None
        self._ask("")

    @on(Input.Submitted)
    def _submitted(self, message: Input.Submitted) -> None:
        value = message.value.strip()
        if not value:
            self.dismiss(None)
            return
        path = Path(value).expanduser().absolute()
        if path.is_dir():
            self._ask(f"{path} is a folder: add a file name to it")
        elif self.own_file is not None and path.resolve() == self.own_file.resolve():
            self._ask(f"{path} is this conversation's own file, saved as it goes: choose another name")
        elif os.path.lexists(path) and self._replace_agreed != path:
            self._replace_agreed = path
            self._ask(f"{path} already exists: Enter again replaces it; change the name to keep it")
        else:
            self.dismiss(ExportTarget(path, replace=self._replace_agreed == path))

    def _ask(self, question: str) -> None:
        line = self.query_one("#export-question", Static)
        line.update(literal(question))
        line.display = bool(question)
