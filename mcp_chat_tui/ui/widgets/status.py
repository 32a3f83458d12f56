"""The status bar: model, engine state (with download progress), tokens in context, servers."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import ProgressBar, Static

from mcp_chat_tui.ui.format import literal


class StatusBar(Horizontal):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; padding: 0 1; }
    StatusBar > #status-text { width: 1fr; }
    StatusBar > ProgressBar { width: 30; display: none; }
    StatusBar.-downloading > ProgressBar { display: block; }
    """

    model = reactive("")
    engine_state = reactive("starting")
    detail = reactive("")
    context_tokens = reactive(0)
    servers = reactive("")

    def __init__(self, model: str = "", **options) -> None:
        super().__init__(**options)
        self.set_reactive(StatusBar.model, model)

    def compose(self) -> ComposeResult:
        yield Static(self.render_status(), id="status-text")
        # the progress bar is mounted by the first download: the first frame stays light

    def render_status(self) -> Text:
        text = literal(self.model or "no model", "bold")
        colour = {"ready": "green", "generating": "cyan", "failed": "red"}.get(self.engine_state, "yellow")
        text.append("  ·  ")
        text.append(self.engine_state, style=colour)
        if self.detail:
            text.append_text(literal(f" {self.detail}", "dim"))
        if self.context_tokens:
            text.append(f"  ·  {self.context_tokens} tokens in context", style="dim")
        if self.servers:
            text.append_text(literal(f"  ·  {self.servers}", "dim"))
        return text

    def _refresh(self) -> None:
        if self.is_mounted:
            self.query_one("#status-text", Static).update(self.render_status())

    def watch_model(self) -> None:
        self._refresh()

    def watch_engine_state(self) -> None:
        self._refresh()

    def watch_detail(self) -> None:
        self._refresh()

    def watch_context_tokens(self) -> None:
        self._refresh()

    def watch_servers(self) -> None:
        self._refresh()

    def show_download(self, done: int, total: int | None) -> None:
        self.add_class("-downloading")
        bars = self.query(ProgressBar)
        if bars:
            bars.first().update(total=total, progress=done)
        else:
            bar = ProgressBar(total=total, show_eta=False, id="status-progress")
            self.mount(bar)
            bar.update(progress=done)

    def hide_download(self) -> None:
        self.remove_class("-downloading")
