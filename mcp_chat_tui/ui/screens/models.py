"""The model picker (``/model``, the palette's "Switch model"): the models this machine has, Enter
switches to the one under the cursor, Esc closes."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from mcp_chat_tui.conversation import ModelChoice
from mcp_chat_tui.ui.format import literal
from mcp_chat_tui.ui.widgets.sidebar import ListTable

CSS = Path(__file__).with_name("models.tcss")
NONE_FOUND = (
    "No models found: MLX models in the Hugging Face cache, and the folders and GGUF files "
    "config.toml's local_models names, are listed here."
)


class ModelPickerScreen(ModalScreen[ModelChoice | None]):
    """Lists ``models`` (name, kind, size, where), the ``current`` one marked; dismissed with the one chosen."""

    CSS_PATH = CSS
    BINDINGS = [Binding("escape,q", "dismiss", "Close", id="models.close")]

    def __init__(self, models: list[ModelChoice], current: str) -> None:
        super().__init__()
        self.models = models
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="detail-box"):
            yield Static(literal(f"Switch model  ·  now {self.current}", "bold"), classes="detail-title")
            if self.models:
                yield ListTable(id="model-choices")
            else:
                yield Static(literal(NONE_FOUND, "dim"))
            yield Static("[b]Enter[/] switch  ·  [b]Esc[/] or [b]q[/] close", classes="detail-keys")

    def on_mount(self) -> None:
        if not self.models:
            return
        table = self.query_one(DataTable)
        for label in ("", "model", "kind", "size", "where"):
            table.add_column(label, key=label or "mark")
        for index, model in enumerate(self.models):
            mark = "●" if model.named(self.current) else ""
            cells = (model.name, model.kind, model.size_label, model.where)
            table.add_row(Text(mark), *(literal(cell) for cell in cells), key=str(index))
        table.focus()

    def on_data_table_row_selected(self, message: DataTable.RowSelected) -> None:
        message.stop()
        self.dismiss(self.models[int(str(message.row_key.value))])
