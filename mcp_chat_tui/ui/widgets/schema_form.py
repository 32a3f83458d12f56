"""A form built from a JSON schema's properties (``servers.FormField``): the one form the elicitation
dialog and the argument editor (a model's call, or a tool the user calls) both show.

Each field is a widget for its kind: a switch or a yes/no list for a boolean, a list for a choice,
checkboxes for a multi-select, a line for strings, numbers and what a form cannot show (typed as
JSON). ``values`` reads them back as the schema's JSON types, and shows what is wrong under each field.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from textual.app import ComposeResult
from textual.containers import ScrollableContainer, Vertical
from textual.events import DescendantFocus
from textual.widget import Widget
from textual.widgets import Input, Select, SelectionList, Static, Switch
from textual.widgets.selection_list import Selection

from mcp_chat_tui.servers import FormField
from mcp_chat_tui.ui.format import literal
from mcp_chat_tui.ui.widgets.scrolling import scroll_to_now


def filled(fields: list[FormField], values: dict[str, Any]) -> list[FormField]:
    """``fields`` holding ``values`` (a call's arguments) as what they start with; a field with no
    value starts empty, so a form sent untouched gives back the same arguments."""
    return [replace(field, default=values.get(field.name)) for field in fields]


class SchemaForm(Vertical):
    """The fields of one schema, each with its label, description and the error under it."""

    DEFAULT_CSS = """
    SchemaForm { height: auto; }
    SchemaForm .form-field { height: auto; }
    SchemaForm .request-label { margin-top: 1; }
    SchemaForm .field-description { color: $text-muted; }
    SchemaForm .field-error { color: $error; display: none; }
    SchemaForm .field-error.shown { display: block; }
    SchemaForm Input, SchemaForm Select, SchemaForm SelectionList { background: $panel; }
    SchemaForm Input:focus, SchemaForm Select:focus > SelectCurrent, SchemaForm SelectionList:focus {
        background: $boost;
    }
    SchemaForm SelectionList { height: auto; }
    SchemaForm Switch { height: 1; border: none; padding: 0; }
    """

    def __init__(self, fields: list[FormField], *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.fields = fields

    def compose(self) -> ComposeResult:
        for index, field in enumerate(self.fields):
            label = literal(field.label, "bold")
            if field.required:
                label.append(" *", style="bold")
            label.append_text(literal(f"  {field.hint()}", "dim"))
            with Vertical(classes="form-field"):
                yield Static(label, classes="request-label")
                if field.description:
                    yield Static(literal(field.description), classes="field-description")
                yield field_input(index, field)
                yield Static("", id=f"field-error-{index}", classes="field-error")

    def on_descendant_focus(self, event: DescendantFocus) -> None:
        """The focused field is shown whole in the pane the form scrolls in, its label and description
        with it (Textual scrolls only the field into view), once Textual's own scrolling is done."""
        group = next((node for node in event.widget.ancestors if node.has_class("form-field")), None)
        pane = next((node for node in self.ancestors if isinstance(node, ScrollableContainer)), None)
        if isinstance(group, Widget) and pane is not None:
            self.call_after_refresh(scroll_to_now, pane, group)

    def values(self) -> dict[str, Any] | None:
        """The fields' values (a field left empty is left out), or None when one is wrong: then each
        wrong field says why under it and the first takes the focus."""
        values: dict[str, Any] = {}
        first_bad: Widget | None = None
        for index, field in enumerate(self.fields):
            widget = self.query_one(f"#field-{index}")
            value, problem = field.parse(raw_value(widget))
            self.show_error(index, problem)
            if problem and first_bad is None:
                first_bad = widget
            elif value is not None:
                values[field.name] = value
        if first_bad is not None:
            first_bad.focus()
            return None
        return values

    def show_error(self, index: int, problem: str) -> None:
        error = self.query_one(f"#field-error-{index}", Static)
        error.update(literal(problem))
        error.set_class(bool(problem), "shown")

    def index_of(self, name: str) -> int | None:
        return next((index for index, field in enumerate(self.fields) if field.name == name), None)


def field_input(index: int, field: FormField) -> Widget:
    """The widget a field is answered in: a switch for a yes or no with a default (a choice that can
    be left unanswered without one), a list of choices, checkboxes for a multi-select, else a line."""
    widget_id = f"field-{index}"
    if field.kind == "boolean" and field.default is not None:
        return Switch(value=bool(field.default), id=widget_id)
    if field.kind == "boolean":
        return Select([("yes", "yes"), ("no", "no")], prompt="not answered", id=widget_id, compact=True)
    if field.kind == "multi":
        chosen = field.default_choices()
        choices = [Selection(literal(title), value, value in chosen) for value, title in field.options]
        return SelectionList[str](*choices, id=widget_id, compact=True)
    if field.kind == "enum":
        options = [(literal(title), value) for value, title in field.options]
        values = [value for value, _ in field.options]
        default = str(field.default) if str(field.default) in values and field.default is not None else Select.NULL
        allow_blank = not field.required or default is Select.NULL
        return Select(options, value=default, allow_blank=allow_blank, id=widget_id, compact=True)
    return Input(
        value=field.shown_default(), password=field.secret, id=widget_id, placeholder=field.hint(), compact=True
    )


def raw_value(widget: Widget) -> str | list[str]:
    """What a field's widget holds, as ``FormField.parse`` reads it."""
    if isinstance(widget, Switch):
        return "yes" if widget.value else "no"
    if isinstance(widget, SelectionList):
        return [str(value) for value in widget.selected]
    if isinstance(widget, Select):
        return "" if widget.value is Select.NULL else str(widget.value)
    assert isinstance(widget, Input)
    return widget.value
