"""How a streaming reply shares the process with a local model: redraws paced by a drawing budget.

Why it exists: docs/architecture.md (the streaming path); the A/B run that kept it: bench/README.md.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

PACE = 0.1  # seconds between updates of a streaming reply's Markdown at the least (10 a second at most)
MAX_PACE = 0.75  # seconds: text waits no longer than this to be shown
MODEL_SLOWDOWN = 0.02  # the share of a local model's speed the redraw budget gives up at most (``drawing_cost``)
MAX_SHARE = 0.25  # of one core: what the app's thread may use over a streaming reply, whatever the model


def drawing_cost(thread_share: float, spare_cores: float) -> float:
    """Seconds of generation a local model loses per second of CPU the app's thread uses.

    Args:
        thread_share: The share of the time the model's thread needs the interpreter.
        spare_cores: Cores the process leaves idle while it generates.
    """
    return thread_share + min(1.0, max(0.0, 1.0 - spare_cores))


def drawing_share(model_cost: float) -> float:
    """The share of a core the app's thread may use while a reply streams, costing the model ``MODEL_SLOWDOWN``.

    Args:
        model_cost: Seconds of generation lost per second of the app's CPU (``drawing_cost``).
    """
    if model_cost * MAX_SHARE <= MODEL_SLOWDOWN:
        return MAX_SHARE
    return MODEL_SLOWDOWN / model_cost


class DrawingBudget:
    """How long a streaming reply's next redraw waits, so the app's thread keeps to its ``drawing_share``.

    Args:
        model_cost: What a second of the app's CPU costs the model now (read at each redraw).
        cpu_clock: The app thread's CPU clock.
        wall_clock: The clock time passes on.
    """

    def __init__(
        self,
        model_cost: Callable[[], float] = lambda: 0.0,
        cpu_clock: Callable[[], float] = time.thread_time,
        wall_clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._model_cost = model_cost
        self._cpu_clock, self._wall_clock = cpu_clock, wall_clock
        self._cpu, self._at = cpu_clock(), wall_clock()
        self.owed = 0.0  # seconds of waiting; negative: credit

    def further_wait(self, since_update: float) -> float:
        """Seconds to wait still, ``since_update`` seconds after the last redraw began."""
        cpu, now = self._cpu_clock(), self._wall_clock()
        share = drawing_share(self._model_cost())
        # Time passing pays off what is owed, down to MAX_PACE of credit; the CPU spent is counted
        # after it. What is owed is kept to MAX_PACE too: a costly moment slows a few redraws only.
        credit_left = max(self.owed - (now - self._at), -MAX_PACE)
        self.owed = min(credit_left + (cpu - self._cpu) / share, MAX_PACE)
        self._cpu, self._at = cpu, now
        return max(0.0, min(self.owed, MAX_PACE - since_update))


def read_outcome(task: asyncio.Future[object]) -> None:
    """Read a finished task's error, so that asyncio does not log it as never retrieved (whoever
    awaited it was cancelled and left it running)."""
    if not task.cancelled():
        task.exception()


class PacedMarkdownStream(MarkdownStream):
    """Textual's Markdown stream, updating at most every ``PACE`` seconds and as its ``DrawingBudget`` allows.

    Args:
        markdown_widget: The widget the text streams into.
        budget: The reply's drawing budget.
    """

    def __init__(self, markdown_widget: Markdown, budget: DrawingBudget) -> None:
        super().__init__(markdown_widget)
        self.budget = budget
        self._show_the_rest = True

    def write_now(self, markdown_fragment: str) -> None:
        """``write`` without handing the loop over: the text is taken in at the next update."""
        if self._stopped:
            raise RuntimeError("Can't write to the stream after it has stopped.")
        if markdown_fragment:
            self._pending.append(markdown_fragment)
            self._new_markup.set()

    async def stop(self, *, show_the_rest: bool = True) -> None:
        """Stop the stream.

        Args:
            show_the_rest: False leaves text not yet taken in out of the widget (about to be replaced).
        """
        self._show_the_rest = show_the_rest
        await super().stop()

    async def _run(self) -> None:
        try:
            while await self._new_markup.wait():
                began = time.monotonic()
                new_markdown = "".join(self._pending)
                self._pending.clear()
                self._new_markup.clear()
                # The update finishes even when the stream is stopped meanwhile (a half-mounted
                # block would be left); its error, if it fails after that (the reply removed), is read.
                update = asyncio.ensure_future(self.markdown_widget.append(new_markdown))
                update.add_done_callback(read_outcome)
                await asyncio.shield(update)
                await asyncio.sleep(PACE)
                # The update's layout and paint happen in the sleep: the budget reads the CPU after it.
                wait = self.budget.further_wait(time.monotonic() - began)
                if wait > 0:
                    await asyncio.sleep(wait)
        except asyncio.CancelledError:
            pass
        new_markdown = "".join(self._pending)
        self._pending.clear()
        if new_markdown and self._show_the_rest:
            await self.markdown_widget.append(new_markdown)
