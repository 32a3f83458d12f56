"""How long a server may take to start: the init timeout counts from its last sign of life.

``npx -y …`` and ``uvx …`` download the server on their first run (a minute is common), and a
loaded machine makes a slow import slower still, so a fixed limit from the spawn fails servers that
are working. A start is given up only once its server has been silent and idle for the init
timeout: no line on stderr and (where the process table can be read, Linux's ``/proc``) no CPU
used by its process group in that time; for a server at a url, no HTTP answer. A person's time in
the browser (signing in) is no server's either. However lively, a start ends at
``MAX_START_FACTOR`` times its timeout. A process found to have exited at the timeout did not hang:
its start fails naming its exit code.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

MAX_START_FACTOR = 30  # a start ends at this many times its init timeout, however lively
BUSY_SHARE = 0.02  # CPU seconds per second of the timeout that count as working (a waiting process uses ~0)
EXIT_WAIT_SECONDS = 0.5  # for the exit code of a server that closed its connection while starting
PROC = Path("/proc")


def group_cpu_seconds(pgid: int) -> float | None:
    """CPU seconds used by the live processes of group ``pgid`` (None: not readable here)."""
    if not PROC.is_dir():
        return None
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0
    for entry in os.scandir(PROC):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        fields = stat[stat.rfind(")") + 2 :].split()  # after the command name, which may hold spaces
        if len(fields) > 12 and fields[2] == str(pgid):  # pgrp; utime and stime are fields 11 and 12
            total += int(fields[11]) + int(fields[12])
    return total / ticks


class StartLife:
    """One start's signs of life: a line on stderr (``heard``) and CPU used by its process group."""

    def __init__(self) -> None:
        self.began = self.heard_at = time.monotonic()
        self.pgid: int | None = None
        self.process: Any = None  # the server's process (stdio), for its exit code
        self._cpu_checked = 0.0

    def spawned(self, process: Any) -> None:
        self.process = process
        self.pgid = process.pid  # a server starts a session of its own: its pid is its group's id

    def heard(self) -> None:
        self.heard_at = time.monotonic()

    def working(self, window: float) -> bool:
        """Whether the group used CPU since the last check (worth ``BUSY_SHARE`` of ``window``)."""
        if self.pgid is None:
            return False
        used = group_cpu_seconds(self.pgid)
        if used is None:
            return False
        busy = used - self._cpu_checked >= BUSY_SHARE * window
        self._cpu_checked = used
        return busy

    async def exited(self) -> int | None:
        """The code the process exited with (None: not a process, or still running after a moment)."""
        if self.process is None:
            return None
        try:
            return int(await asyncio.wait_for(self.process.wait(), EXIT_WAIT_SECONDS))
        except (TimeoutError, OSError, RuntimeError):
            return None


async def wait_for_start(settled: asyncio.Event, limit: float, life: StartLife, person: Any) -> None:
    """Wait until the start settles; raises ``TimeoutError`` once the server has been silent and idle
    for ``limit`` seconds not spent by a person in the browser (``person``: the start's
    ``PersonClock``), or has been starting for ``MAX_START_FACTOR`` times ``limit``."""
    while True:
        now = time.monotonic()
        if person.waiting:
            life.heard()
        since = max(life.heard_at, person.done_at or 0.0)
        quiet_left = limit - (now - since)
        cap_left = limit * MAX_START_FACTOR - (now - life.began)
        if cap_left <= 0 and not person.waiting:
            raise TimeoutError
        if quiet_left <= 0:
            if not life.working(now - since):
                raise TimeoutError
            life.heard()
            continue
        try:
            wait = quiet_left if person.waiting else min(quiet_left, max(cap_left, 0.05))
            await asyncio.wait_for(asyncio.shield(settled.wait()), wait)
            return
        except TimeoutError:
            continue


def silent_reason(limit: float, life: StartLife, stderr_tail: list[str]) -> str:
    """Why a start was given up at its timeout, saying what was seen."""
    elapsed = time.monotonic() - life.began
    last = next((line for line in reversed(stderr_tail) if line.strip()), "")
    if elapsed >= limit * MAX_START_FACTOR:
        what = f"still starting after {elapsed:.0f} s, the most a start may take ({MAX_START_FACTOR}× initTimeout)"
    elif last:
        what = (
            f"no answer to initialize within {limit:g} s of its last output or CPU use "
            f"(after {elapsed:.0f} s starting; the server hung)"
        )
    elif life.pgid is None:  # a server at an address: no process of ours to watch, nor its stderr
        return (
            f"no answer to initialize within {limit:g} s (check that the server is up and speaks MCP "
            "at its url; raise `initTimeout` if it is slow)"
        )
    else:
        return (
            f"no answer to initialize within {limit:g} s, and no output at all nor CPU use "
            "(the server hung; check that it speaks MCP on stdio; raise `initTimeout` if it is slow)"
        )
    return f"{what}; its stderr ended with: {last}" if last else what
