"""A new theme restyles the app with each widget asked to redraw once, from style sheets parsed once per theme.

Textual restyles every mounted widget when the theme changes, and each colour that changes on a
widget asks it, and for inherited colours every widget under it, to redraw: about 6,000 requests
over the 700 widgets of a loaded conversation, each working out the widget's region again, a third
of the key's time. Here the requests made while the sheet is applied are noted, one per widget,
and made once the sheet is applied, before the screen is laid out; what is drawn is the same.

Textual also parses every style sheet again with the new theme's colours, a fifth of the key's
time; people go back and forth between themes, so the rules parsed for a theme are kept
(``ParsedSheets``) and used again when the same sheets are parsed with the same colours.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from textual.css.model import RuleSet
from textual.css.stylesheet import CssSource, Stylesheet
from textual.dom import DOMNode
from textual.geometry import Region
from textual.widget import Widget

from mcp_chat_tui.ui.textual_private import sheet_variables, use_rules


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

    Widget.refresh = note  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
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


Parsed = tuple[list[RuleSet], dict[str, list[RuleSet]], dict[Any, CssSource]]


class ParsedSheets:
    """The rules the app's style sheets were parsed into, for the last ``kept`` sets of variables
    (themes) and sources: a theme chosen again is not parsed again."""

    def __init__(self, kept: int = 4) -> None:
        self.kept = kept
        self._parsed: OrderedDict[tuple[Any, ...], Parsed] = OrderedDict()

    @contextmanager
    def reparsed_once(self, stylesheet: Stylesheet) -> Iterator[None]:
        """Within: ``stylesheet.reparse`` takes the rules kept for its sources and variables, if any."""

        def reparse() -> None:
            key = (tuple(sheet_variables(stylesheet).items()), tuple(stylesheet.source.items()))
            parsed = self._parsed.get(key)
            if parsed is None:
                Stylesheet.reparse(stylesheet)  # raises on a bad sheet, keeping nothing
                parsed = (stylesheet.rules, stylesheet.rules_map, dict(stylesheet.source))
                self._parsed[key] = parsed
                while len(self._parsed) > self.kept:
                    self._parsed.popitem(last=False)
            else:
                self._parsed.move_to_end(key)
                rules, rules_map, source = parsed
                use_rules(stylesheet, rules, rules_map)
                stylesheet.source = dict(source)

        stylesheet.reparse = reparse  # type: ignore[method-assign]
        try:
            yield
        finally:
            del stylesheet.reparse
