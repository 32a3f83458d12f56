"""The one thread that runs MLX for every engine in the process.

All MLX work (loading, prefill, decoding, freeing) happens here, one job at a time. The
thread never ends: MLX keeps per-thread state whose destructors abort the process if they
run while the process exits, so the thread stays alive (a daemon, idle at exit). At
interpreter exit every running generation is told to stop and we wait until the thread
is out of MLX.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import logging
import queue
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

EXIT_WAIT = 5.0  # seconds the interpreter waits at exit for the current token to finish

log = logging.getLogger(__name__)


class MlxThread:
    """A daemon thread running submitted jobs in order."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.busy = False
        self.stop_events: weakref.WeakSet[Any] = weakref.WeakSet()  # objects with a .set() to call at exit

    def submit(self, job: Callable[[], None]) -> None:
        """Run ``job`` on the MLX thread after the jobs before it."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="mlx", daemon=True)
                self._thread.start()
        self._jobs.put(job)

    def call(self, fn: Callable[[], Any]) -> concurrent.futures.Future:
        """Run ``fn`` on the MLX thread; the future holds its result or exception."""
        future: concurrent.futures.Future = concurrent.futures.Future()

        def job() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn())
            except BaseException as exc:
                future.set_exception(exc)

        self.submit(job)
        return future

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            self.busy = True
            try:
                job()
            except BaseException:  # jobs report their own errors; this is a last resort
                log.exception("an MLX job failed")
            finally:
                self.busy = False

    def stop_all_and_wait(self, timeout: float) -> None:
        """Tell every generation to stop and wait (up to ``timeout``) until the thread is idle."""
        for event in list(self.stop_events):
            event.set()
        deadline = time.monotonic() + timeout
        while self.busy and time.monotonic() < deadline:
            time.sleep(0.005)


MLX_THREAD = MlxThread()


@atexit.register
def _quiet_mlx_at_exit() -> None:
    MLX_THREAD.stop_all_and_wait(EXIT_WAIT)
