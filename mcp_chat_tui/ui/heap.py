"""Python's cycle collector, kept from pausing the screen for long (issue 33).

A full collection walks every object the process holds: with a 500-exchange conversation and
1,000 calls in the sidebar that is over 200,000 objects, a pause of a tenth of a second and more,
which lands on whatever key is being answered. Drawing allocates enough to trigger one every few
keys. So once the app is ready, what it holds by then (its modules, the loaded conversation) is set
aside where the collector does not walk it (``gc.freeze``), and young objects are collected less
often; both are undone when the app ends (tests run many apps in one process, and what an ended
app left must be collectable). A key whose frame allocates a great deal (a new theme restyles and
draws every widget; a dialog is built and drawn over the screen) holds the collector until that
frame is drawn (``collect_after_frame``): its collections come after the frame, not inside it.
"""

from __future__ import annotations

import gc
from typing import Any

from textual.screen import Screen

from mcp_chat_tui.core.collector import resume_collector

YOUNG_OBJECTS = 10_000  # allocations between collections of the youngest generation (Python's default: 700)


FRAME_HOLD_LIMIT = 0.5  # seconds ``collect_after_frame`` holds the collector at most

_thresholds: tuple[int, int, int] | None = None  # Python's own, while settled
_held_for_frame = False  # the collector is off until a frame is drawn (``collect_after_frame``)


def settle() -> None:
    """When the app is ready: set aside every object held now, and collect young objects less often."""
    global _thresholds
    resume_collector()  # paused by the command while the app started (core/collector.py)
    gc.freeze()
    if _thresholds is None:
        _thresholds = gc.get_threshold()
        gc.set_threshold(max(YOUNG_OBJECTS, _thresholds[0]), *_thresholds[1:])


def collect_after_frame(screen: Screen[Any]) -> None:
    """Hold the cycle collector until ``screen``'s next frame is drawn (``FRAME_HOLD_LIMIT`` at most;
    a screen about to be pushed: its first frame): what is allocated until then is collected after it. Memory is still freed by reference counting."""
    global _held_for_frame
    if not gc.isenabled() or _held_for_frame:
        return  # off for start-up (core/collector.py), or held already
    gc.disable()
    _held_for_frame = True
    screen.call_after_refresh(_resume_after_frame)
    screen.app.set_timer(FRAME_HOLD_LIMIT, _resume_after_frame)  # (``screen`` may not be running yet)


def _resume_after_frame() -> None:
    """The frame is drawn: the collection it held off runs now, while the app waits for a key, not
    inside the next key's answer (the first allocation there would start it)."""
    global _held_for_frame
    if _held_for_frame:
        _held_for_frame = False
        gc.enable()
        (young, middle, _), (young_limit, middle_limit, _) = gc.get_count(), gc.get_threshold()
        if young > young_limit:
            gc.collect(1 if middle >= middle_limit else 0)  # the generation Python would collect next


def release() -> None:
    """When the app ends: what ``settle`` set aside is collected as usual again, at Python's usual pace."""
    global _thresholds
    _resume_after_frame()  # a frame that never came (the collection it held runs now)
    resume_collector()  # an app that ends before it is ready
    gc.unfreeze()
    if _thresholds is not None:
        gc.set_threshold(*_thresholds)
        _thresholds = None
