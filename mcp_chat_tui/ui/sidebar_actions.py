"""Showing and hiding the sidebar, and its width as the user sets it (F7, F8, the mouse), kept in
``config.toml``'s ``[ui]``: a part of ``ChatApp``."""

from __future__ import annotations

from mcp_chat_tui.config import save_setting
from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.ui.app_base import ChatAppBase
from mcp_chat_tui.ui.widgets.prompt import PromptInput
from mcp_chat_tui.ui.widgets.sidebar_pane import SidebarPane

WIDTH_STEP = 5  # percent of the terminal per key press


class SidebarActions(ChatAppBase):
    """Uses ``ChatApp``'s ``settings``, ``settings_file`` and its ``#sidebar``."""

    def sidebar_pane(self) -> SidebarPane:
        return self.query_one("#sidebar", SidebarPane)

    def action_toggle_sidebar(self) -> None:
        """Hide or show the sidebar. Hiding it takes the focus out of it to the prompt first, so
        its keys (``a``, ``r``, ``l``, Enter) never act unseen and typing goes to the prompt
        (Textual would hand the focus to a sibling table, hidden with it). From the command palette too, whose screen is on top."""
        sidebar = self.query_one("#sidebar")
        screen = sidebar.screen  # not the command palette's, when asked from there
        if sidebar.display and screen.focused is not None and sidebar in screen.focused.ancestors:
            screen.set_focus(self.query_one(PromptInput))
        sidebar.display = not sidebar.display

    def action_sidebar_width(self, step: int) -> None:
        """F7 (narrower) and F8 (wider): the sidebar takes ``step`` steps more of the width, and keeps it."""
        pane = self.sidebar_pane()
        if not pane.display:
            pane.display = True
        before = pane.percent
        if pane.set_percent(before + step * WIDTH_STEP) != before:
            self._save_sidebar_width(pane.percent)

    def on_sidebar_pane_resized(self, message: SidebarPane.Resized) -> None:
        self._save_sidebar_width(message.percent)

    def _save_sidebar_width(self, percent: int) -> None:
        """Write ``[ui] sidebar_width`` (only that key); a file that cannot be written is said, once per try."""
        if self.settings_file is None or percent == self.settings.ui.sidebar_width:
            return
        try:
            self.settings = save_setting(self.settings_file, ("ui", "sidebar_width"), percent)
        except UserFacingError as exc:
            self.notify(str(exc), title="sidebar width not saved", severity="error", markup=False)
