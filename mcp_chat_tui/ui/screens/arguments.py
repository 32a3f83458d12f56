"""The small form that asks for a prompt's arguments or a resource template's variables.

Required fields are marked ``*`` and must be filled before Enter sends; values the server
suggests (``completion/complete``) show under the field as you type, and Right takes the
first one, as Textual's suggester does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.widgets import Input, Static

from mcp_chat_tui.ui.format import literal
from mcp_chat_tui.ui.widgets.scrolling import Scroll

# Asks the server for values of one field: (field, typed so far, the other fields) -> values.
Complete = Callable[[str, str, dict[str, str]], Awaitable[list[str]]]


@dataclass(frozen=True)
class Field:
    name: str
    description: str = ""
    required: bool = False
    value: str = ""
    password: bool = False  # typed without echo


class ServerSuggester(Suggester):
    """Inline completion from the server: the first value that continues what is typed."""

    def __init__(self, form: ArgumentsScreen, name: str) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.form = form
        self.name = name

    async def get_suggestion(self, value: str) -> str | None:
        values = await self.form.suggestions(self.name, value)
        return next((v for v in values if v.startswith(value) and v != value), None)


class ArgumentsScreen(ModalScreen[dict[str, str] | None]):
    CSS_PATH = Path(__file__).with_name("arguments.tcss")
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="arguments.cancel")]
    AUTO_FOCUS = "Input"

    def __init__(self, title: str, about: str, fields: list[Field], complete: Complete | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.about = about
        self.fields = fields
        self.complete = complete

    def compose(self) -> ComposeResult:
        with Vertical(classes="arguments-box"):
            yield Static(literal(self.title_text, "bold"), classes="arguments-title")
            if self.about:
                yield Static(literal(self.about, "italic"), classes="arguments-about")
            with Scroll(classes="arguments-fields"):
                for index, field in enumerate(self.fields):
                    label = literal(field.name, "bold")
                    label.append_text(literal(" *" if field.required else "", "bold red"))
                    if field.description:
                        label.append_text(literal(f"  {field.description}", "dim"))
                    yield Static(label, classes="arguments-label")
                    yield Input(
                        field.value,
                        id=f"field-{index}",
                        suggester=ServerSuggester(self, field.name) if self.complete else None,
                        select_on_focus=False,
                        password=field.password,
                    )
                    yield Static("", classes="arguments-hint", id=f"hint-{index}")
            yield Static("", id="arguments-problem")
            yield Static(
                "[b]Enter[/] send  [b]Tab[/] next  [b]→[/] take suggestion  [b]Esc[/] cancel",
                classes="arguments-keys dialog-keys",  # dimmed in a form that arms (``FolderInputsScreen``)
            )

    def values(self) -> dict[str, str]:
        return {field.name: self.query_one(f"#field-{i}", Input).value for i, field in enumerate(self.fields)}

    async def suggestions(self, name: str, value: str) -> list[str]:
        if self.complete is None:
            return []
        context = {key: text for key, text in self.values().items() if key != name and text}
        return await self.complete(name, value, context)

    @on(Input.Changed)
    async def _show_suggestions(self, message: Input.Changed) -> None:
        if self.complete is None or message.input.id is None:
            return
        index = int(message.input.id.removeprefix("field-"))
        values = await self.suggestions(self.fields[index].name, message.value)
        hint = self.query_one(f"#hint-{index}", Static)
        hint.update(literal(("suggested: " + ", ".join(values[:8])) if values else ""))

    @on(Input.Submitted)
    def _send(self) -> None:
        values = self.values()
        missing = [field.name for field in self.fields if field.required and not values[field.name].strip()]
        if missing:
            self.query_one("#arguments-problem", Static).update(literal(f"required: {', '.join(missing)}", "bold red"))
            index = next(i for i, field in enumerate(self.fields) if field.name == missing[0])
            self.query_one(f"#field-{index}", Input).focus()
            return
        self.dismiss({key: value for key, value in values.items() if value})

    def action_cancel(self) -> None:
        self.dismiss(None)
