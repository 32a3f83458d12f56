"""How busy generating keeps the process: the MLX thread's share of the time and the cores it leaves idle."""

from __future__ import annotations

import os
import time

LOAD_WINDOW = 0.25  # seconds of generation over which the thread's load is measured


class ThreadLoad:
    """How busy generating keeps this process, over the last ``LOAD_WINDOW`` of generation.
    Read from any thread; the MLX thread samples it every few tokens.

    ``share``, from 0 to 1: the part of the time the MLX thread spent running. While it runs
    Python (building the next step, sampling, decoding text) it holds the interpreter, and the
    app's thread cannot draw; while MLX computes (on a GPU or on its own worker threads) the
    interpreter is free. A small model on a CPU keeps the thread busy most of the time, a large
    one on a GPU hardly at all.

    ``spare_cores``: how many of the cores the process may run on it left idle meanwhile (all
    its threads: the MLX thread, MLX's worker threads, and the little the app's thread used).
    With less than one to spare, the app's thread runs on a core the model would have used.

    The chat uses both to decide how often it may redraw
    (``mcp_chat_tui.ui.widgets.chat.drawing_cost``). The last figures are kept between replies:
    the next reply on the same model starts from them."""

    def __init__(self, cpu_clock=time.thread_time, process_clock=time.process_time) -> None:
        self._cpu_clock, self._process_clock = cpu_clock, process_clock
        self._cpu = self._process = self._wall = 0.0
        self.share = 1.0  # until measured: as busy as can be
        self.spare_cores = 0.0
        self._cores = available_cores()

    def start(self, now: float) -> None:
        """On the MLX thread, when the reply's first token is out (prefill is not generation)."""
        self._cpu, self._process, self._wall = self._cpu_clock(), self._process_clock(), now

    def sample(self, now: float) -> None:
        """On the MLX thread, every few tokens; updates the figures once a window has passed."""
        elapsed = now - self._wall
        if elapsed >= LOAD_WINDOW:
            cpu, process = self._cpu_clock(), self._process_clock()
            self.share = min(1.0, max(0.0, (cpu - self._cpu) / elapsed))
            self.spare_cores = max(0.0, self._cores - (process - self._process) / elapsed)
            self._cpu, self._process, self._wall = cpu, process, now


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1
