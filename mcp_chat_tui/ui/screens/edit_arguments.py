"""Edit a call's arguments before it runs (``e`` in the approval dialog), or give them to a tool the
user calls (the server panel's Enter): a form built from the tool's input schema (ui/widgets/schema_form.py;
what a form cannot show is a JSON field), and Ctrl+O for the whole arguments as JSON in an editor, with
the schema listed above it. Ctrl+S takes them only once they are a JSON object the schema accepts (a
field's error under it); Esc goes back with nothing changed."""

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
from mcp_chat_tui.servers import form_fields, schema_problem
from mcp_chat_tui.ui.format import literal
from mcp_chat_tui.ui.widgets.schema_form import SchemaForm, filled
from mcp_chat_tui.ui.widgets.scrolling import Scroll

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
    AUTO_FOCUS = ""  # the first field, or the JSON (on_mount)
    BINDINGS = [
        Binding("ctrl+s", "take", "Run with these", priority=True, id="edit_arguments.take"),
        Binding("ctrl+o", "switch", "The form, or the whole JSON", priority=True, id="edit_arguments.switch"),
        Binding("escape", "dismiss(None)", "Back, unchanged", id="edit_arguments.back"),
    ]

    def __init__(self, spec: ToolSpec, arguments: dict[str, Any], *, calling: bool = False) -> None:
        """``calling``: the user calls the tool themselves (the server panel's Enter), not a model's call."""
        super().__init__()
        self.spec = spec
        self.arguments = arguments
        self.calling = calling
        self.form_shown = True  # the form (False: the whole arguments as JSON)

    def compose(self) -> ComposeResult:
        fields = form_fields(self.spec.input_schema)
        with Vertical(id="approval-dialog"):
            title = Text("Call " if self.calling else "Edit the arguments of ", style="bold")
            title.append_text(literal(f"{self.spec.server} › {self.spec.name}", "bold"))
            yield Static(title, id="approval-title")
            yield Static(self._keys(), classes="dialog-keys", id="edit-arguments-keys")
            with Scroll(id="edit-arguments-form"):
                yield SchemaForm(filled(fields, self.arguments))
            yield Static(schema_guide(self.spec.input_schema), id="edit-arguments-schema")
            yield TextArea(pretty_json(self.arguments), language="json", id="edit-arguments-json")
            yield Static("", id="edit-arguments-problem")

    def on_mount(self) -> None:
        self._show(form=bool(self.query_one(SchemaForm).fields))  # no properties: only the JSON says anything

    def _keys(self) -> str:
        run = "[b]Ctrl+S[/] call it" if self.calling else "[b]Ctrl+S[/] run with these"
        back = "[b]Esc[/] cancel" if self.calling else "[b]Esc[/] back, unchanged"
        return f"{run}  [b]Ctrl+O[/] {'JSON' if self.form_shown else 'form'}  {back}"

    def _show(self, *, form: bool) -> None:
        self.form_shown = form
        self.query_one("#edit-arguments-form").display = form
        self.query_one("#edit-arguments-schema").display = not form
        self.query_one(TextArea).display = not form
        self.query_one("#edit-arguments-keys", Static).update(self._keys())
        target = self.query_one(SchemaForm).query("#field-0") if form else None
        (target.first() if target else self.query_one(TextArea)).focus()

    async def action_switch(self) -> None:
        """Ctrl+O: from the form to the whole arguments as JSON, or back (each view takes the other's values)."""
        problem = self.query_one("#edit-arguments-problem", Static)
        if self.form_shown:
            values = self._form_arguments()
            if values is None:
                problem.update(literal("fix the fields marked before the JSON view", "bold red"))
                return
            self.query_one(TextArea).load_text(pretty_json(values))
        else:
            value, why = self._json_arguments(self.query_one(TextArea).text)
            if value is None:
                problem.update(literal(why, "bold red"))
                return
            self.arguments = value
            form = self.query_one(SchemaForm)
            form.fields = filled(form.fields, value)
            await form.recompose()
        problem.update("")
        self._show(form=not self.form_shown)

    def action_take(self) -> None:
        if self.form_shown:
            value, problem = self._form_arguments(), "fix the fields marked"
        else:
            value, problem = self._json_arguments(self.query_one(TextArea).text)
        if value is not None:
            problem = self._schema_problem(value)
        self.query_one("#edit-arguments-problem", Static).update(literal(problem, "bold red"))
        if value is not None and not problem:
            self.dismiss(value)

    def _form_arguments(self) -> dict[str, Any] | None:
        """The form's values over the arguments it has no field for (None: a field is wrong, said under it)."""
        form = self.query_one(SchemaForm)
        values = form.values()
        if values is None:
            return None
        named = {field.name for field in form.fields}
        return {key: value for key, value in self.arguments.items() if key not in named} | values

    @staticmethod
    def _json_arguments(text: str) -> tuple[dict[str, Any] | None, str]:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            return None, f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        if not isinstance(value, dict):
            return None, 'the arguments are a JSON object: {"name": value, …}'
        return value, ""

    def _schema_problem(self, value: dict[str, Any]) -> str:
        """Why the schema refuses ``value`` ("" when it does not); said at the field it names too."""
        problem = schema_problem(value, self.spec.input_schema)
        if not problem:
            return ""
        form = self.query_one(SchemaForm)
        where = problem.split("/", 1)[0].split(":", 1)[0] if ": " in problem else ""
        index = form.index_of(where) if where else None
        if index is not None and self.form_shown:
            form.show_error(index, problem.split(": ", 1)[1])
        return f"the tool's schema refuses them: {problem}"
