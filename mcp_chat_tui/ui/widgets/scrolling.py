"""Scrolling panes whose scrollbar shows where the pane really is.

A pane scrolled while its scrollbar was hidden (rows added and the pane scrolled to its end in the
same moment, before a layout pass showed the bar) would show the bar's thumb at the top while the
pane sits at its end: the bar takes the pane's place only when ``scroll_y`` changes, and it did not
change again. ``ScrollbarInPlace`` gives the bar the pane's place each time the bar appears.
"""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widget import Widget

from mcp_chat_tui.ui.widgets.widget_mixin import WidgetMixin


class ScrollbarInPlace(WidgetMixin):
    """Mixed in before a scrolling widget's class: its scrollbars start at the pane's place when
    shown. (Not a ``Widget`` when the app runs, so that the widget's CSS and component classes come
    from the class it is mixed into: ``WidgetMixin``.)"""

    def watch_show_vertical_scrollbar(self, shown: bool) -> None:
        if shown:
            self.vertical_scrollbar.position = self.scroll_y

    def watch_show_horizontal_scrollbar(self, shown: bool) -> None:
        if shown:
            self.horizontal_scrollbar.position = self.scroll_x


class Scroll(ScrollbarInPlace, VerticalScroll):
    """A ``VerticalScroll`` whose scrollbar shows its place (see ``ScrollbarInPlace``)."""


def scroll_to_now(pane: Widget, widget: Widget, *, top: bool = False) -> None:
    """Scroll ``pane`` at once so that ``widget`` is in view (at the top with ``top``).

    A scroll still animating in ``pane`` (Textual animates the one to a newly focused field) is
    ended first, at its end: measured from the middle of an animation, the scroll would stop at a
    place between two lines.
    """
    for attribute in ("scroll_x", "scroll_y"):
        pane.app.animator.force_stop_animation(pane, attribute)
    pane.scroll_to_widget(widget, top=top, animate=False)
