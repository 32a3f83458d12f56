"""Each test's cost, written when ``MCT_TEST_COST`` names a file: its CPU time (the worker's, every
thread, and that of the processes it started and waited for) and its wall time, from setup to teardown.
``scripts/slow_tests.py`` reads it to choose the tests ``pytest -m "not slow"`` leaves out. CPU is the
figure that counts on this two-core machine: it is what a test takes from the others running beside it,
and a loaded machine stretches it far less than wall time."""

from __future__ import annotations

import os
import resource
import time

import pytest


def cpu_seconds() -> float:
    """This process's CPU time and that of the children it has waited for."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    target = os.environ.get("MCT_TEST_COST")
    if not target:
        yield
        return
    cpu, wall = cpu_seconds(), time.monotonic()
    yield
    test = item.nodeid.split("@", 1)[0]  # without the "@group" xdist's loadgroup adds after collection
    line = f"{test}\t{cpu_seconds() - cpu:.3f}\t{time.monotonic() - wall:.3f}\n"
    with open(f"{target}.{os.getpid()}", "a", encoding="utf-8") as report:  # one file a worker
        report.write(line)
