"""The command line as a user runs it: the real CLI (in this process, tests/cli_in_process.py; a
subprocess where a signal ends it), real servers, real exit codes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests import cli_in_process
from tests.helpers import FIXTURE_SERVER, new_marker, pids_with, wait_until

CLI = [sys.executable, "-m", "mcp_chat_tui.cli.main"]


def run_cli(*args: str, cwd: Path, env_dirs: Path, timeout: float = 90) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    for kind in ("CONFIG", "DATA", "LOG"):
        env[f"MCP_CHAT_TUI_{kind}_DIR"] = str(env_dirs / kind.lower())
    env["COLUMNS"] = "200"
    return cli_in_process.run_cli(args, cwd=cwd, env=env)  # its words and codes: no process needed


def write_mcp_json(path: Path, servers: dict) -> Path:
    path.write_text(json.dumps({"servers": servers}))
    return path


def fixture_entry(label: str, *flags: str) -> dict:
    return {"type": "stdio", "command": sys.executable, "args": [FIXTURE_SERVER, "--label", label, *flags]}


def test_version_and_help(tmp_path, isolated_user_dirs):
    version = run_cli("--version", cwd=tmp_path, env_dirs=isolated_user_dirs)
    assert version.returncode == 0 and version.stdout.startswith("mcp-chat-tui ")
    help_text = run_cli("--help", cwd=tmp_path, env_dirs=isolated_user_dirs)
    assert help_text.returncode == 0
    for option in ("--check-servers", "--mcp-config", "--config", "--demo", "--plain", "--endpoint"):
        assert option in help_text.stdout


def test_check_servers_uses_bundled_demo_by_default(tmp_path, isolated_user_dirs):
    result = run_cli("--check-servers", cwd=tmp_path, env_dirs=isolated_user_dirs)
    assert result.returncode == 0, result.stderr
    assert "bundled default" in result.stdout
    assert "demo" in result.stdout and "ready" in result.stdout and "calculator" in result.stdout


def test_check_servers_prefers_mcp_json_in_the_working_folder(tmp_path, isolated_user_dirs):
    write_mcp_json(tmp_path / "mcp.json", {"local": fixture_entry("local")})
    result = run_cli("--check-servers", "--trust-folder", cwd=tmp_path, env_dirs=isolated_user_dirs)
    assert result.returncode == 0, result.stderr
    assert str(tmp_path / "mcp.json") in result.stdout and "./mcp.json" in result.stdout
    assert "local" in result.stdout and "whoami" in result.stdout


def test_check_servers_exits_non_zero_naming_the_failed_server(tmp_path, isolated_user_dirs):
    config = write_mcp_json(
        tmp_path / "servers.json",
        {"good": fixture_entry("good"), "broken": {"type": "stdio", "command": "no-such-mcp-server-binary"}},
    )
    result = run_cli("--check-servers", "--mcp-config", str(config), cwd=tmp_path, env_dirs=isolated_user_dirs)
    assert result.returncode == 1
    assert "broken" in result.stdout and "failed" in result.stdout
    assert "command not found: 'no-such-mcp-server-binary'" in result.stdout
    assert "1 of 2 servers failed" in result.stdout


BAD_MCP_JSON = {
    "invalid JSON": ('{"servers": {"a": {"command": "x",}}', "line 1, column"),
    "unknown type": ('{"servers": {"a": {"type": "carrier-pigeon", "command": "x"}}}', "servers.a.type"),
    "stdio without command": ('{"servers": {"a": {"type": "stdio"}}}', "servers.a.command"),
    "unknown input": ('{"servers": {"a": {"command": "${input:nope}"}}}', "nope"),
}


@pytest.mark.parametrize("case", sorted(BAD_MCP_JSON))
def test_bad_mcp_json_is_one_clear_message_and_exit_2(case, tmp_path, isolated_user_dirs):
    text, expected = BAD_MCP_JSON[case]
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    result = run_cli("--check-servers", "--mcp-config", str(bad), cwd=tmp_path, env_dirs=isolated_user_dirs)
    assert result.returncode == 2
    assert str(bad) in result.stderr and expected in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert len(result.stderr.strip().splitlines()) <= 3


BAD_CONFIG_TOML = {
    "invalid TOML": ("max_turns = = 3", "line 1"),
    "wrong type": ('max_turns = "three"', "max_turns"),
    "unknown key": ("max_turn = 3", "max_turn"),
    "bad approval": ('approval = "sometimes"', "approval"),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIG_TOML))
def test_bad_config_toml_is_one_clear_message_and_exit_2(case, tmp_path, isolated_user_dirs):
    text, expected = BAD_CONFIG_TOML[case]
    bad = tmp_path / "config.toml"
    bad.write_text(text)
    result = run_cli("--check-servers", "--config", str(bad), cwd=tmp_path, env_dirs=isolated_user_dirs)
    assert result.returncode == 2
    assert str(bad) in result.stderr and expected in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


@pytest.mark.parametrize("signum, exit_code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_to_the_app_leaves_no_server_process(signum, exit_code, tmp_path, isolated_user_dirs):
    marker = new_marker()
    fast = fixture_entry("fast", "--marker", marker, "--say-ready")
    slow = fixture_entry("slow", "--marker", marker, "--startup-delay", "60")
    slow["initTimeout"] = 120
    config = write_mcp_json(tmp_path / "servers.json", {"fast": fast, "slow": slow})
    env = dict(os.environ)
    for kind in ("CONFIG", "DATA", "LOG"):
        env[f"MCP_CHAT_TUI_{kind}_DIR"] = str(isolated_user_dirs / kind.lower())
    app = subprocess.Popen(
        [*CLI, "--check-servers", "--mcp-config", str(config)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until(lambda: len(pids_with(marker)) == 2, 30), "servers did not start"
        fast_log = isolated_user_dirs / "log" / "servers" / "fast.log"
        assert wait_until(lambda: fast_log.exists() and "fixture fast ready" in fast_log.read_text(), 30), (
            "the fast server never finished its handshake"
        )
        app.send_signal(signum)
        app.wait(timeout=30)
    finally:
        if app.poll() is None:
            app.kill()
    assert app.returncode == exit_code, app.stderr.read()
    assert "Traceback" not in app.stderr.read()
    assert wait_until(lambda: not pids_with(marker), 5), f"orphans left: {pids_with(marker)}"
