"""A pane's scrollbar shows where the pane is, also when it appears after the pane was scrolled
(ui/widgets/scrolling.py), and a scroll to a widget ends where a line starts."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from mcp_chat_tui.ui.widgets.scrolling import Scroll, scroll_to_now


class Panes(App[None]):
    CSS = "VerticalScroll { height: 5; overflow-y: hidden; }"

    def __init__(self, kind: type[VerticalScroll]) -> None:
        super().__init__()
        self.kind = kind

    def compose(self) -> ComposeResult:
        with self.kind(id="pane"):
            for line in range(20):
                yield Static(f"line {line}", id=f"line-{line}")


async def scrolled_then_shown(kind: type[VerticalScroll]) -> tuple[float, float]:
    """Scroll a pane whose scrollbar is hidden, then let the bar appear: (the pane's place, the bar's)."""
    app = Panes(kind)
    async with app.run_test(size=(40, 10)) as pilot:
        pane = app.query_one("#pane", VerticalScroll)
        pane.scroll_to(y=7, animate=False, force=True, immediate=True)
        await pilot.pause()
        assert pane.scroll_y == 7 and not pane.show_vertical_scrollbar
        pane.styles.overflow_y = "auto"
        await pilot.pause()
        await pilot.pause()
        assert pane.show_vertical_scrollbar
        return pane.scroll_y, pane.vertical_scrollbar.position


async def test_the_scrollbar_that_appears_starts_where_the_pane_is():
    assert await scrolled_then_shown(Scroll) == (7, 7)


async def test_textuals_own_pane_would_show_its_bar_at_the_top():
    """What Scroll corrects (if Textual fixes this, Scroll's watcher can go)."""
    assert await scrolled_then_shown(VerticalScroll) == (7, 0)


@pytest.mark.parametrize("target", [12, 3])
async def test_a_scroll_to_a_widget_during_an_animated_scroll_ends_on_a_line(target):
    app = Panes(Scroll)
    async with app.run_test(size=(40, 10)) as pilot:
        pane = app.query_one("#pane", Scroll)
        pane.styles.overflow_y = "auto"
        await pilot.pause()
        pane.scroll_to(y=15, animate=True, duration=5.0)  # still on its way
        await pilot.pause(0.1)
        assert 0 < pane.scroll_y < 15 and pane.scroll_y != int(pane.scroll_y)
        scroll_to_now(pane, app.query_one(f"#line-{target}"))
        await pilot.pause(0.2)
        assert pane.scroll_y == int(pane.scroll_y)
        assert pane.scroll_y <= target < pane.scroll_y + 5
