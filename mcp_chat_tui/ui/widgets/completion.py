"""The completion list above the prompt box: name, server and description of each match."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from mcp_chat_tui.ui.completion import Candidate
from mcp_chat_tui.ui.format import literal
from mcp_chat_tui.ui.widgets.scrolling import ScrollbarInPlace


class CompletionMenu(ScrollbarInPlace, OptionList):
    """Shown while ``/`` or ``@`` is being typed; the prompt box keeps the focus and moves its
    highlight (Up, Down), takes its choice (Tab, Enter) or closes it (Esc)."""

    DEFAULT_CSS = """
    CompletionMenu { display: none; height: auto; max-height: 8; border: round $accent; background: $surface; }
    CompletionMenu.-open { display: block; }
    """
    can_focus = False

    class Clicked(Message):
        """An entry was clicked: taken as Tab or Enter would take it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.candidates: list[Candidate] = []

    def on_mount(self) -> None:
        if self.is_open:  # offered before it was mounted, at the first ``/`` or ``@``
            self.screen.refresh_bindings()  # (``self.refresh_bindings`` waits for the end of mounting)

    def _on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(self.Clicked())

    def offer(self, candidates: list[Candidate]) -> None:
        was_open = self.is_open
        self.candidates = candidates
        self.clear_options()
        self.add_options([Option(self._row(candidate)) for candidate in candidates])
        self.set_class(bool(candidates), "-open")
        if candidates:
            self.highlighted = 0
        if self.is_open != was_open:
            self.refresh_bindings()  # Esc closes the list while it is open: the footer says so

    def close(self) -> None:
        self.offer([])

    @property
    def is_open(self) -> bool:
        return bool(self.candidates)

    def move(self, step: int) -> None:
        if self.candidates:
            self.highlighted = ((self.highlighted or 0) + step) % len(self.candidates)

    def chosen(self) -> Candidate | None:
        if not self.candidates or self.highlighted is None:
            return None
        return self.candidates[self.highlighted]

    @staticmethod
    def _row(candidate: Candidate) -> Table:
        row = Table.grid(padding=(0, 1), expand=True)
        row.add_column(no_wrap=True, max_width=32)
        row.add_column(no_wrap=True, style="dim", max_width=16)
        row.add_column(no_wrap=True, ratio=1, overflow="ellipsis")
        row.add_row(literal(candidate.name, "bold"), literal(candidate.source), literal(candidate.detail, "italic"))
        return row
