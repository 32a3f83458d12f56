"""Large results reuse the heap while a turn runs, and the memory goes back to the system after it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mcp_chat_tui.core.memory import _glibc

pytestmark = pytest.mark.skipif(_glibc() is None, reason="the heap settings are glibc's")

MEASURE = """
import resource, sys
from mcp_chat_tui.core.memory import keep_freed_memory, give_back_memory
if sys.argv[1] == "kept":
    assert keep_freed_memory()
def faults_of_a_large_buffer():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    buffer = bytearray(80_000_000)  # zeroed: every page touched
    del buffer
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
faults_of_a_large_buffer()
again = faults_of_a_large_buffer()
def resident():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()
kept = resident()
give_back_memory()
print(again, kept, resident())
"""


def measure(mode: str) -> tuple[int, int, int]:
    done = subprocess.run([sys.executable, "-c", MEASURE, mode], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    again, kept, after = map(int, done.stdout.split())
    return again, kept, after


def test_a_second_large_buffer_is_served_from_memory_already_in_use():
    """By default glibc maps an 80 MB buffer afresh each time (about 20,000 page faults); kept, the
    second one takes the first one's pages."""
    default_faults, _, _ = measure("default")
    kept_faults, _, _ = measure("kept")
    assert default_faults > 15_000
    assert kept_faults < 1_000


def test_the_kept_memory_is_given_back_when_the_turn_ends():
    _, kept, after = measure("kept")
    assert kept - after > 60_000_000
