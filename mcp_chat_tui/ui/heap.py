"""Python's cycle collector, kept from pausing the screen for long (issue 33).

A full collection walks every object the process holds: with a 500-exchange conversation and
1,000 calls in the sidebar that is over 200,000 objects, a pause of a tenth of a second and more,
which lands on whatever key is being answered. Drawing allocates enough to trigger one every few
keys. So once the app is ready, what it holds by then (its modules, the loaded conversation) is set
aside where the collector does not walk it (``gc.freeze``), and young objects are collected less
often; both are undone when the app ends (tests run many apps in one process, and what an ended
app left must be collectable).
"""

from __future__ import annotations

import gc

from mcp_chat_tui.core.collector import resume_collector

YOUNG_OBJECTS = 10_000  # allocations between collections of the youngest generation (Python's default: 700)


_thresholds: tuple[int, int, int] | None = None  # Python's own, while settled


def settle() -> None:
    """When the app is ready: set aside every object held now, and collect young objects less often."""
    global _thresholds
    resume_collector()  # paused by the command while the app started (core/collector.py)
    gc.freeze()
    if _thresholds is None:
        _thresholds = gc.get_threshold()
        gc.set_threshold(max(YOUNG_OBJECTS, _thresholds[0]), *_thresholds[1:])


def release() -> None:
    """When the app ends: what ``settle`` set aside is collected as usual again, at Python's usual pace."""
    global _thresholds
    resume_collector()  # an app that ends before it is ready
    gc.unfreeze()
    if _thresholds is not None:
        gc.set_threshold(*_thresholds)
        _thresholds = None
