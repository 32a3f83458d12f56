"""A tool call's clock and its progress.

The timeout counts from the server's last sign of life: the call's start, then each progress
notification of the call (the spec allows progress to reset it), and the end of each request the
server made meanwhile (sampling, a form, a URL): a person's time answering is no call's, nor
their time on the pages another call's "URL elicitation required" (-32042) asked for. Log
messages are not progress and reset nothing. However often a call reports progress it ends at
``MAX_CALL_FACTOR`` times its timeout (the spec asks for such a maximum), a person's time again
not counted; a call run as a task has no such cap (its server's answers to each poll say it is
under way, and the task's ``ttl`` bounds it).

Progress reaches the call's listener (the agent, then the sidebar or ``-p``'s stderr) as the
latest state, at most once a frame; the last one always, before the call's result. A server that
sends 100,000 notifications costs a few redraws.

A clock that runs out is read once more before the call is given up (``still_quiet``): when this
process itself was not running (a loaded machine, a long collection) the server's progress of
that time waits unread in the transport, and is no silence of the server's.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from mcp_chat_tui.core.progress import PROGRESS_MESSAGE_CHARS, ToolProgress
from mcp_chat_tui.core.redact import Redactor

log = logging.getLogger(__name__)

FRAME_SECONDS = 1 / 30  # the least time between two progress updates a listener hears, per call
MAX_CALL_FACTOR = 10  # a call ends at this many times its timeout, however often it reports progress
LAST_LOOK_SECONDS = 0.05  # a run-out clock waits this long for progress already sent to be read

ProgressListener = Callable[[ToolProgress], None]


class ServerLife:
    """One server's time spent waiting on a person: its requests (sampling, forms, URLs) are open."""

    def __init__(self) -> None:
        self._open = 0
        self._since = 0.0
        self._asked = 0.0

    @contextmanager
    def asking(self) -> Iterator[None]:
        """Around a request from the server that may wait on a person."""
        if not self._open:
            self._since = time.monotonic()
        self._open += 1
        try:
            yield
        finally:
            self._open -= 1
            if not self._open:
                self._asked += time.monotonic() - self._since

    def person_seconds(self, now: float) -> float:
        """Seconds spent with at least one request open, up to ``now``."""
        return self._asked + (now - self._since if self._open else 0.0)


class CallClock:
    """How long a call may still go without a sign of life (``seconds_left``)."""

    def __init__(self, limit: float, life: ServerLife, *, capped: bool = True) -> None:
        now = time.monotonic()
        self.limit = limit
        self.life = life
        self.capped = capped
        self.started = self.heard_at = now
        self._person_at_start = self._person_at_heard = life.person_seconds(now)

    def heard(self) -> None:
        """The server said the call is under way (a progress notification)."""
        self.heard_at = time.monotonic()
        self._person_at_heard = self.life.person_seconds(self.heard_at)

    def _spent(self) -> tuple[float, float]:
        """Seconds since the last sign of life, and since the start, a person's time left out."""
        now = time.monotonic()
        person = self.life.person_seconds(now)
        return now - self.heard_at - (person - self._person_at_heard), now - self.started - (
            person - self._person_at_start
        )

    def seconds_left(self) -> float:
        quiet, running = self._spent()
        if not self.capped:
            return self.limit - quiet
        return min(self.limit - quiet, self.limit * MAX_CALL_FACTOR - running)

    def past_its_most(self) -> bool:
        """The call has run the most a call may, however often it reports progress."""
        return self.capped and self._spent()[1] >= self.limit * MAX_CALL_FACTOR

    def out_of_time(self) -> str:
        """Why the call was given up, for its failure."""
        if self.past_its_most():
            return (
                f"gave no result within {self.limit * MAX_CALL_FACTOR:g} s, the most a call may take however often "
                f"it reports progress ({MAX_CALL_FACTOR}× its timeout of {self.limit:g} s)"
            )
        return f"gave no result within {self.limit:g} s, nor any progress"


async def still_quiet(clock: CallClock) -> bool:
    """The clock ran out: first let the transport read what the server sent meanwhile (progress
    that arrived while this process was not running), then say whether the call is still quiet.
    A call past its most is given up at once: progress does not keep it."""
    if clock.past_its_most():
        return True
    heard_at = clock.heard_at
    await asyncio.sleep(LAST_LOOK_SECONDS)
    return clock.heard_at == heard_at


class ProgressRelay:
    """The SDK's progress callback for one call: each notification is a sign of life for the
    call's clock; the listener hears the latest at most once a frame, and the last before the
    call ends (``close``). ``latest`` is the last one, kept on the result."""

    def __init__(self, listener: ProgressListener | None, redactor: Redactor, clock: CallClock) -> None:
        self.listener = listener
        self.redactor = redactor
        self.clock = clock
        self.latest: ToolProgress | None = None
        self._heard: tuple[float, float | None, str | None] | None = None  # the last notification, as sent
        self._told = False  # the listener has heard ``_heard``
        self._told_at = -math.inf
        self._soon: asyncio.TimerHandle | None = None

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.clock.heard()
        self._heard, self._told = (progress, total, message), False
        if self.listener is None or self._soon is not None:
            return
        wait = self._told_at + FRAME_SECONDS - time.monotonic()
        if wait <= 0:
            self._tell()
        else:
            self._soon = asyncio.get_running_loop().call_later(wait, self._tell)

    def _update(self) -> ToolProgress | None:
        if self._heard is None:
            return None
        progress, total, message = self._heard
        self.latest = ToolProgress(progress, total, self.redactor.text(message or "")[:PROGRESS_MESSAGE_CHARS])
        return self.latest

    def _tell(self) -> None:
        self._soon = None
        if self._told or self.listener is None:
            return
        update = self._update()
        self._told, self._told_at = True, time.monotonic()
        if update is not None:
            try:
                self.listener(update)
            except Exception:  # a listener's bug must not take the call down
                log.exception("progress listener failed")

    def close(self) -> None:
        """The call is over: the listener hears the last progress now, if it has not."""
        if self._soon is not None:
            self._soon.cancel()
            self._soon = None
        self._tell()
        self._update()
        self.listener = None
