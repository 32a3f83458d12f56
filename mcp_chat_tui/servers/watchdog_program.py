"""The server watchdog: ends the process groups of the app's stdio servers once the app is gone.

A separate process, started by ``servers/watchdog.py`` as ``python -I -S watchdog_program.py FD``
in a session of its own (a Ctrl+C or hang-up meant for the app never reaches it). FD is the read
end of a pipe whose only write end the app holds, so end of file means the app has exited, however
it ended: the kernel closes a process's files even after SIGKILL. The app writes a line per change:

    +PGID   a server was started in process group PGID: watch it
    -PGID   the app stopped that server: end whatever is left of its group (its children), forget it

At end of file every watched group gets what the app would have given it: its stdin is already
closed (the app held the other end), then ``EXIT_GRACE`` seconds, SIGTERM to the group,
``KILL_GRACE`` seconds, SIGKILL to the group. Then the watchdog exits. Standard library only.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

EXIT_GRACE = 0.5  # seconds for a server to exit on its own once its stdin is closed
KILL_GRACE = 1.0  # seconds after SIGTERM before SIGKILL
POLL_SECONDS = 0.02  # how often a group being ended is checked


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is left; only ESRCH proves it is gone."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


class Groups:
    """The groups watched, and those being ended with the time of each signal still to send."""

    def __init__(self) -> None:
        self.watched: set[int] = set()
        self.ending: dict[int, list[tuple[float, int]]] = {}

    def handle(self, line: bytes) -> None:
        """One line from the app: ``+PGID`` or ``-PGID``; anything else is ignored."""
        text = line.strip().decode("ascii", "replace")
        if len(text) < 2 or text[0] not in "+-" or not text[1:].isdigit():
            return
        pgid = int(text[1:])
        if pgid <= 1 or pgid == os.getpgid(0):
            return
        if text[0] == "+":
            self.watched.add(pgid)
        else:
            self.watched.discard(pgid)
            now = time.monotonic()
            self.ending[pgid] = [(now, signal.SIGTERM), (now + KILL_GRACE, signal.SIGKILL)]

    def app_gone(self) -> None:
        start = time.monotonic() + EXIT_GRACE
        for pgid in self.watched:
            self.ending[pgid] = [(start, signal.SIGTERM), (start + KILL_GRACE, signal.SIGKILL)]
        self.watched.clear()

    def step(self) -> None:
        """Send the signals that are due; forget groups that are gone or got SIGKILL."""
        now = time.monotonic()
        for pgid, steps in list(self.ending.items()):
            while steps and steps[0][0] <= now and group_alive(pgid):
                signal_group(pgid, steps.pop(0)[1])
            if not steps or not group_alive(pgid):
                del self.ending[pgid]


def run(read_fd: int) -> None:
    groups = Groups()
    pending = b""
    app_alive = True
    while app_alive or groups.ending:
        timeout = POLL_SECONDS if groups.ending else None
        if app_alive and select.select([read_fd], [], [], timeout)[0]:
            data = os.read(read_fd, 4096)
            if not data:
                app_alive = False
                groups.app_gone()
            *lines, pending = (pending + data).split(b"\n")
            for line in lines:
                groups.handle(line)
        elif not app_alive:
            time.sleep(POLL_SECONDS)
        groups.step()


def main() -> None:
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    run(int(sys.argv[1]))


if __name__ == "__main__":
    main()
