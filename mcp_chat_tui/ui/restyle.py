"""A new theme restyles the app with each widget asked to redraw once.

Textual restyles every mounted widget when the theme changes, and each colour that changes on a
widget asks it, and for inherited colours every widget under it, to redraw: about 6,000 requests
over the 700 widgets of a loaded conversation, each working out the widget's region again, a third
of the key's time. Here the requests made while the sheet is applied are noted, one per widget,
and made once the sheet is applied, before the screen is laid out; what is drawn is the same.
Each such colour on a container also walked every widget under it; each container is walked once.

Textual also parses every style sheet again with the new theme's colours, a fifth of the key's
time: ui/parsed_sheets.py keeps the rules, so a theme that comes back parses nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from textual.css.styles import Styles
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode
from textual.geometry import Region
from textual.widget import Widget


@contextmanager
def one_refresh_each() -> Iterator[None]:
    """Within: a widget's whole-widget refresh is noted; on leaving, each widget noted is refreshed
    once (laid out again if any request asked for it). Other refreshes (regions, recompose,
    layout only) are made at once."""
    asked: dict[Widget, bool] = {}  # widget -> a request asked for a layout too
    refresh = Widget.refresh

    def note(
        widget: Widget, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False
    ) -> Any:
        if regions or recompose or not repaint:
            return refresh(widget, *regions, repaint=repaint, layout=layout, recompose=recompose)
        asked[widget] = asked.get(widget, False) or layout
        return widget

    # A colour set on a container asks every widget under it to redraw: a walk over them for each
    # colour (a dozen on the chat's panes); the containers are noted, and each walked once.
    walked: dict[Widget, bool] = {}  # container -> a request asked for a layout too
    styles_refresh = Styles.refresh

    def note_walk(
        styles: Styles, *, layout: bool = False, children: bool = False, parent: bool = False, repaint: bool = True
    ) -> None:
        node = styles.node
        if children and repaint and isinstance(node, Widget) and node.is_mounted:
            walked[node] = walked.get(node, False) or layout
            children = False
        styles_refresh(styles, layout=layout, children=children, parent=parent, repaint=repaint)

    Widget.refresh = note  # type: ignore[method-assign, assignment]
    Styles.refresh = note_walk  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        Styles.refresh = styles_refresh  # type: ignore[method-assign]
        for container, layout in walked.items():
            for child in container.walk_children(Widget, with_self=False):
                note(child, layout=layout)
        Widget.refresh = refresh  # type: ignore[method-assign]
        for widget, layout in asked.items():
            refresh(widget, layout=layout)


@contextmanager
def restyled_in_one_pass(stylesheet: Stylesheet) -> Iterator[None]:
    """Within: each ``stylesheet.update`` (a whole tree restyled) refreshes each widget once."""

    def update(root: DOMNode, animate: bool = False) -> None:
        with one_refresh_each():
            Stylesheet.update(stylesheet, root, animate=animate)

    stylesheet.update = update  # type: ignore[method-assign]
    try:
        yield
    finally:
        del stylesheet.update
