"""A new theme restyles the app with each widget asked to redraw once, from style sheets parsed once per theme.

Textual restyles every mounted widget when the theme changes, and each colour that changes on a
widget asks it, and for inherited colours every widget under it, to redraw: about 6,000 requests
over the 700 widgets of a loaded conversation, each working out the widget's region again, a third
of the key's time. Here the requests made while the sheet is applied are noted, one per widget,
and made once the sheet is applied, before the screen is laid out; what is drawn is the same.
Each such colour on a container also walked every widget under it; each container is walked once.

Textual also parses every style sheet again with the new theme's colours, a fifth of the key's
time; people go back and forth between themes, so the rules each sheet was parsed into with a
theme's colours are kept (``ParsedSheets``) and used again when that theme comes back.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from textual.css.model import RuleSet
from textual.css.styles import Styles
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


SourceKey = tuple[Any, CssSource]  # where a sheet was read from, and what it holds


class ParsedSheets:
    """The rules each style sheet was parsed into, for the last ``kept`` sets of variables
    (themes): a theme chosen again parses only the sheets it has not parsed yet (those of widgets
    mounted since)."""

    def __init__(self, kept: int = 4) -> None:
        self.kept = kept
        # by variables: a sheet that parses one source at a time with them, and each source's rules
        self._parsed: OrderedDict[tuple[tuple[str, str], ...], tuple[Stylesheet, dict[SourceKey, list[RuleSet]]]]
        self._parsed = OrderedDict()

    def rules(self, variables: dict[str, str], sources: dict[Any, CssSource]) -> list[RuleSet]:
        """Every sheet's rules with ``variables``, in the sheets' order (as ``Stylesheet.parse`` gives them);
        raises as it does on a sheet it cannot parse (and keeps nothing parsed with ``variables``)."""
        key = tuple(variables.items())
        parser, kept = self._parsed.pop(key) if key in self._parsed else (Stylesheet(variables=variables), {})
        rules: list[RuleSet] = []
        for read_from, source in sources.items():
            parsed = kept.get((read_from, source))
            if parsed is None:
                parser.source.clear()  # the one source alone (the variables are read once per parser)
                css, is_default, tie_breaker, scope = source
                parser.add_source(css, read_from, is_default_css=is_default, tie_breaker=tie_breaker, scope=scope)
                parsed = kept[(read_from, source)] = parser.rules
            rules += parsed
        self._parsed[key] = (parser, kept)  # the latest used last
        while len(self._parsed) > self.kept:
            self._parsed.popitem(last=False)
        return rules

    @contextmanager
    def reparsed_once(self, stylesheet: Stylesheet) -> Iterator[None]:
        """Within: ``stylesheet.reparse`` takes the rules kept for its variables, parsing only the
        sheets not parsed with them yet; a sheet that cannot be parsed is left to Textual's own."""

        def reparse() -> None:
            try:
                rules = self.rules(sheet_variables(stylesheet), stylesheet.source)
            except Exception:  # noqa: BLE001 - Textual's reparse reports it, as it always has
                Stylesheet.reparse(stylesheet)
                return
            use_rules(stylesheet, rules)

        stylesheet.reparse = reparse  # type: ignore[method-assign]
        try:
            yield
        finally:
            del stylesheet.reparse
