"""The input line: Enter sends, Up and Down recall earlier prompts; the cursor holds still while a reply is written.

While the completion list (``/`` prompts, ``@`` resources) is open, Up and Down move in it, Tab
and Enter take the highlighted entry (Enter sends a command already typed in full), and Esc closes
it. Resources chosen with ``@`` wait in ``attached`` until the prompt is sent; a read under way
waits in ``reading``, and a prompt sent before it ends takes it along (the app waits for it)."""

from __future__ import annotations

from typing import Any

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input

from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.ui.completion import Candidate
from mcp_chat_tui.ui.frame_hold import FrameHold
from mcp_chat_tui.ui.queued_prompt import QueuedPrompt, Read
from mcp_chat_tui.ui.textual_private import key_bindings, pause_blink, restart_blink
from mcp_chat_tui.ui.widgets.completion import CompletionMenu

HOLD_LIMIT = 0.1  # seconds Enter holds the app's frames at most (``hold_frames``)


class PromptInput(Input):
    BINDINGS = [
        Binding("up", "history(-1)", "Earlier prompt", show=False, id="prompt.earlier"),
        Binding("down", "history(1)", "Later prompt", show=False, id="prompt.later"),
        Binding("tab", "choose", "Take the / or @ entry", show=False, id="prompt.complete"),
        Binding(
            "escape", "close_menu", "Close list", tooltip="Close the / or @ list", id="prompt.close_completion"
        ),  # in the footer while the list is open: Esc does not stop then
    ]

    class Chosen(Message):
        """An entry of the completion list was taken."""

        def __init__(self, candidate: Candidate) -> None:
            super().__init__()
            self.candidate = candidate

    def __init__(self, **kwargs: Any) -> None:
        # Coming back to the prompt (F5, Tab, typing in the chat) keeps the cursor where it was:
        # with Textual's default the whole draft would be selected, and the next key replace it.
        kwargs.setdefault("select_on_focus", False)
        super().__init__(**kwargs)
        self.history: list[str] = []
        self._position = 0
        self._draft = ""
        self.recalled: str | None = None  # the earlier prompt Up or Down put in the box, while it is unchanged
        self._blink_before_hold: bool | None = None
        self.menu: CompletionMenu | None = None
        self.attached: list[tuple[str, Attachment]] = []  # (the @word in the text, the resource's contents)
        self.reading: dict[str, Read] = {}  # @word: its read (contents or error)
        self.frames = FrameHold(self)  # held from Enter until what it sent is shown

    def take_queued(self, text: str) -> QueuedPrompt:
        """``text`` as sent, with the resources chosen with ``@`` whose word is in it, read or still
        being read (those then belong to the prompt sent); no read resource waits after this."""
        queued = QueuedPrompt(text, [(word, attachment) for word, attachment in self.attached if word in text])
        queued.reading = {word: read for word, read in self.reading.items() if word in text}
        self.reading = {word: read for word, read in self.reading.items() if word not in queued.reading}
        self.attached = []
        return queued

    def give_back(self, queued: QueuedPrompt) -> None:
        """A prompt that was not sent comes back (when nothing else is being written), with what it carried."""
        if not self.value.strip():  # a space after a last @word, as when it was taken: no list opens again
            self.put_back(queued.prompt + " ")
        self.attached += [pair for pair in queued.attached if pair[0]]
        for word, read in queued.reading.items():
            if not read.done():
                self.reading.setdefault(word, read)  # its contents come here when it ends
            elif not isinstance(contents := read.result(), str):
                self.attached += [(word, content) for content in contents]

    async def _on_key(self, event: events.Key) -> None:
        """The prompt's own keys (Enter, Up, Down, Tab, Backspace, ...) act here, in the order they
        were typed. As Textual's bindings they would act only once the key had gone up to the app,
        after the keys typed behind it had been written: Enter then sent a letter typed right after
        it with the prompt, or emptied it away; Backspace deleted that letter."""
        if event.is_printable:
            return  # written by ``Input``
        for binding in key_bindings(self, event.key):
            if not binding.priority and await self.app.run_action(binding.action, self):
                restart_blink(self)
                event.stop()
                event.prevent_default()
                return

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("choose", "close_menu"):
            return self.menu is not None and self.menu.is_open
        return True

    def action_choose(self) -> None:
        if self.menu is not None and (candidate := self.menu.chosen()) is not None:
            self.menu.close()
            self.post_message(self.Chosen(candidate))

    def action_close_menu(self) -> None:
        if self.menu is not None:
            self.menu.close()

    async def action_submit(self) -> None:
        """Enter takes the highlighted entry of an open list, unless the text is that entry whole
        and it needs nothing more (``/compact``, a prompt without arguments): then it is sent, and the
        line is empty for what is typed next."""
        if self.menu is not None and self.menu.is_open:
            candidate = self.menu.chosen()
            if candidate is None or not candidate.is_typed_in_full(self.value):
                self.action_choose()
                return
            self.menu.close()
        sent, self.value = self.value, ""  # emptied as Enter is handled: what is typed next stays
        self.hold_frames()
        self.post_message(self.Submitted(self, sent))

    def hold_frames(self) -> None:
        """Draw nothing until ``release_frames`` (``HOLD_LIMIT`` at most): the box emptied by Enter
        is drawn in one frame with what the app shows for what was sent (the prompt in the chat and
        its reply opened), not in frames of their own, each a layout of the screen and a 60th of a
        second before the next."""
        self.frames.hold(HOLD_LIMIT)

    def release_frames(self) -> None:
        """Draw again (what Enter sent is shown, or will not be soon): at once, in one frame."""
        self.frames.release()

    def on_unmount(self) -> None:
        self.release_frames()

    def remember(self, prompt: str) -> None:
        if not self.history or self.history[-1] != prompt:
            self.history.append(prompt)
        self._position = len(self.history)
        self._draft = ""

    def action_history(self, step: int) -> None:
        """Up, Down: the earlier prompts; in an open list, its entries (not in one a recalled command
        opened: history keys keep working as history until the text is edited)."""
        if self.menu is not None and self.menu.is_open and self.value != self.recalled:
            self.menu.move(step)
            return
        if not self.history:
            return
        if self._position == len(self.history):
            self._draft = self.value
        self._position = max(0, min(len(self.history), self._position + step))
        self.value = self.history[self._position] if self._position < len(self.history) else self._draft
        self.recalled = self.value
        self.cursor_position = len(self.value)

    def put_back(self, text: str) -> None:
        """Give back text that was not sent, with the cursor at its end to go on editing."""
        self.value = text
        self.cursor_position = len(text)

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
            pause_blink(self)
