"""The panes' container, which brings the app's styles."""

from __future__ import annotations

from pathlib import Path

from textual.containers import Horizontal


class Workspace(Horizontal):
    """The panes below the status bar. Their styles (``app.tcss``) come with this widget, so they
    are parsed when the panes are mounted, after the first frame."""

    SCOPED_CSS = False
    DEFAULT_CSS = Path(__file__).with_name("app.tcss").read_text(encoding="utf-8")
