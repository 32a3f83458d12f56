"""tests/cli_in_process.py's run of the CLI connects the demo server its ``mcp.json`` names in memory,
and only a demo server that a process would run as this one would (same interpreter, folder and
environment): what the CLI says of it is the same either way."""

from __future__ import annotations

import os
import sys

import pytest

from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.servers import hub
from tests import cli_in_process
from tests.cli_in_process import DEMO_SERVER_ARGS, runs_as_a_process_would, servers_in_memory


@pytest.mark.parametrize("in_memory", [True, False], ids=["in-memory", "process"])
def test_the_demo_server_of_an_mcp_json_is_connected_in_memory(tmp_path, isolated_user_dirs, monkeypatch, in_memory):
    spawned = []
    stdio_transport = hub.stdio_transport

    def spawn(config, *args):
        spawned.append(config.name)
        return stdio_transport(config, *args)

    monkeypatch.setattr(hub, "stdio_transport", spawn)
    env = {**os.environ, "COLUMNS": "200"}
    done = cli_in_process.run_cli(["--demo", "--check-servers"], cwd=tmp_path, env=env, in_memory=in_memory)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "demo" in done.stdout and "ready" in done.stdout, done.stdout
    assert spawned == ([] if in_memory else ["demo"])


def test_only_a_demo_server_run_as_a_process_would_run_it_is_taken(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def demo(**overrides: object) -> ServerConfig:
        fields: dict = {"name": "demo", "type": "stdio", "command": sys.executable, "args": DEMO_SERVER_ARGS}
        return ServerConfig(**(fields | overrides))

    assert runs_as_a_process_would(demo())
    assert runs_as_a_process_would(demo(cwd=tmp_path))
    assert not runs_as_a_process_would(demo(cwd=tmp_path / "elsewhere"))
    assert not runs_as_a_process_would(demo(env={"MCP_CHAT_TUI_DEMO_NOW": "2026-01-01T00:00:00"}))
    assert not runs_as_a_process_would(demo(command="python3"))
    assert not runs_as_a_process_would(demo(args=[*DEMO_SERVER_ARGS, "--other"]))


def test_a_tests_own_server_is_taken_only_inside_its_servers_in_memory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = str(tmp_path / "server.py")
    config = ServerConfig(name="own", type="stdio", command=sys.executable, args=[script])
    assert not runs_as_a_process_would(config)
    with servers_in_memory({(script,): lambda: None}):
        assert runs_as_a_process_would(config)
        assert runs_as_a_process_would(config.model_copy(update={"args": DEMO_SERVER_ARGS}))
    assert not runs_as_a_process_would(config)
