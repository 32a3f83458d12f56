"""Textual's private names the app relies on, all in this one module.

Each is used where Textual offers no public way: the clock its messages are stamped with (a dialog
compares a key's time with when it was drawn), handing a key on to a field's own queue, a widget
class's default CSS before any is mounted (ui/styles.py), a style sheet's parsed rules (kept per
process and theme by ui/parsed_sheets.py), the footer's key class, and five methods the app's widgets
override (one layout pass per update, a cursor that does not blink out of focus, a row's place in a
table of one-line rows, a table's cells and rows rendered again only when that row changed: with
the count of changes and the caches they are kept in), a selector's own test of a widget (which
rules style what is inside a widget by its focus), and one cache of Textual's replaced by one that
holds no widget (``keep_no_gone_widgets``). ``PRIVATE_NAMES`` lists every one;
tests/test_textual_private.py checks each still exists in the installed Textual, so an upgrade that
removes one fails there, naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from textual import _styles_cache, _time
from textual.app import App
from textual.binding import Binding
from textual.color import Color
from textual.css.model import RuleSet, Selector
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode
from textual.screen import Screen
from textual.style import Style
from textual.widget import Widget
from textual.widgets import DataTable, Input, Markdown, _footer
from textual.widgets.markdown import MarkdownStream

get_time = _time.get_time  # the clock of ``Message.time``
FooterKey = _footer.FooterKey  # a key of the footer (only in Textual's private module)

PRIVATE_NAMES: tuple[tuple[Any, str], ...] = (
    (_time, "get_time"),
    (Widget, "_forward_event"),
    (Widget, "_get_default_css"),
    (Widget, "_size_updated"),  # overridden by widgets/one_pass.py OneLayoutPass
    (Input, "_watch_cursor_blink"),  # overridden by widgets/prompt.py
    (Input, "_restart_blink"),
    (Input, "_pause_blink"),
    (DataTable, "_get_row_region"),  # overridden by widgets/sidebar.py
    (DataTable, "_render_cell"),  # overridden by widgets/row_cache.py
    (DataTable, "_render_line_in_row"),  # overridden by widgets/row_cache.py
    (App, "_refresh_truecolor_filter"),
    (_footer, "FooterKey"),  # widgets/footer.py builds its keys styled once
    (_styles_cache.StylesCache, "get_inner_outer"),  # replaced below: keyed by colours alone
)
# Members each object has of its own: a node's bindings, a table's row-label width, and the state of
# a Markdown stream that streaming.py's PacedMarkdownStream runs its own loop on.
INSTANCE_NAMES: tuple[tuple[Callable[[], Any], str], ...] = (
    (DOMNode, "_bindings"),
    (DataTable, "_row_label_column_width"),
    (DataTable, "_update_count"),  # set for one cell at a time by widgets/row_cache.py
    (DataTable, "_row_locations"),
    (DataTable, "_row_render_cache"),
    (DataTable, "_cell_render_cache"),
    (lambda: MarkdownStream(Markdown()), "_stopped"),
    (lambda: MarkdownStream(Markdown()), "_new_markup"),
    (DOMNode, "_reactive_connect"),  # read by widgets/footer.py (a key bound to the footer's compact)
    (Stylesheet, "_variables"),  # read and set by ui/parsed_sheets.py's SharedStylesheet
    (Stylesheet, "_rules"),
    (Stylesheet, "_rules_map"),
    (Stylesheet, "_require_parse"),
    (Screen, "_layout_required"),  # read by ui/agent_events.py: a layout left for the next frame
    (lambda: Selector("Widget"), "_check"),  # read by focus_rules_inside: a selector's type, id or class test
)


def key_bindings(node: DOMNode, key: str) -> tuple[Binding, ...]:
    """The bindings ``node`` itself has for ``key`` (not its ancestors')."""
    return tuple(node._bindings.key_to_bindings.get(key, ()))


def row_label_width(table: DataTable[Any]) -> int:
    return table._row_label_column_width


def restart_blink(field: Input) -> None:
    field._restart_blink()


def pause_blink(field: Input) -> None:
    field._pause_blink()


def refresh_truecolor_filter(app: App[Any]) -> None:
    """Have ``app`` take its ANSI theme's colours again (after a theme change)."""
    app._refresh_truecolor_filter(app.ansi_theme)


def forward_event(widget: Widget, event: Any) -> None:
    """Put ``event`` in ``widget``'s queue, behind what it already has, as if it had come to it."""
    widget._forward_event(event)


def default_css(cls: type[Widget]) -> Iterable[tuple[tuple[str, str], str, int, str]]:
    """The default CSS of ``cls`` and its bases, as mounting one would add it (read from the class alone):
    each as (where it was read: file and class, the CSS, its tie-breaker, its scope)."""
    return cls.__new__(cls)._get_default_css()


def sheet_variables(sheet: Stylesheet) -> dict[str, str]:
    """The variables ``sheet`` was last given (``set_variables``): the theme's colours."""
    return sheet._variables


def use_rules(sheet: Stylesheet, rules: list[RuleSet]) -> None:
    """Have ``sheet`` apply ``rules`` (parsed from its sources with its variables) as ``reparse`` leaves it."""
    sheet._rules = rules
    sheet._rules_map = None  # made again from the rules when next asked for
    sheet._require_parse = False


def layout_pending(screen: Screen[Any]) -> bool:
    """Whether ``screen`` has a layout to do at its next frame (a widget measured itself again)."""
    return screen._layout_required


def bound_to_parent(node: DOMNode, name: str) -> bool:
    """Whether ``node``'s reactive ``name`` takes its value from the widget that composed it (``data_bind``)."""
    return name in (node._reactive_connect or {})


TEXTUAL_GET_INNER_OUTER = _styles_cache.StylesCache.get_inner_outer  # Textual's own, kept for its test


def focus_rules_inside(sheet: Stylesheet, node: DOMNode) -> list[str]:
    """The selectors in ``sheet`` that style something inside ``node`` by whether ``node`` has the focus
    (``ChatLog:focus Static``, ``*:blur > X``): none, and a focus change need restyle ``node`` alone."""
    found = []
    for rules in sheet.rules:
        for selectors in rules.selector_set:
            for selector in selectors.selectors[:-1]:
                if {"focus", "blur", "focus-within"} & selector.pseudo_classes and selector._check(node):
                    found.append(selectors.css)
    return found


@lru_cache(1024)
def _inner_outer(base_background: Color, background: Color) -> tuple[Style, Style]:
    return Style(background=base_background + background), Style(background=base_background)


def _get_inner_outer(_cache: Any, base_background: Color, background: Color) -> tuple[Style, Style]:
    return _inner_outer(base_background, background)


def keep_no_gone_widgets() -> None:
    """Have Textual's ``StylesCache.get_inner_outer`` cache its two styles by the colours alone.

    Textual caches it with ``lru_cache`` on the method, so each entry's key holds the widget's style
    cache (and through it the widget's rendered lines and the widget): up to 1,024 widgets of apps
    long gone stay alive in the process, and every collection of the garbage walks them. The result
    depends on the colours only, so the same cache without the widget gives the same styles."""
    _styles_cache.StylesCache.get_inner_outer = _get_inner_outer  # type: ignore[method-assign,assignment]


keep_no_gone_widgets()
