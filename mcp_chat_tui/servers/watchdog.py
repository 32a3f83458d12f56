"""No stdio server outlives the app: a watchdog process ends their process groups when the app is gone.

The SDK starts each server in a process group of its own and, when the app stops it, closes its
stdin, then signals the whole group. That needs the app alive: after SIGKILL (or a crash) the
servers, and the children they started, would run on. So the app starts one small watchdog
(``watchdog_program.py``) and tells it each server's group; the watchdog notices the app's end as
end of file on a pipe and ends those groups. See docs/server-processes.md for why this and not a
parent-death signal.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

log = logging.getLogger(__name__)

WATCHDOG_PROGRAM = Path(__file__).with_name("watchdog_program.py")


class ServerWatchdog:
    """The app's side of the watchdog: started on first use, started again if it died."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._write_fd: int | None = None
        self._lock = threading.Lock()
        self._failed_to_start = False
        self.watched_groups: set[int] = set()

    @property
    def pid(self) -> int | None:
        """The watchdog's process id while it runs."""
        return self._process.pid if self._process is not None and self._process.poll() is None else None

    def watch(self, pgid: int) -> None:
        """A server now runs in process group ``pgid``: end that group if the app ends first."""
        with self._lock:
            self.watched_groups.add(pgid)
            self._send(f"+{pgid}")

    def release(self, pgid: int) -> None:
        """The app stopped the server of group ``pgid``: whatever is left of the group (its
        children, which the SDK leaves when the server itself exited in time) is ended now."""
        with self._lock:
            self.watched_groups.discard(pgid)
            self._send(f"-{pgid}")

    def _send(self, line: str) -> None:
        for _attempt in range(2):  # once more with a new watchdog if this one died
            write_fd = self._write_fd
            fresh = write_fd is None
            if write_fd is None:
                write_fd = self._start()
                if write_fd is None:
                    return
            replay = "".join(f"+{pgid}\n" for pgid in self.watched_groups) if fresh else ""
            try:
                os.write(write_fd, f"{replay}{line}\n".encode())
                return
            except OSError:
                self._forget_process()

    def _start(self) -> int | None:
        """Start the watchdog.

        Returns:
            The write end of its pipe, or None if it cannot run here.
        """
        if self._failed_to_start or sys.platform == "win32":  # Windows: the SDK's job objects do this
            return None
        read_fd, write_fd = os.pipe()  # not inherited by servers (PEP 446): only the app holds write_fd
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", str(WATCHDOG_PROGRAM), str(read_fd), "--app-pid", str(os.getpid())],
                pass_fds=(read_fd,),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                cwd="/",
            )
        except (OSError, ValueError) as exc:
            os.close(write_fd)
            self._failed_to_start = True
            log.warning("cannot start the server watchdog (%s): servers may outlive the app if it is killed", exc)
            return None
        finally:
            os.close(read_fd)
        self._write_fd = write_fd
        return write_fd

    def _forget_process(self) -> None:
        if self._write_fd is not None:
            os.close(self._write_fd)
            self._write_fd = None
        if self._process is not None:
            self._process.poll()  # reap it
            self._process = None


_watchdog = ServerWatchdog()


def server_watchdog() -> ServerWatchdog:
    """The one watchdog of this process (it outlives every hub: it must see the process end)."""
    return _watchdog
