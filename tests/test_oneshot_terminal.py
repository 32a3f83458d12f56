"""``-p`` on a terminal: the answer on stdout is text from a model, so its control characters are
written out as escapes (``\\x1b``) when stdout is a terminal, as everything on stderr already is; in a
pipe the answer is written as it is, for the program reading it. The real CLI, stdout a real
pseudo-terminal (``os.openpty``), a scripted endpoint whose answer holds escape sequences."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time

from tests.scripted_endpoint import ScriptedEndpoint
from tests.test_oneshot import CLI, demo_servers

HOSTILE = "Done.\x1b]0;pwned\x07 \x1b[2J\x1b[31mred\x9b31m tab\there"


def run_on_terminal(argv: list[str], cwd, env) -> tuple[int, bytes, str]:
    """Run ``argv`` with stdout a pseudo-terminal; its exit code, what reached the terminal, and stderr."""
    controller, terminal = os.openpty()
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=terminal, stderr=subprocess.PIPE
    )
    os.close(terminal)
    shown = bytearray()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.2)
        if ready:
            try:
                data = os.read(controller, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            shown += data
        elif process.poll() is not None:
            break
    os.close(controller)
    stderr = process.stderr.read().decode("utf-8", "replace") if process.stderr else ""
    return process.wait(10), bytes(shown), stderr


def cli_env(dirs) -> dict[str, str]:
    env = dict(os.environ, COLUMNS="120")
    for kind in ("CONFIG", "DATA", "LOG"):
        env[f"MCP_CHAT_TUI_{kind}_DIR"] = str(dirs / kind.lower())
    return env


def test_p_escapes_control_characters_of_the_answer_on_a_terminal_and_not_in_a_pipe(tmp_path, isolated_user_dirs):
    base = [*CLI, "--mcp-config", str(demo_servers(tmp_path)), "--no-save"]
    with ScriptedEndpoint([HOSTILE, HOSTILE, HOSTILE]) as endpoint:
        argv = [*base, "--endpoint", endpoint.url, "scripted", "-p", "hi"]
        code, shown, stderr = run_on_terminal(argv, tmp_path, cli_env(isolated_user_dirs))
        piped = subprocess.run(
            argv, cwd=tmp_path, env=cli_env(isolated_user_dirs), capture_output=True, stdin=subprocess.DEVNULL
        )
        as_json, json_shown, _ = run_on_terminal([*argv, "--json"], tmp_path, cli_env(isolated_user_dirs))
    assert code == 0, stderr
    text = shown.decode("utf-8")
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text, repr(text)
    assert r"Done.\x1b]0;pwned\x07 \x1b[2J\x1b[31mred\x9b31m" in text and "tab\there" in text
    assert piped.returncode == 0 and piped.stdout.decode("utf-8") == HOSTILE + "\n"  # a pipe gets the answer as it is
    assert as_json == 0
    printed = json_shown.decode("utf-8")
    assert "\x1b" not in printed and "\x9b" not in printed, repr(printed)
    assert json.loads(printed)["answer"] == HOSTILE  # still the answer, as JSON writes it
