"""The model detail: which model, how it computes, and each generation setting in effect with where it came from."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from mcp_chat_tui.engine import DEFAULT_SOURCE, Engine, GenerationSettings
from mcp_chat_tui.ui.format import literal
from mcp_chat_tui.ui.widgets.sidebar import ListTable

CSS = Path(__file__).with_name("detail.tcss")
PRECEDENCE = "A flag (--temp, --max-tokens, --seed) wins over config.toml ([models.\"<id>\"], then [model]), which wins over the model's generation_config.json, which wins over the app's default."


def engine_line(engine: Engine) -> str:
    """How the model runs: on this machine with MLX (and what it computes in), or at an endpoint."""
    endpoint = engine.endpoint
    if endpoint:
        return f"served by {endpoint} (settings left at their default are the app's; the server may apply its own)"
    compute = engine.compute_label
    return "local, MLX" + (f" · {compute}" if compute else "")


class ModelDetailScreen(ModalScreen[None]):
    """The model and its generation settings: each one's value and its source (flag, config.toml, model file, default)."""

    CSS_PATH = CSS
    BINDINGS = [Binding("escape,q", "dismiss", "Close", id="model_detail.close")]

    def __init__(self, model_label: str, engine: Engine) -> None:
        super().__init__()
        self.model_label = model_label
        self.engine = engine

    def compose(self) -> ComposeResult:
        with Vertical(classes="detail-box"):
            title = literal(self.model_label, "bold")
            title.append_text(literal(f"  ·  {engine_line(self.engine)}", "dim"))
            yield Static(title, classes="detail-title")
            yield ListTable(id="model-settings")
            notes = PRECEDENCE
            if not self.engine.loaded:
                notes += " The model's generation_config.json is read when the model has loaded."
            yield Static(literal(notes, "dim"), classes="detail-section")
            yield Static("[b]Esc[/] or [b]q[/] close", classes="detail-keys")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("setting", key="setting")
        table.add_column("value", key="value")
        table.add_column("from", key="source")
        generation: GenerationSettings = self.engine.generation or GenerationSettings()
        for key, value, source in generation.rows():
            table.add_row(
                Text(key, style="bold"),
                Text(value),
                Text(source, style="dim" if source == DEFAULT_SOURCE else ""),
                key=key,
            )
        table.focus()
