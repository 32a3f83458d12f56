"""The plain console mode as a user runs it: the real CLI, the demo model, the demo server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mcp_chat_tui.demo import try_asking_line
from mcp_chat_tui.transcript import parse, read_transcript_text
from tests import cli_in_process
from tests.helpers import mentions, pids_running_in, wait_until


def environment(dirs: Path) -> dict[str, str]:
    env = dict(os.environ, COLUMNS="120")
    for kind in ("CONFIG", "DATA", "LOG"):
        env[f"MCP_CHAT_TUI_{kind}_DIR"] = str(dirs / kind.lower())
    return env


def run_cli(*args: str, dirs: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    """The CLI in this process (tests/cli_in_process.py): these tests are about its words, codes and
    files and the servers it leaves, not about its own process; stdin is a pipe, never a terminal."""
    return cli_in_process.run_cli(args, cwd=Path.cwd(), env=environment(dirs), stdin=stdin)


def demo_servers_in(folder: Path) -> Path:
    """An mcp.json whose demo server runs in ``folder``, so the test can find it in the process table."""
    config = folder / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "servers": {
                    "demo": {"command": sys.executable, "args": ["-m", "mcp_chat_tui.demo.server"], "cwd": str(folder)}
                }
            }
        )
    )
    return config


def test_one_prompt_with_yes_runs_the_tool_prints_the_call_and_saves_the_conversation(tmp_path, isolated_user_dirs):
    config = demo_servers_in(tmp_path)
    result = run_cli("--demo", "--mcp-config", str(config), "-p", "what is 12 * 7?", "--yes", dirs=isolated_user_dirs)
    assert result.returncode == 0, result.stderr
    err = result.stderr  # -p keeps stdout for the answer
    assert "calculator" in err and '"expression": "12 * 7"' in err and "12 * 7 = 84" in err
    assert "✓ calculator done" in err
    assert mentions(result.stdout, "84"), result.stdout
    [saved] = (isolated_user_dirs / "data" / "conversations").glob("*.md")
    transcript = parse(read_transcript_text(saved))
    assert transcript.exchanges[0].user == "what is 12 * 7?"
    assert transcript.exchanges[0].steps[0].proposals[0].choice == "auto"
    assert not pids_running_in(tmp_path)


def test_the_prompt_loop_answers_and_bye_leaves_with_no_server_left(tmp_path, isolated_user_dirs):
    config = demo_servers_in(tmp_path)
    result = run_cli(
        "--demo",
        "--plain",
        "--yes",
        "--mcp-config",
        str(config),
        dirs=isolated_user_dirs,
        stdin="what is 12 * 7?\nbye\n",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("demo model · 6 tools from 1 server · type bye or quit to leave")
    assert try_asking_line() in " ".join(result.stdout.split())  # what the demo model can be asked
    assert result.stdout.count("prompt -> ") == 2
    assert "12 * 7 = 84" in result.stdout
    assert wait_until(lambda: not pids_running_in(tmp_path), 5)


def test_without_a_terminal_calls_are_denied_unless_yes(tmp_path, isolated_user_dirs):
    config = demo_servers_in(tmp_path)
    result = run_cli("--demo", "--mcp-config", str(config), "-p", "what is 12 * 7?", dirs=isolated_user_dirs)
    assert result.returncode == 3, result.stderr  # a denied call: the answer may be incomplete
    assert "no terminal to ask: call denied (use --yes to allow calls)" in result.stderr
    assert "⊘ calculator denied" in result.stderr
