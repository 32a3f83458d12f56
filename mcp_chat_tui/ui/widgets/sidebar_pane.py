"""The sidebar's pane: as wide as its share of the terminal (``[ui] sidebar_width``), which F7 and
F8 or dragging its left edge with the mouse change."""

from __future__ import annotations

from typing import Any

from textual import events
from textual.containers import Vertical
from textual.message import Message
from textual.widget import Widget

from mcp_chat_tui.config.settings import SIDEBAR_WIDTHS


def kept_in_range(percent: int) -> int:
    return max(SIDEBAR_WIDTHS[0], min(SIDEBAR_WIDTHS[1], percent))


class SidebarPane(Vertical):
    """The calls and the servers, ``percent`` of the terminal wide."""

    class Resized(Message):
        """The user made the sidebar ``percent`` of the terminal wide (a drag has ended)."""

        def __init__(self, percent: int) -> None:
            super().__init__()
            self.percent = percent

    def __init__(self, *children: Widget, percent: int, **options: Any) -> None:
        super().__init__(*children, **options)
        self._dragging = False
        self.percent = 0
        self.set_percent(percent)

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
            self.post_message(self.Resized(self.percent))
            event.stop()
