"""Keys go to the screen the person meant: ``KeyGuard``, a helper ``ChatApp`` composes and asks first
about every event (its ``on_event``).

Textual hands every key the terminal sends to the app, which gives it to whatever screen is on
top when it gets to the key, however long ago it was pressed. Here each key and paste is looked
at first, before any binding, for two cases:

- A screen just pushed (the palette, export, search, an argument editor) is on top before its
  widgets are mounted and its field focused: a key the app got to then reached the bare screen
  and was lost (the first letters of a file name typed straight after opening export). Such keys
  are held, in order, and given to the screen once it is mounted and its focus set; so is the first
  key that comes to a screen which mounted before the app got to it (its focus, queued on the app
  as it mounted, may still be behind that key).
- While the screen on top is a ``DecidingScreen`` that was not armed when the key was pressed,
  the key goes back where the user was typing (``DecidingScreen.hand_back``), or nowhere. Only
  the app's own priority keys (Ctrl+C leaves) act as they always do. A key that the widget under
  the dialog did not take and that bubbles up to the app is dropped as well, so it cannot reach
  the dialog's bindings either.
- Enter in a screen (a command in the palette, a file name in export, a conversation found)
  often closes it and acts a few messages later; the keys typed after Enter reached the closing
  screen's field meanwhile and closed with it. They are held from that Enter until it is done (the
  screen closed and what it chose run, or everything in the screen handled), then given like any
  key: to the screen the choice opened (held again until that one opens) or to the focus under.
  Done is decided by the Enter's own way, not by when a timer looks: the Enter goes from the app to
  the focused field, bubbles up to the screen and back to the app, whose bindings (the field's
  submit, the palette's select) act on it there; until then no queue of the screen holds it nor what
  it sets off. So the watch follows it: a callback queued on each node it passes runs once that node
  has handled it, and only after the app has is "nothing left in the screen" a sign it is done. The
  looks themselves are queued on the app, so none runs while the app is midway through a message.
"""

from __future__ import annotations

import time
from typing import Any, TypeGuard
from weakref import WeakSet

from textual import events
from textual.app import App
from textual.dom import DOMNode
from textual.screen import Screen
from textual.timer import Timer

from mcp_chat_tui.ui.screens.deciding import DecidingScreen
from mcp_chat_tui.ui.textual_private import key_bindings

TypedEvent = events.Key | events.Paste
ENTER_CHECK_S = 0.01  # how often a screen given Enter is looked at, until the Enter is done
ENTER_HOLD_MAX_S = 0.5  # a screen kept busy (a live log) gets the keys after this all the same


class KeyGuard:
    """The app's key guard: ``ChatApp.on_event`` asks it about each event before any binding (``holds``).

    Args:
        app: The app whose keys it looks at: its screens, its priority bindings and its timers; a
            held key is given again through its ``on_event``, as if it came then.
    """

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self._held_keys: list[TypedEvent] | None = None  # keys waiting for a pushed screen to open
        self._held_for: Screen[object] | None = None  # that screen
        self._enter_watch: Timer | None = None  # looks at a screen given Enter until the Enter is done
        self._enter_at = 0.0  # when (time.monotonic)
        self._enter: events.Key | None = None  # that Enter
        self._enter_handled = False  # every node on its way, the app last, has handled it
        self._look_queued = False  # a look at the screen is queued on the app
        self._settled: WeakSet[Screen[object]] = WeakSet()  # screens whose first keys were given: their opening is over

    def holds(self, event: events.Event) -> bool:
        """Whether ``event`` is held (given later) or dropped here: the app does not handle it now."""
        if isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded:
            if self._hold_until_open(event):
                return True
        return isinstance(event, (events.Key, events.Paste)) and not self._meant_for_screen(event)

    def _hold_until_open(self, event: TypedEvent) -> bool:
        """Whether ``event`` waits for the screen on top to open (or behind keys that do)."""
        if self._held_keys is not None and not self._app_priority(event):  # Ctrl+C is never held
            self._held_keys.append(event)
            if self._held_for not in self.app.screen_stack:  # it went before it opened: none will come
                self.app.call_later(self._give_held_keys)
            return True
        if not self.app.is_running or len(self.app.screen_stack) < 2:
            return False
        screen = self.app.screen
        if is_enter(event) and screen.is_mounted and not isinstance(screen, DecidingScreen):
            self._held_keys, self._held_for = [], screen  # Enter goes on; the keys after it wait
            self._enter, self._enter_handled, self._enter_at = event, False, time.monotonic()
            self.app.call_next(self._enter_sent, event, self.app.focused or screen)  # where the app hands it
            self._enter_watch = self.app.set_interval(ENTER_CHECK_S, self._after_enter)
            return False
        if isinstance(screen, DecidingScreen) or (screen.is_mounted and screen in self._settled):
            return False  # open; or a dialog that gives keys typed before it back (``hand_back``)
        if self._app_priority(event):
            return False  # Ctrl+C: the app's own, whatever is on top
        self._held_keys, self._held_for = [event], screen
        if screen.is_mounted:  # it mounted before the app got to this key: its focus, queued on the
            self.app.call_later(self._give_held_keys)  # app as it mounted, is set first
        else:
            screen.call_later(self._screen_opened, screen)  # runs once the screen has mounted
        return True

    def _screen_opened(self, screen: Screen[object]) -> None:
        """``screen`` is mounted; its focus is set by the app's callbacks queued as it mounted, so
        the held keys are given after those."""
        self.app.call_later(self._give_held_keys)

    def _enter_sent(self, enter: events.Key, target: DOMNode) -> None:
        """The app has handled ``enter`` (run after it, ``call_next``): handed on to ``target``, the
        watch follows it there; taken by one of the app's priority bindings, it is handled."""
        if enter is self._enter:
            if enter.is_forwarded:
                self._follow_enter(enter, target, here=False)
            else:
                self._enter_is_handled()

    def _follow_enter(self, enter: events.Key, node: DOMNode, here: bool = True) -> None:
        """Queue the watch on ``node`` after ``enter`` (``here``: ``node`` has just handled it, so
        on the next node up, where it bubbles to). Each runs in its node's own task once that node
        is past the Enter; past the app, nothing of the Enter's own way is left."""
        if enter is not self._enter:  # the keys were given meanwhile (the screen closed, the limit)
            return
        if here and node is self.app:
            self._enter_is_handled()
            return
        target = node.parent if here else node
        if target is None or not target.call_later(self._follow_enter, enter, target):
            self._enter_is_handled()  # no node above (or it is closing): nothing more can take it

    def _enter_is_handled(self) -> None:
        self._enter_handled = True
        self._queue_look()

    async def _after_enter(self) -> None:
        """The watch's tick (its own task, any moment): a look at the screen is queued on the app."""
        self._queue_look()

    def _queue_look(self) -> None:
        if self._held_keys is not None and not self._look_queued:
            self._look_queued = self.app.call_later(self._look)

    async def _look(self) -> None:
        """The Enter given to the held-for screen is done once the screen has closed (what it
        chose was queued on the app as it closed, so the keys are given after that) or, the Enter
        handled by all on its way, nothing in the screen has a message left to handle (it stayed
        open: the keys go to it). Run by the app between its messages."""
        self._look_queued = False
        screen = self._held_for
        if self._held_keys is None or self._enter is None:
            return  # given already; or the keys wait for a screen to open, not for an Enter
        if screen is not None and screen not in self.app.screen_stack:
            self._stop_enter_watch()
            self.app.call_later(self._give_held_keys)
        elif (
            screen is None
            or time.monotonic() - self._enter_at > ENTER_HOLD_MAX_S
            or (self._enter_handled and not busy(screen))
        ):
            await self._give_held_keys()

    async def _give_held_keys(self) -> None:
        if self._held_for is not None and self._held_for.is_mounted:
            self._settled.add(self._held_for)
        held, self._held_keys, self._held_for = self._held_keys or [], None, None
        self._stop_enter_watch()
        for event in held:  # each as if it came now: the screen a command opened holds them again
            await self.app.on_event(event)

    def _app_priority(self, event: TypedEvent) -> bool:
        return isinstance(event, events.Key) and any(binding.priority for binding in key_bindings(self.app, event.key))

    def _stop_enter_watch(self) -> None:
        self._enter, self._enter_handled = None, False
        if self._enter_watch is not None:
            self._enter_watch.stop()
            self._enter_watch = None

    def _meant_for_screen(self, event: TypedEvent) -> bool:
        """False for a key or paste the dialog on top must not act on (it is given back first)."""
        if not self.app.is_running or not self.app.screen_stack:
            return True
        dialog = self.app.screen
        if not isinstance(dialog, DecidingScreen) or dialog.takes(event):
            return True
        if not event.is_forwarded and self._app_priority(event):
            return True  # Ctrl+C: the app's own, never the dialog's
        if not event.is_forwarded:
            dialog.hand_back(event)
        return False


def busy(screen: Screen[object]) -> bool:
    """Whether anything in ``screen`` has a message left to handle."""
    return any(node.message_queue_size for node in (screen, *screen.walk_children()))


def is_enter(event: TypedEvent) -> TypeGuard[events.Key]:
    return isinstance(event, events.Key) and event.key == "enter"
