"""One layout pass per update for the chat's widgets (see docs/architecture.md, the streaming path)."""

from __future__ import annotations

from typing import Self

from textual.geometry import Region, Size

from mcp_chat_tui.ui.widgets.widget_mixin import WidgetMixin


class OneLayoutPass(WidgetMixin):
    """Mixin: a changed virtual size, or a change before mounting, asks for no second layout."""

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        return super()._size_updated(size, virtual_size, container_size, layout=False)

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Self:
        # Whatever mounts the widget lays it out afterwards: a layout asked for before that would
        # only come after it and find nothing to move.
        layout = layout and self.is_mounted
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)
