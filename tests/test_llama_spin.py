"""How long llama.cpp's threads spin while they wait, chosen from how busy the machine is (no llama.cpp needed)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest


@pytest.fixture
def busy_process():
    """Another process using a whole core while the test runs."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    time.sleep(0.3)
    yield spinner
    spinner.kill()
    spinner.wait()


def test_the_other_processes_cpu_use_is_measured_without_the_apps_own(busy_process):
    """A process spinning beside the app counts; the app's own work does not."""
    from mcp_chat_tui.engine.llama_engine import others_cpu_use

    assert others_cpu_use(0.5) >= 0.5


def test_an_idle_machine_keeps_openmps_long_spin_and_a_busy_or_unknown_one_gets_the_short_one():
    from mcp_chat_tui.engine.llama_engine import SHORT_SPIN, spin_count

    assert spin_count(0.1) is None
    assert spin_count(1.5) == SHORT_SPIN
    assert spin_count(None) == SHORT_SPIN
