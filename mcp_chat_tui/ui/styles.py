"""Add the styles of the widgets the chat will show, and of every screen, to the app's style sheet
before they are first mounted or pushed."""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from textual.app import App
from textual.widget import Widget

from mcp_chat_tui.ui.textual_private import default_css


def widget_classes(*modules: ModuleType) -> list[type[Widget]]:
    """The widget classes ``modules`` define (nested ones too, e.g. ``Collapsible.Contents``) or
    import (what their widgets compose, e.g. the label of a code block)."""
    found: list[type[Widget]] = []

    def visit(namespace: Iterable[object], module_name: str) -> None:
        for value in namespace:
            if inspect.isclass(value) and issubclass(value, Widget) and value not in found:
                found.append(value)
                if value.__module__ == module_name:
                    visit(vars(value).values(), module_name)

    for module in modules:
        visit(vars(module).values(), module.__name__)
    return found


def preload_styles(app: App[Any], classes: Iterable[type[Widget]]) -> None:
    """Add the default CSS of ``classes`` (and of their bases) to ``app``'s style sheet, as
    mounting a first widget of each would; the sheet is parsed once, when next applied."""
    stylesheet = app.stylesheet
    for cls in classes:
        for read_from, css, tie_breaker, scope in default_css(cls):
            stylesheet.add_source(css, read_from=read_from, is_default_css=True, tie_breaker=tie_breaker, scope=scope)


def preload_screen_css(app: App[Any], folder: Path) -> None:
    """Read the style files of the screens (``*.tcss`` in ``folder``, their ``CSS_PATH``) into
    ``app``'s style sheet, parsed with the panes' styles: Textual reads a screen's file when the
    screen is first pushed, and then parses every sheet again and restyles every widget under it
    (with a loaded conversation, a quarter of a second on the first approval dialog)."""
    stylesheet = app.stylesheet
    for path in sorted(folder.glob("*.tcss")):
        if not stylesheet.has_source(str(path), ""):
            stylesheet.read(path)
