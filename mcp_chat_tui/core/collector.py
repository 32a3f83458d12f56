"""Python's cycle collector paused while the app, ``--plain`` or ``-p`` starts (issues 32 and 33).

Start-up builds what lives as long as the process: the modules and classes of the app, Textual,
the MCP SDK, mlx-lm and transformers, about 300,000 objects in one interpreter. The collector
walked them again and again as they piled up (about 530 collections before ready, a tenth of the
CPU start-up spends: bench/README.md), on the one interpreter the first frame and ready wait
for. So the command pauses it from its first line until the app is ready or ends
(``ui/heap.py``), at most ``START_UP_LIMIT_SECONDS`` (a model downloading, a server slow to
start); memory is still freed by reference counting meanwhile, and the few objects start-up
leaves in cycles (8,000 of 310,000, measured) are set aside with the rest when the app is ready.
The other modes but ``--search`` (``-p``, ``--plain``, sign-in, the checks) import the SDK as they
start, a tenth of their CPU spent in the collector too: they resume it when their start is over
(``cli/chat.py``) or after ``START_UP_LIMIT_SECONDS`` (``resume_collector_later``).
"""

from __future__ import annotations

import gc
import threading

START_UP_LIMIT_SECONDS = 10.0  # the longest the collector stays paused while the app starts

_paused = False  # paused here, and not resumed yet
_limit: threading.Timer | None = None  # resume_collector_later's, until the collector is resumed


def pause_collector() -> None:
    """Pause the cycle collector for the start (a collector already off is left to its owner)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_collector() -> None:
    """Resume it if ``pause_collector`` paused it (and cancel the limit's timer); any later call does
    nothing."""
    global _paused, _limit
    if _limit is not None:
        _limit.cancel()  # not left to resume a later pause
        _limit = None
    if _paused:
        _paused = False
        gc.enable()


def resume_collector_later(seconds: float = START_UP_LIMIT_SECONDS) -> None:
    """Resume it after ``seconds`` at the latest (for a mode whose start may wait on a download, a
    server or a person), on a daemon timer that an earlier ``resume_collector`` cancels."""
    global _limit
    if _paused and _limit is None:
        _limit = threading.Timer(seconds, resume_collector)
        _limit.name, _limit.daemon = "collector-limit", True
        _limit.start()
