"""Every key binding, gathered from the classes that declare them (the F1 screen)."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.binding import Binding

from mcp_chat_tui.ui.keys import APP_BINDINGS, binding_keys


def _section(title: str, bindings: list[Binding]) -> Text:
    """``title``, then each key with what it does (its tooltip, the longer word, if it has one)."""
    text = Text(f"{title}\n", style="bold")
    for binding in bindings:
        keys = binding_keys(binding)
        text.append(f"  {keys:<18}", style="bold cyan")
        text.append(f"{binding.tooltip or binding.description}\n")
    return text


KEY_COLUMN = 20  # the keys' column of the F1 screen; what each does wraps in the column after it


def help_text() -> Text:
    """Every key and what it does, as plain text (one line each)."""
    text = Text()
    for title, bindings in help_sections():
        text.append_text(_section(title, bindings))
        text.append("\n")
    return text


def help_table() -> Group:
    """The F1 screen: each section's keys in one column, what they do in the next, wrapped there."""
    parts: list[Table | Text] = []
    for title, bindings in help_sections():
        parts.append(Text(title, style="bold"))
        table = Table.grid(padding=(0, 1), expand=True)
        table.add_column(width=KEY_COLUMN, no_wrap=True, style="bold cyan")
        table.add_column(ratio=1)
        for binding in bindings:
            table.add_row(Text("  " + binding_keys(binding)), Text(binding.tooltip or binding.description))
        parts += [table, Text()]
    return Group(*parts)


def help_sections() -> list[tuple[str, list[Binding]]]:
    from mcp_chat_tui.ui.screens.approval import ApprovalScreen
    from mcp_chat_tui.ui.screens.detail import CallDetailScreen, ServerDetailScreen
    from mcp_chat_tui.ui.screens.folder_trust import FolderTrustScreen
    from mcp_chat_tui.ui.screens.requests import (
        ElicitFormScreen,
        ElicitUrlScreen,
        SampleReviewScreen,
        SamplingScreen,
        ToolUseScreen,
    )
    from mcp_chat_tui.ui.screens.sign_in import SignInScreen
    from mcp_chat_tui.ui.screens.unsaved import UnsavedStartScreen
    from mcp_chat_tui.ui.widgets.prompt import PromptInput
    from mcp_chat_tui.ui.widgets.sidebar import ServerTable, ToolCallTable

    extra = [
        Binding("tab", "", "Next pane"),
        Binding("shift+tab", "", "Previous pane"),
        Binding("ctrl+p", "", "Command palette: restart a server, auto-run, theme, export, resume, clear, sidebar"),
        Binding("enter", "", "Send the prompt / open the selected row"),
    ]
    sections = (
        ("Everywhere", [*APP_BINDINGS, *extra]),
        ("Prompt", PromptInput.BINDINGS),
        ("Chat", [Binding("a", "", "Go to the prompt (typing writes the next prompt)", key_display="letters, paste")]),
        ("Tool calls", ToolCallTable.BINDINGS),
        ("Servers", ServerTable.BINDINGS),
        ("Approval dialog", ApprovalScreen.BINDINGS),
        ("A call whose start could not be saved", UnsavedStartScreen.BINDINGS),
        ("A folder's mcp.json", FolderTrustScreen.BINDINGS),
        ("Call detail", CallDetailScreen.BINDINGS),
        ("Server detail", ServerDetailScreen.BINDINGS),
        ("Sign-in dialog", SignInScreen.BINDINGS),
        (
            "A server asks the model (sampling)",
            [*SamplingScreen.BINDINGS, *ToolUseScreen.BINDINGS, *SampleReviewScreen.BINDINGS],
        ),
        ("A server asks you (form, URL)", [*ElicitFormScreen.BINDINGS, *ElicitUrlScreen.BINDINGS]),
    )
    return [(title, [b for b in bindings if isinstance(b, Binding)]) for title, bindings in sections]
