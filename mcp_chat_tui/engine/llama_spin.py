"""How long llama.cpp's OpenMP threads spin while they wait, chosen from how busy the machine is.

OpenMP reads ``GOMP_SPINCOUNT`` once, when llama_cpp loads it, so the choice is made just before
and holds for the run (docs/cpu.md has the measurements). What counts is the CPU the *other*
processes use: the app's own threads and the processes it started (its MCP servers, which start
beside the model and are idle while it generates) are left out.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict

SHORT_SPIN = "1000"  # GNU OpenMP's spins before a waiting thread sleeps (its default: 300,000)
BUSY_CORES = 0.5  # other processes' CPU use (in cores) above which llama.cpp's threads spin briefly


def others_cpu_use(window: float = 0.2) -> float | None:
    """How many cores' worth of CPU the other processes used over the last ``window`` seconds
    (this process and the processes it started left out), from Linux's ``/proc``; None where there is none."""
    try:
        busy_before, own_before = cpu_seconds()
        time.sleep(window)
        busy_after, own_after = cpu_seconds()
    except (OSError, ValueError, IndexError):
        return None
    return max(0.0, (busy_after - busy_before) - (own_after - own_before)) / window


def cpu_seconds() -> tuple[float, float]:
    """CPU seconds used so far by the whole machine, and by this process with every process it
    started (children, their children, and those of them already ended and waited for)."""
    tick = os.sysconf("SC_CLK_TCK")
    with open("/proc/stat", encoding="ascii") as stat:
        ticks = [int(v) for v in stat.readline().split()[1:9]]
    machine = (sum(ticks) - ticks[3] - ticks[4]) / tick  # all but idle and waiting for the disk
    return machine, own_tree_ticks() / tick


def own_tree_ticks() -> int:
    """Clock ticks of CPU used by this process and its descendants, from each one's ``/proc/PID/stat``."""
    parent_of: dict[int, int] = {}
    used: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()  # after the command name, which may hold spaces
        except OSError:
            continue  # ended meanwhile
        pid = int(entry.name)
        parent_of[pid] = int(fields[1])
        used[pid] = sum(int(v) for v in fields[11:15])  # utime, stime, and the waited-for children's
    children: defaultdict[int, list[int]] = defaultdict(list)
    for pid, parent in parent_of.items():
        children[parent].append(pid)
    total, pending = 0, [os.getpid()]
    while pending:
        pid = pending.pop()
        total += used.get(pid, 0)
        pending.extend(children.get(pid, ()))
    return total


def spin_count(others_busy: float | None) -> str | None:
    """``GOMP_SPINCOUNT`` for llama.cpp's threads, given the other processes' CPU use in cores: on an
    idle machine OpenMP's own long spin (None: fastest, 135M models lose 17% of decode with the
    short one); on a busy machine, or where it cannot be told, the short spin (docs/cpu.md)."""
    if others_busy is not None and others_busy < BUSY_CORES:
        return None
    return SHORT_SPIN
