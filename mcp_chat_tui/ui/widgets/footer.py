"""The footer: Textual's, with only the keys that fit whole, the most needed first (F1 lists them all).

Textual's footer lays out every key in a row and cuts it at the edge, mid-word and under the
palette's hint. This one hides what does not fit, in the order of ``footer_rank``, and keeps the
rest in the order Textual gives them.

Textual's footer builds all its keys again (20-odd widgets, each styled and laid out) whenever
the screen says its bindings changed, which a focus change says several times: this one builds
them once a frame at most, and only when the keys it would show differ from those it shows; each
key it builds is styled once, as it mounts (Textual's were styled twice more: its ``compact`` set on
as the key mounted, then off again from the footer's).
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.geometry import Size
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

from mcp_chat_tui.ui.keys import APP_BINDINGS, FOOTER_FIRST
from mcp_chat_tui.ui.textual_private import FooterKey, bound_to_parent

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

    _shown: tuple[Any, ...] | None = None  # what the keys were built from (``_keys_to_show``)
    _rebuild_asked = False

    def bindings_changed(self, screen: Screen[Any]) -> None:
        """The screen's keys may have changed: look again after this frame (once, however often asked)."""
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        if not self._rebuild_asked:
            self._rebuild_asked = True
            self.call_after_refresh(self.recompose)

    async def recompose(self) -> None:
        self._rebuild_asked = False
        keys = self._keys_to_show()
        if keys == self._shown and self.children:
            self.fit_keys()  # the same keys: nothing to build, but fitted again (as a build would)
            return
        self._shown = keys
        await super().recompose()  # the keys change with the focus and the screen
        self.fit_keys()

    def compose(self) -> ComposeResult:
        """Textual's keys, those bound to the footer's ``compact`` made with its value already: the
        key's own default (on) is not applied and then undone as it mounts, each a restyle of the key."""
        for widget in super().compose():
            if isinstance(widget, FooterKey) and bound_to_parent(widget, "compact"):
                widget.set_reactive(FooterKey.compact, self.compact)
                widget.set_class(self.compact, "-compact", update=False)
            yield widget

    def _keys_to_show(self) -> tuple[Any, ...]:
        """What ``compose`` builds the keys from: the screen's shown bindings, enabled or not, and the footer's options."""
        if not self._bindings_ready:
            return ()
        active = self.screen.active_bindings
        shown = tuple((binding, enabled, tooltip) for _, binding, enabled, tooltip in active.values() if binding.show)
        palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        return (shown, palette and palette[1:], self.compact, self.show_command_palette)

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
