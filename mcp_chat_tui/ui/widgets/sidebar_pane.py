"""The sidebar's pane: shown or hidden (Ctrl+B), as wide as its share of the terminal
(``[ui] sidebar_width``), which F7 and F8 or dragging its left edge with the mouse change."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import events
from textual.containers import Vertical
from textual.widget import Widget

from mcp_chat_tui.config.settings import SIDEBAR_WIDTHS

WIDTH_STEP = 5  # percent of the terminal per key press (F7, F8)


def kept_in_range(percent: int) -> int:
    return max(SIDEBAR_WIDTHS[0], min(SIDEBAR_WIDTHS[1], percent))


class SidebarPane(Vertical):
    """The calls and the servers, ``percent`` of the terminal wide; no key acts in it while it is hidden.

    Args:
        percent: Its share of the terminal's width at start.
        focus_instead: Where the focus goes when it would be in the pane while the pane is hidden (the prompt).
        keep_width: Called with the share the user chose (F7, F8, a drag ended), to keep it for the next run.
    """

    def __init__(
        self,
        *children: Widget,
        percent: int,
        focus_instead: Widget,
        keep_width: Callable[[int], None],
        **options: Any,
    ) -> None:
        super().__init__(*children, **options)
        self._focus_instead = focus_instead
        self._keep_width = keep_width
        self._dragging = False
        self.percent = 0
        self.set_percent(percent)

    def toggle(self) -> None:
        """Hide or show the pane. Hiding it takes the focus out of it first, so its keys (``a``,
        ``r``, ``l``, Enter) never act unseen and typing goes to the prompt (Textual would hand the
        focus to a sibling table, hidden with it). Its own screen's focus, whatever screen is on top
        (the command palette's, when asked from there)."""
        screen = self.screen
        if self.display and screen.focused is not None and self in screen.focused.ancestors:
            screen.set_focus(self._focus_instead)
        self.display = not self.display

    def step_width(self, steps: int) -> None:
        """F7 (-1) and F8 (1): ``steps`` steps more of the width, shown if it was hidden; the width is kept."""
        if not self.display:
            self.display = True
        before = self.percent
        if self.set_percent(before + steps * WIDTH_STEP) != before:
            self._keep_width(self.percent)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Focus that lands in the pane while hidden anyway (Textual hands the focus of a hidden
        widget to a sibling hidden with it) goes to ``focus_instead``."""
        if not self.display:
            self.screen.set_focus(self._focus_instead)

    def set_percent(self, percent: int) -> int:
        """Show the pane ``percent`` of the terminal wide (kept within the allowed range); returns that share."""
        self.percent = kept_in_range(percent)
        self.styles.width = f"{self.percent}%"
        return self.percent

    def on_mouse_down(self, event: events.MouseDown) -> None:
        if event.x == 0:  # the border on its left
            self._dragging = True
            self.capture_mouse()
            event.stop()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if self._dragging and self.app.size.width:
            self.set_percent(round((self.app.size.width - event.screen_x) * 100 / self.app.size.width))

    def on_mouse_up(self, event: events.MouseUp) -> None:
        if self._dragging:
            self._dragging = False
            self.release_mouse()
            self._keep_width(self.percent)
            event.stop()
