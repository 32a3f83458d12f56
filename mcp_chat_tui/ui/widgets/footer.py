"""The footer: Textual's, with only the keys that fit whole, the most needed first (F1 lists them all).

Textual's footer lays out every key in a row and cuts it at the edge, mid-word and under the
palette's hint. This one hides what does not fit, in the order of ``footer_rank``, and keeps the
rest in the order Textual gives them.
"""

from __future__ import annotations

from textual import events
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Footer

from mcp_chat_tui.ui.keys import APP_BINDINGS, FOOTER_FIRST

_APP_ACTIONS = [binding.action for binding in APP_BINDINGS]
_FIRST_ACTIONS = [binding.action for binding in APP_BINDINGS if binding.id in FOOTER_FIRST]


def footer_rank(key: Widget) -> int:
    """Which keys stay when not all fit, lowest first: F1, Esc and Ctrl+C; the focused pane's own
    keys; the palette's; then the app's other keys (F2-F5, Ctrl+B) in their order."""
    action = getattr(key, "action", "")
    if action in _FIRST_ACTIONS:
        return _FIRST_ACTIONS.index(action)
    if key.has_class("-command-palette"):
        return len(_FIRST_ACTIONS) + 1
    if action not in _APP_ACTIONS:
        return len(_FIRST_ACTIONS)
    return len(_FIRST_ACTIONS) + 2 + _APP_ACTIONS.index(action)


class KeyFooter(Footer):
    """Textual's ``Footer`` that shows only whole keys: those that do not fit are hidden."""

    async def recompose(self) -> None:
        await super().recompose()  # the keys change with the focus and the screen
        self.fit_keys()

    def on_resize(self, event: events.Resize) -> None:
        self.fit_keys()

    def fit_keys(self) -> None:
        """Show the keys by rank while they fit in the footer's width; hide the rest."""
        width = self.size.width
        if not width:
            return  # not laid out yet: the resize that follows fits them
        ranked = sorted(enumerate(self.children), key=lambda place: (footer_rank(place[1]), place[0]))
        used = 0
        for _, key in ranked:
            needed = _width(key, self.size)
            key.display = used + needed <= width
            used += needed if key.display else 0


def _width(key: Widget, container: Size) -> int:
    """The columns ``key`` takes: its text, padding, border and margin."""
    return key.get_content_width(container, container) + key.styles.gutter.width + key.styles.margin.width
