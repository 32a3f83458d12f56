"""Dialogs that decide something take only keys pressed for them.

An approval, a server's URL, form or sampling request, a sign-in: each can appear while the user
is typing a prompt, and a letter meant for the prompt (``t`` of "tell", ``a`` of "all", ``o``)
must not answer it. A ``DecidingScreen`` is armed only once its first frame has been drawn and
``ARMING_DELAY`` more has passed with no key typed: typing that goes on as the dialog appears
(by someone looking at the keyboard, or at what they copy) goes on into the prompt until it
stops. Until then its keys are dimmed and its border says "keys active in 0.5 s"; then it arms
itself visibly. It starts again each time it comes back on top (a dialog shown over it went
away), so keys meant for that other dialog do not answer it.

A key pressed before then, by the time it was read from the terminal (``events.Key.time``, not
when the app got to it), is not the dialog's (the app's ``KeyGuard``, ui/dialog_keys.py, sorts
them): printable keys, Backspace and pastes go to the text field that had the focus under the
dialog (the prompt), in order; every other key is dropped, Enter too, so a prompt is not sent
behind a dialog the user has not seen. The text waits in the prompt.

Why half a second: core/arming.py (``--plain`` waits as long before it takes a line for a question).
"""

from __future__ import annotations

from functools import partial
from typing import Any, TypeVar

from textual import events
from textual.app import App
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, TextArea

from mcp_chat_tui.core.arming import ARMING_DELAY
from mcp_chat_tui.ui.textual_private import forward_event, get_time

UNARMED_NOTICE = f"keys active in {ARMING_DELAY:g} s"

ResultType = TypeVar("ResultType")


class DecidingScreen(ModalScreen[ResultType]):
    """A modal dialog whose keys decide something: armed once it has been drawn, and no key
    typed, for ``ARMING_DELAY``.

    Its key hints carry the class ``dialog-keys`` (dimmed while ``-unarmed``); the widget that
    holds them has the notice as its border subtitle until the dialog is armed."""

    def __init__(self) -> None:
        super().__init__(classes="-unarmed")
        self._armed_since: float | None = None  # ``get_time()`` when it was armed
        self._times_shown = 0  # each time it comes on top; a timer from an earlier time does nothing
        self._drawn_at: float | None = None  # when its frame was drawn, this time on top
        self._last_held = 0.0  # the time of the last key it did not take
        self.withdrawn = False  # what it answers ended while it was covered: it goes when uncovered

    @property
    def armed(self) -> bool:
        return self._armed_since is not None

    def takes(self, event: events.Event) -> bool:
        """Whether ``event`` (a key or a paste) came after the dialog was armed, i.e. is its own."""
        return self._armed_since is not None and event.time >= self._armed_since

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """No action of the dialog's runs before it is armed, however a key reaches its bindings
        (one that the prompt below did not take bubbles up to the app, which looks here)."""
        return True if self.armed else None

    def on_screen_resume(self) -> None:
        if self.withdrawn:
            self.dismiss(None)
            return
        self._disarm()
        self.call_after_refresh(self._drawn, self._times_shown)

    def on_screen_suspend(self) -> None:
        self._disarm()

    def _disarm(self) -> None:
        self._times_shown += 1
        self._armed_since = self._drawn_at = None
        self._show_armed(False)

    def _drawn(self, shown: int) -> None:
        """The dialog's frame has been drawn (Textual runs this after the screen's refresh)."""
        if shown == self._times_shown and self.is_current:
            self._drawn_at = get_time()
            self._arm_when_quiet(shown)

    def _arm_when_quiet(self, shown: int) -> None:
        """Arm once the frame has been up, and no key been typed, for ``ARMING_DELAY``."""
        if shown != self._times_shown or not self.is_current or self._drawn_at is None:
            return
        due = max(self._drawn_at, self._last_held) + ARMING_DELAY
        now = get_time()
        if now < due:
            self.set_timer(due - now, partial(self._arm_when_quiet, shown))
            return
        self._armed_since = now
        self._show_armed(True)

    def _show_armed(self, armed: bool) -> None:
        self.set_class(not armed, "-unarmed")
        for keys in self.query(".dialog-keys"):
            if keys.parent is not None and hasattr(keys.parent, "border_subtitle"):
                keys.parent.border_subtitle = "" if armed else UNARMED_NOTICE
        self.refresh_bindings()

    def hand_back(self, event: events.Key | events.Paste) -> None:
        """A key or paste that came before the dialog was armed goes to the text field that had
        the focus under it, if any: printable keys, Backspace and pastes; the rest is dropped.
        Typing that goes on keeps the dialog from arming (``_arm_when_quiet``)."""
        self._last_held = max(self._last_held, event.time)
        field = _focus_below(self)
        if not isinstance(field, (Input, TextArea)) or isinstance(field, TextArea) and field.read_only:
            return
        if isinstance(event, events.Paste) or (event.is_printable and event.character):
            forward_event(field, event)  # into its queue, behind the keys it already has
        elif event.key == "backspace":
            field.call_later(field.action_delete_left)


def withdraw_dialog(app: App[Any], screen: Screen[Any], what: str, why: str) -> None:
    """What ``screen`` answers has ended (``why``): it goes now (or as soon as it is uncovered, or is
    never shown), answering None, and a notice says so; nothing typed in it is sent."""
    if screen.is_current:
        screen.dismiss(None)
    elif isinstance(screen, DecidingScreen):
        screen.withdrawn = True
    app.notify(f"{what} closed: {why}. Nothing typed in it was sent.", severity="warning", timeout=10, markup=False)


def _focus_below(screen: Screen[Any]) -> object:
    """What has the focus on the screen right under ``screen`` (None: nothing, or no such screen)."""
    stack = screen.app.screen_stack
    index = stack.index(screen) if screen in stack else 0
    return stack[index - 1].focused if index > 0 else None
