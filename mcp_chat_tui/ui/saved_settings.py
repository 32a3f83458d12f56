"""The settings in effect and ``config.toml``, where a choice the user makes on screen is kept
(the sidebar's width, the theme): one key written at a time, a file that cannot be written said."""

from __future__ import annotations

from functools import reduce
from pathlib import Path
from typing import Any

from textual.app import App

from mcp_chat_tui.config import Settings, save_setting
from mcp_chat_tui.core.errors import UserFacingError


class SavedSettings:
    """Keeps a setting the user changed on screen.

    Args:
        settings: The settings in effect at start.
        path: The ``config.toml`` they came from (None: nothing is written, as in tests and ``--config`` unset).
        app: Where a failed write is said (a notification).
    """

    def __init__(self, settings: Settings, path: Path | None, app: App[Any]) -> None:
        self.settings = settings
        self.path = path
        self._app = app

    def keep(self, keys: tuple[str, ...], value: object, what: str) -> None:
        """Write ``keys`` (only that key) when it changed; a file that cannot be written is said,
        once per try, as ``what`` not saved."""
        if self.path is None or reduce(getattr, keys, self.settings) == value:
            return
        try:
            self.settings = save_setting(self.path, keys, value)
        except UserFacingError as exc:
            self._app.notify(str(exc), title=f"{what} not saved", severity="error", markup=False)
