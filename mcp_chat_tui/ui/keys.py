"""Key names as a person writes them (``Ctrl+B``, ``Esc``, ``Enter``, ``?``), not Textual's
(``ctrl+b``, ``escape``, ``question_mark``): for the F1 screen and the footer."""

from __future__ import annotations

import re

from textual.binding import Binding
from textual.keys import format_key

NAMED_KEYS = {
    "escape": "Esc", "enter": "Enter", "tab": "Tab", "space": "Space", "backspace": "Backspace",
    "delete": "Del", "insert": "Ins", "home": "Home", "end": "End", "pageup": "PgUp", "pagedown": "PgDn",
    "up": "Up", "down": "Down", "left": "Left", "right": "Right",
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
