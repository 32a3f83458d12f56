"""Keys pressed before a deciding dialog was armed are not the dialog's: a part of ``ChatApp``.

Textual hands every key the terminal sends to the app, which gives it to whatever screen is on
top when it gets to the key, however long ago it was pressed. So a letter typed for the prompt
just before (or just as) a dialog appears would answer the dialog. Here each key and paste is
looked at first, before any binding: while the screen on top is a ``DecidingScreen`` that was not
armed when the key was pressed, the key goes back where the user was typing
(``DecidingScreen.hand_back``), or nowhere. Only the app's own priority keys (Ctrl+C leaves) act
as they always do. A key that the widget under the dialog did not take and that bubbles up to
the app is dropped as well, so it cannot reach the dialog's bindings either.
"""

from __future__ import annotations

from textual import events
from textual.app import App

from mcp_chat_tui.ui.screens.deciding import DecidingScreen
from mcp_chat_tui.ui.textual_private import key_bindings


class DialogKeyGuard:
    """The key guard of ``ChatApp`` (before ``App`` in its bases, so it sees every event first)."""

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.Paste)) and not self._meant_for_screen(event):
            return
        await super().on_event(event)  # type: ignore[misc]

    def _meant_for_screen(self, event: events.Key | events.Paste) -> bool:
        """False for a key or paste the dialog on top must not act on (it is given back first)."""
        assert isinstance(self, App)
        if not self.is_running or not self.screen_stack:
            return True
        dialog = self.screen
        if not isinstance(dialog, DecidingScreen) or dialog.takes(event):
            return True
        if isinstance(event, events.Key) and not event.is_forwarded:
            if any(binding.priority for binding in key_bindings(self, event.key)):
                return True  # Ctrl+C: the app's own, never the dialog's
        if not event.is_forwarded:
            dialog.hand_back(event)
        return False
