"""How times and durations are shown; a frozen clock makes screens repeatable for snapshot tests."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.markup import escape

from mcp_chat_tui.core.text import visible_controls


class DisplayClock:
    """Formats wall-clock times and durations for the screen."""

    def time(self, moment: datetime | None) -> str:
        return moment.strftime("%H:%M:%S") if moment is not None else "--:--:--"

    def duration(self, seconds: float | None) -> str:
        if seconds is None:
            return ""
        if seconds < 1:
            return f"{seconds * 1000:.0f} ms"
        if seconds < 60:
            return f"{seconds:.1f} s"
        return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


class FrozenClock(DisplayClock):
    """Shows one fixed time and duration everywhere (for snapshot tests and screenshots)."""

    def __init__(self, shown_time: str = "12:00:00", shown_duration: str = "120 ms") -> None:
        self.shown_time = shown_time
        self.shown_duration = shown_duration

    def time(self, moment: datetime | None) -> str:
        return self.shown_time

    def duration(self, seconds: float | None) -> str:
        return "" if seconds is None else self.shown_duration


def literal(value: object, style: str = "") -> Text:
    """Text from a server or the model, shown as itself: no markup, no escape sequences."""
    return Text(visible_controls(str(value)), style=style)


def palette_text(value: object) -> str:
    """Text from a server for a place that reads markup (the command palette), escaped to show as itself."""
    return escape(visible_controls(str(value)))
