"""Search every saved conversation (the palette's "Search conversations"): type, see the matches with
their context and date, Enter opens the conversation at the match."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Static

from mcp_chat_tui.core.text import counted, one_line
from mcp_chat_tui.transcript.search import Match, search_conversations
from mcp_chat_tui.ui.format import literal
from mcp_chat_tui.ui.widgets.sidebar import ListTable

CSS = Path(__file__).with_name("detail.tcss")
SEARCH_DELAY = 0.25  # seconds of no typing before the files are searched
NARROW = 100  # columns: under this the table gives the context more room (shorter names and dates)


class SearchScreen(ModalScreen[Match | None]):
    """A search box over the saved conversations and its matches, newest conversation first."""

    CSS_PATH = CSS
    BINDINGS = [
        Binding("escape", "dismiss(None)", "Close", id="search.close"),
        Binding("down", "to_matches", "Matches", show=False, id="search.matches"),
    ]

    def __init__(self, folder: Path | None = None, text: str = "") -> None:
        super().__init__()
        self.folder = folder
        self.text = text
        self.matches: list[Match] = []
        self.searched = ""  # the text the table shows the matches of

    def compose(self) -> ComposeResult:
        with Vertical(classes="detail-box"):
            yield Static("Search conversations", classes="detail-title")
            yield Input(
                self.text, placeholder="a word or phrase from a prompt, a reply or a tool result", id="search-text"
            )
            yield Static("", id="search-said")
            yield ListTable(id="search-matches")
            yield Static(
                "[b]Enter[/] search / open at the match  [b]↓[/] to the matches  [b]Esc[/] close", classes="detail-keys"
            )

    def on_mount(self) -> None:
        table = self.query_one(ListTable)
        for label, key in (
            ("conversation", "conversation"),
            ("date", "date"),
            ("where", "where"),
            ("context", "context"),
        ):
            table.add_column(label, key=key)
        self.query_one(Input).focus()
        if self.text:
            self.search(self.text)

    @on(Input.Changed, "#search-text")
    def _typed(self, message: Input.Changed) -> None:
        self.search(message.value, delay=SEARCH_DELAY)

    @on(Input.Submitted, "#search-text")
    def _submitted(self, message: Input.Submitted) -> None:
        if self.matches and self.searched == message.value:
            self.dismiss(self.matches[0])
        else:
            self.search(message.value)

    @work(exclusive=True, group="search")
    async def search(self, text: str, delay: float = 0.0) -> None:
        if delay:
            await asyncio.sleep(delay)  # cancelled by the next key: only the last text is searched
        said = self.query_one("#search-said", Static)
        said.update(literal("searching…", "dim"))
        matches = await asyncio.to_thread(search_conversations, text, self.folder)
        self.matches, self.searched = matches, text
        self._show(matches, text)

    def _show(self, matches: list[Match], text: str) -> None:
        table = self.query_one(ListTable)
        table.clear()
        narrow = (table.size.width or self.app.size.width) < NARROW
        title_chars, date_format = (16, "%m-%d %H:%M") if narrow else (30, "%Y-%m-%d %H:%M")
        for index, match in enumerate(matches):
            shown = literal(one_line(around(match.context, text, 6 if narrow else 80), 80))
            shown.highlight_words([text], style="bold reverse", case_sensitive=False)
            table.add_row(
                literal(one_line(match.first_question or match.path.name, title_chars)),
                Text(match.modified.strftime(date_format), style="dim"),
                literal(f"#{match.exchange + 1} {match.where}", "cyan"),
                shown,
                key=str(index),
            )
        said = self.query_one("#search-said", Static)
        if not text.strip():
            said.update("")
        elif not matches:
            said.update(literal(f"no saved conversation says {text!r}", "yellow"))
        else:
            count = {match.path for match in matches}
            said.update(
                literal(f"{counted(len(matches), 'match', 'matches')} in {counted(len(count), 'conversation')}", "dim")
            )

    def action_to_matches(self) -> None:
        if self.matches:
            self.query_one(ListTable).focus()

    @on(DataTable.RowSelected, "#search-matches")
    def _chosen(self, message: DataTable.RowSelected) -> None:
        self.dismiss(self.matches[int(message.row_key.value or 0)])


def around(context: str, text: str, before: int) -> str:
    """``context`` from at most ``before`` characters ahead of ``text`` in it, so that a narrow
    column still shows the match itself."""
    found = context.lower().find(text.lower())
    if found <= before:
        return context
    return "…" + context[found - before :]
