"""How long llama.cpp's threads spin while they wait, chosen from how busy the machine is (no llama.cpp needed)."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time

import pytest


def cpu_ticks(pid: int) -> int:
    """The clock ticks of CPU process ``pid`` has used (user and system)."""
    with open(f"/proc/{pid}/stat", "rb") as stat:
        fields = stat.read().rsplit(b")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def wait_for_cpu(pid: int, since: int, ticks: int) -> None:
    """Wait until process ``pid`` has used ``ticks`` more clock ticks of CPU than ``since``."""
    deadline = time.monotonic() + 60
    while cpu_ticks(pid) - since < ticks:
        assert time.monotonic() < deadline, f"process {pid} got no CPU for a minute"
        time.sleep(0.02)


@pytest.fixture
def busy_process():
    """Another process (not one the app started: its parent has ended) using a whole core while the test runs."""
    spinner = f"{shlex.quote(sys.executable)} -c 'while True: pass' >/dev/null 2>&1 & echo $!"
    pid = int(subprocess.run(["sh", "-c", spinner], capture_output=True, text=True, check=True).stdout)
    try:
        wait_for_cpu(pid, 0, 10)
        yield pid
    finally:
        os.kill(pid, signal.SIGKILL)


@pytest.fixture
def busy_grandchild():
    """A process the app started, which started another one using a whole core (as ``npx`` starts node)."""
    code = (
        "import subprocess, sys\n"
        "spinner = subprocess.Popen([sys.executable, '-c', 'while True: pass'])\n"
        "print(spinner.pid, flush=True)\n"
        "spinner.wait()\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    pid = int(child.stdout.readline())
    try:
        yield pid
    finally:
        os.kill(pid, signal.SIGKILL)
        child.wait(timeout=30)


def test_the_other_processes_cpu_use_is_measured_without_the_apps_own(busy_process):
    """A process spinning beside the app counts; the app's own work does not."""
    from mcp_chat_tui.engine.llama_spin import others_cpu_use

    assert others_cpu_use(0.5) >= 0.5


def test_the_processes_the_app_started_count_as_its_own(busy_grandchild):
    """The app starts its MCP servers beside the model, and a server may start others: their CPU is
    the app's own, not other processes' load (it ends when they are up, and they idle while the model
    generates), so a quiet machine keeps the long spin while its servers start."""
    from mcp_chat_tui.engine.llama_spin import own_tree_ticks

    own_before, spinner_before = own_tree_ticks(), cpu_ticks(busy_grandchild)
    wait_for_cpu(busy_grandchild, spinner_before, 30)
    spinner_after = cpu_ticks(busy_grandchild)
    own_after = own_tree_ticks()
    assert own_after - own_before >= spinner_after - spinner_before >= 30


def test_an_idle_machine_keeps_openmps_long_spin_and_a_busy_or_unknown_one_gets_the_short_one():
    from mcp_chat_tui.engine.llama_spin import SHORT_SPIN, spin_count

    assert spin_count(0.1) is None
    assert spin_count(1.5) == SHORT_SPIN
    assert spin_count(None) == SHORT_SPIN
