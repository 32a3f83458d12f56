"""Textual's private names the app relies on, all in this one module.

Each is used where Textual offers no public way: the clock its messages are stamped with (a dialog
compares a key's time with when it was drawn), handing a key on to a field's own queue, a widget
class's default CSS before any is mounted (ui/styles.py), and three methods the app's widgets
override (one layout pass per update, a cursor that does not blink out of focus, a row's place in a
table of one-line rows). ``PRIVATE_NAMES`` lists every one; tests/test_textual_private.py checks
each still exists in the installed Textual, so an upgrade that removes one fails there, naming it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual import _time
from textual.widget import Widget
from textual.widgets import DataTable, Input

get_time = _time.get_time  # the clock of ``Message.time``

PRIVATE_NAMES: tuple[tuple[Any, str], ...] = (
    (_time, "get_time"),
    (Widget, "_forward_event"),
    (Widget, "_get_default_css"),
    (Widget, "_size_updated"),  # overridden by widgets/one_pass.py OneLayoutPass
    (Input, "_watch_cursor_blink"),  # overridden by widgets/prompt.py
    (DataTable, "_get_row_region"),  # overridden by widgets/sidebar.py
)


def forward_event(widget: Widget, event: Any) -> None:
    """Put ``event`` in ``widget``'s queue, behind what it already has, as if it had come to it."""
    widget._forward_event(event)


def default_css(cls: type[Widget]) -> Iterable[tuple[str, str, int, str]]:
    """The default CSS of ``cls`` and its bases, as mounting one would add it (read from the class alone)."""
    return cls.__new__(cls)._get_default_css()
