"""Edit a call's arguments before it runs (``e`` in the approval dialog): the arguments as JSON in an
editor, the tool's input schema listed above it (each property's type, whether it is required, its
description), and Ctrl+S that takes them only once they are a JSON object the schema accepts; Esc
goes back to the dialog with nothing changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from mcp_chat_tui.core.text import pretty_json
from mcp_chat_tui.core.tools import ToolSpec
from mcp_chat_tui.servers.user_calls import schema_problem
from mcp_chat_tui.ui.format import literal

CSS = Path(__file__).with_name("approval.tcss")


def schema_guide(schema: dict[str, Any]) -> Text:
    """One line per property of an input schema: name (``*`` required), type, description."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    required = set(schema.get("required") or []) if isinstance(schema, dict) else set()
    guide = Text()
    for name, prop in (properties if isinstance(properties, dict) else {}).items():
        prop = prop if isinstance(prop, dict) else {}
        kind = prop.get("type", "any")
        kind = " or ".join(map(str, kind)) if isinstance(kind, list) else str(kind)
        if "enum" in prop:
            kind = "one of " + ", ".join(json.dumps(v) for v in prop["enum"])
        guide.append_text(literal(name, "bold"))
        guide.append(" *" if name in required else "", style="bold")
        guide.append_text(literal(f"  {kind}", "cyan"))
        if prop.get("description"):
            guide.append_text(literal(f"  {prop['description']}", "dim"))
        guide.append("\n")
    return guide if guide.plain else literal("(the tool's schema names no arguments)", "dim")


class EditArgumentsScreen(ModalScreen[dict[str, Any] | None]):
    """The arguments of one call, to edit; dismissed with the new ones (None: Esc, unchanged)."""

    CSS_PATH = CSS
    AUTO_FOCUS = "#edit-arguments-json"
    BINDINGS = [
        Binding("ctrl+s", "take", "Run with these", priority=True, id="edit_arguments.take"),
        Binding("escape", "dismiss(None)", "Back, unchanged", id="edit_arguments.back"),
    ]

    def __init__(self, spec: ToolSpec, arguments: dict[str, Any], *, calling: bool = False) -> None:
        """``calling``: the user calls the tool themselves (the server panel's Enter), not a model's call."""
        super().__init__()
        self.spec = spec
        self.arguments = arguments
        self.calling = calling

    def compose(self) -> ComposeResult:
        with Vertical(id="approval-dialog"):
            title = Text("Call " if self.calling else "Edit the arguments of ", style="bold")
            title.append_text(literal(f"{self.spec.server} › {self.spec.name}", "bold"))
            yield Static(title, id="approval-title")
            keys = (
                "[b]Ctrl+S[/] call it  [b]Esc[/] cancel"
                if self.calling
                else "[b]Ctrl+S[/] run with these  [b]Esc[/] back, unchanged"
            )
            yield Static(keys, classes="dialog-keys")
            yield Static(schema_guide(self.spec.input_schema), id="edit-arguments-schema")
            yield TextArea(pretty_json(self.arguments), language="json", id="edit-arguments-json")
            yield Static("", id="edit-arguments-problem")

    def action_take(self) -> None:
        text = self.query_one(TextArea).text
        problem = self._problem(text)
        self.query_one("#edit-arguments-problem", Static).update(literal(problem, "bold red"))
        if not problem:
            self.dismiss(json.loads(text))

    def _problem(self, text: str) -> str:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            return f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        if not isinstance(value, dict):
            return 'the arguments are a JSON object: {"name": value, …}'
        problem = schema_problem(value, self.spec.input_schema)
        return f"the tool's schema refuses them: {problem}" if problem else ""
