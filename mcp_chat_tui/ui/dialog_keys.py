"""Keys go to the screen the person meant: a part of ``ChatApp``.

Textual hands every key the terminal sends to the app, which gives it to whatever screen is on
top when it gets to the key, however long ago it was pressed. Here each key and paste is looked
at first, before any binding, for two cases:

- A screen just pushed (the palette, export, search, an argument editor) is on top before its
  widgets are mounted and its field focused: a key the app got to then reached the bare screen
  and was lost (the first letters of a file name typed straight after opening export). Such keys
  are held, in order, and given to the screen once it is mounted and its focus set.
- While the screen on top is a ``DecidingScreen`` that was not armed when the key was pressed,
  the key goes back where the user was typing (``DecidingScreen.hand_back``), or nowhere. Only
  the app's own priority keys (Ctrl+C leaves) act as they always do. A key that the widget under
  the dialog did not take and that bubbles up to the app is dropped as well, so it cannot reach
  the dialog's bindings either.
- Enter on a command in the palette closes it and runs the command a few messages later; the keys
  typed after Enter reached the palette's field meanwhile and closed with it. They are held from
  that Enter until the command has run (``CommandPalette.Closed``, then the command), then given
  like any key: to the screen it opened (held again until that one opens) or to the focus under.
"""

from __future__ import annotations

from textual import events
from textual.app import App
from textual.command import CommandList, CommandPalette
from textual.screen import Screen
from textual.timer import Timer

from mcp_chat_tui.ui.screens.deciding import DecidingScreen
from mcp_chat_tui.ui.textual_private import key_bindings

TypedEvent = events.Key | events.Paste
PALETTE_NO_COMMAND_S = 1.0  # keys held after a palette's Enter that ran no command are given after this


class DialogKeyGuard:
    """The key guard of ``ChatApp`` (before ``App`` in its bases, so it sees every event first)."""

    _held_keys: list[TypedEvent] | None = None  # keys waiting for a pushed screen to open
    _held_for: Screen[object] | None = None  # that screen
    _palette_timer: Timer | None = None  # gives the keys held after a palette's Enter that closed nothing

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded:
            if self._hold_until_open(event):
                return
        if isinstance(event, (events.Key, events.Paste)) and not self._meant_for_screen(event):
            return
        await super().on_event(event)  # type: ignore[misc]

    def _hold_until_open(self, event: TypedEvent) -> bool:
        """Whether ``event`` waits for the screen on top to open (or behind keys that do)."""
        assert isinstance(self, App)
        if self._held_keys is not None:
            self._held_keys.append(event)
            if self._held_for not in self.screen_stack:  # it went before it opened: none will come
                self.call_later(self._give_held_keys)
            return True
        if not self.is_running or len(self.screen_stack) < 2:
            return False
        screen = self.screen
        if isinstance(screen, CommandPalette) and screen.is_mounted and runs_a_command(screen, event):
            self._held_keys, self._held_for = [], self.screen  # Enter goes on; the keys after it wait
            self._palette_timer = self.set_timer(PALETTE_NO_COMMAND_S, self._give_held_keys)
            return False
        if screen.is_mounted or isinstance(screen, DecidingScreen):
            return False  # open; or a dialog that gives keys typed before it back (``hand_back``)
        if isinstance(event, events.Key) and any(binding.priority for binding in key_bindings(self, event.key)):
            return False  # Ctrl+C: the app's own, whatever is on top
        self._held_keys, self._held_for = [event], screen
        screen.call_later(self._screen_opened, screen)  # runs once the screen has mounted
        return True

    def _screen_opened(self, screen: Screen[object]) -> None:
        """``screen`` is mounted; its focus is set by the app's callbacks queued as it mounted, so
        the held keys are given after those."""
        assert isinstance(self, App)
        self.call_later(self._give_held_keys)

    def _on_command_palette_closed(self, message: CommandPalette.Closed) -> None:
        """The palette closed; a command chosen runs next (Textual queues it after this message),
        so the keys held since Enter are given after it."""
        assert isinstance(self, App)
        if self._held_keys is not None and isinstance(self._held_for, CommandPalette):
            self.call_later(self._give_held_keys)

    async def _give_held_keys(self) -> None:
        held, self._held_keys, self._held_for = self._held_keys or [], None, None
        if self._palette_timer is not None:
            self._palette_timer.stop()
            self._palette_timer = None
        for event in held:  # each as if it came now: the screen a command opened holds them again
            await self.on_event(event)

    def _meant_for_screen(self, event: TypedEvent) -> bool:
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


def runs_a_command(palette: CommandPalette, event: TypedEvent) -> bool:
    """Whether ``event`` is an Enter that chooses a command in ``palette``: one is highlighted in its
    list, or the list offers only one (Enter on a list with none highlighted only highlights)."""
    if not isinstance(event, events.Key) or event.key != "enter":
        return False
    commands = palette.query_one(CommandList)
    return commands.has_class("--visible") and (commands.highlighted is not None or commands.option_count == 1)
