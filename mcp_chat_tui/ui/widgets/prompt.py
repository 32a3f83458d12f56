"""The input line: Enter sends, Up and Down recall earlier prompts; the cursor holds still while a reply is written."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Input


class PromptInput(Input):
    BINDINGS = [
        Binding("up", "history(-1)", "Earlier prompt", show=False, id="prompt.earlier"),
        Binding("down", "history(1)", "Later prompt", show=False, id="prompt.later"),
    ]

    def __init__(self, **kwargs) -> None:
        # Coming back to the prompt (F5, Tab, typing in the chat) keeps the cursor where it was:
        # with Textual's default the whole draft would be selected, and the next key replace it.
        kwargs.setdefault("select_on_focus", False)
        super().__init__(**kwargs)
        self.history: list[str] = []
        self._position = 0
        self._draft = ""
        self._blink_before_hold: bool | None = None

    def remember(self, prompt: str) -> None:
        if not self.history or self.history[-1] != prompt:
            self.history.append(prompt)
        self._position = len(self.history)
        self._draft = ""

    def action_history(self, step: int) -> None:
        if not self.history:
            return
        if self._position == len(self.history):
            self._draft = self.value
        self._position = max(0, min(len(self.history), self._position + step))
        self.value = self.history[self._position] if self._position < len(self.history) else self._draft
        self.cursor_position = len(self.value)

    def hold_cursor(self, hold: bool) -> None:
        """Keep the cursor from blinking (while a reply is written: each blink is a frame drawn on
        the app's thread, whose time the model needs), or let it blink again as it did before."""
        if hold:
            if self._blink_before_hold is None:
                self._blink_before_hold = self.cursor_blink
            self.cursor_blink = False
        elif self._blink_before_hold is not None:
            self.cursor_blink, self._blink_before_hold = self._blink_before_hold, None

    def _watch_cursor_blink(self, blink: bool) -> None:
        super()._watch_cursor_blink(blink)
        if blink and not self.has_focus:
            # Textual's watcher restarts the blink whether or not the input has the focus; out of
            # focus it would redraw the line twice a second for a cursor nobody sees. Focus
            # restarts it.
            self._pause_blink()
