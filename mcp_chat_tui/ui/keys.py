"""Key names as a person writes them (``Ctrl+B``, ``Esc``, ``Enter``, ``?``), not Textual's
(``ctrl+b``, ``escape``, ``question_mark``): for the F1 screen and the footer."""

from __future__ import annotations

import re

from textual.binding import Binding
from textual.keys import format_key

APP_BINDINGS = [  # the app's own keys, everywhere (``ChatApp.BINDINGS``; the F1 screen lists them)
    Binding("ctrl+c", "quit(130)", "Quit", priority=True, id="app.quit"),
    Binding(
        "escape",
        "stop",
        "Stop",
        tooltip="Stop the reply and its running tool calls, or the summaries being written",
        id="app.stop",
    ),
    Binding("f1", "help", "Keys", id="app.help"),
    Binding("question_mark", "help('?')", "Keys (outside the prompt)", show=False, id="app.help_question"),
    Binding("f2", "focus_pane('chat')", "Chat", id="app.focus_chat"),
    Binding("f3", "focus_pane('calls')", "Calls", id="app.focus_calls"),
    Binding("f4", "focus_pane('servers')", "Servers", id="app.focus_servers"),
    Binding("f5", "focus_pane('prompt')", "Prompt", id="app.focus_prompt"),
    Binding("ctrl+b", "toggle_sidebar", "Sidebar", id="app.sidebar"),
    Binding(
        "ctrl+r",
        "retry",
        "Retry",
        tooltip="Discard the last reply and ask the model again (/retry); calls that ran are not undone",
        id="app.retry",
    ),
    Binding("ctrl+t", "toggle_thinking", "Thinking", show=False, id="app.thinking"),
    Binding("f7", "sidebar_width(-1)", "Narrower sidebar", show=False, id="app.sidebar_narrower"),
    Binding("f8", "sidebar_width(1)", "Wider sidebar", show=False, id="app.sidebar_wider"),
]
FOOTER_FIRST = ("app.help", "app.stop", "app.quit")  # the footer keeps these whatever else it must hide
NAMED_KEYS = {
    "escape": "Esc",
    "enter": "Enter",
    "tab": "Tab",
    "space": "Space",
    "backspace": "Backspace",
    "delete": "Del",
    "insert": "Ins",
    "home": "Home",
    "end": "End",
    "pageup": "PgUp",
    "pagedown": "PgDn",
    "up": "Up",
    "down": "Down",
    "left": "Left",
    "right": "Right",
}
MODIFIERS = {"ctrl": "Ctrl", "shift": "Shift", "alt": "Alt", "meta": "Meta", "super": "Super", "hyper": "Hyper"}


def key_name(key: str) -> str:
    """``ctrl+b`` -> ``Ctrl+B``, ``escape`` -> ``Esc``, ``question_mark`` -> ``?``, ``f1`` -> ``F1``,
    ``T`` -> ``T``."""
    *modifiers, base = key.split("+")
    if base in NAMED_KEYS:
        name = NAMED_KEYS[base]
    elif re.fullmatch(r"f\d+", base):
        name = base.upper()
    else:
        name = format_key(base)  # a character by its Unicode name: question_mark -> ?
        if modifiers and len(name) == 1:
            name = name.upper()  # Ctrl+B, as printed on the key
    return "+".join([*(MODIFIERS.get(m, m.capitalize()) for m in modifiers), name])


def binding_keys(binding: Binding) -> str:
    """Every key of ``binding`` (``escape,q`` -> ``Esc, q``), or its own ``key_display``."""
    if binding.key_display:
        return binding.key_display
    return ", ".join(key_name(key.strip()) for key in binding.key.split(","))
