"""Carry items from a worker thread to the asyncio loop, waking the loop once per batch."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any


class ThreadChannel:
    """``put`` from any thread; ``await get()`` on the loop returns everything put since the last get.

    A producer adding many items quickly (one per token) wakes the loop once until the
    consumer has taken them, and with ``min_interval`` at most once per that many seconds
    unless an item is urgent (the first text, the end): fewer thread switches per token,
    while the screen still updates faster than the eye can follow.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, min_interval: float = 0.0) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._items: list[Any] = []
        self._wake_pending = False
        self._waiter: asyncio.Future[None] | None = None
        self._min_interval = min_interval
        self._last_wake = 0.0

    def put(self, items: list[Any], urgent: bool = True) -> None:
        """Add items (any thread); a non-urgent put may wait for a later put to wake the loop."""
        with self._lock:
            self._items.extend(items)
            if self._wake_pending:
                return
            if not urgent and self._min_interval:
                now = time.monotonic()
                if now - self._last_wake < self._min_interval:
                    return
                self._last_wake = now
            else:
                self._last_wake = time.monotonic()
            self._wake_pending = True
        try:
            self._loop.call_soon_threadsafe(self._wake)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            pass

    def _wake(self) -> None:
        with self._lock:
            self._wake_pending = False
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def get(self) -> list[Any]:
        """Everything put since the last call; waits while there is nothing."""
        while True:
            with self._lock:
                if self._items:
                    items, self._items = self._items, []
                    return items
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
