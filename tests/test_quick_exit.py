"""The command's entry point (``run``) ends the process as soon as ``main`` is done: the exit
handlers run and what was printed is flushed, but the interpreter's teardown of its modules
(about 0.6 s of CPU here, most of the second SIGTERM and Ctrl+C have) is skipped."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROGRAM = """
import atexit, sys
import mcp_chat_tui.cli.main as entry

class Teardown:
    def __del__(self):
        print("module teardown ran", flush=True)

kept_until_teardown = Teardown()

def main():
    atexit.register(lambda: print("exit handler ran", flush=True))
    print("printed without a flush", end="")
    sys.stderr.write("and to stderr\\n")
    {ending}

entry.main = main
entry.run()
"""


def run_entry(ending: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROGRAM.format(ending=ending)], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("ending", "code"),
    [("return 7", 7), ("return 0", 0), ("raise SystemExit(143)", 143), ("raise SystemExit(None)", 0)],
)
def test_run_ends_with_mains_code_after_the_exit_handlers_without_the_teardown(ending, code):
    done = run_entry(ending)
    assert done.returncode == code, done.stderr
    assert done.stdout.startswith("printed without a flush"), done.stdout
    assert "exit handler ran" in done.stdout
    assert "module teardown ran" not in done.stdout
    assert done.stderr == "and to stderr\n"


def test_a_message_to_exit_with_is_printed_as_python_does():
    done = run_entry("raise SystemExit('mcp-chat-tui: a message')")
    assert done.returncode == 1
    assert done.stderr.endswith("a message\n"), done.stderr
    assert "exit handler ran" in done.stdout


def test_main_is_the_script_python_m_runs_too():
    done = subprocess.run(
        [sys.executable, "-m", "mcp_chat_tui.cli.main", "--no-such-option"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "unrecognized arguments: --no-such-option" in done.stderr
