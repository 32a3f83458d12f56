"""Holding the app's frames while what one moment shows is still being put on screen.

A model's tool call comes as a burst of the agent's messages in the same few milliseconds: the
call's row and card, then (when the policy asks) its approval dialog. Drawn as they come, the
chat with the row and card is one frame (a layout and drawing of the whole screen) and the dialog
over it, which draws that screen again under its tint, the next. Held, the dialog's frame is
the first that shows the call. ``FrameHold`` keeps Textual from drawing (its ``batch_update``)
until it is let go, or for ``limit`` seconds at most, so a hold never freezes the screen. Enter in
the prompt holds them the same way until the prompt and its reply are on screen (``PromptInput``).
"""

from __future__ import annotations

from contextlib import ExitStack

from textual.dom import DOMNode
from textual.timer import Timer


class FrameHold:
    """One hold of the app's frames at a time: ``hold`` starts it (again: kept), ``release`` ends it.
    ``owner`` (the app, or a widget) runs the limit's timer."""

    def __init__(self, owner: DOMNode) -> None:
        self.owner = owner
        self._held: tuple[ExitStack, Timer] | None = None

    @property
    def holding(self) -> bool:
        return self._held is not None

    def hold(self, limit: float) -> None:
        """Draw nothing until ``release``, or ``limit`` seconds from now at most."""
        if self._held is None:
            held = ExitStack()
            held.enter_context(self.owner.app.batch_update())
            self._held = (held, self.owner.set_timer(limit, self.release))

    def release(self) -> None:
        """Draw again: what waited is drawn in one frame."""
        held, self._held = self._held, None
        if held is not None:
            stack, limit = held
            limit.stop()
            stack.close()
            app = self.owner.app
            if app.screen_stack:  # (none once the app has closed them, leaving)
                app.screen.check_idle()  # the screen draws what waited when it next idles
