"""Starting servers as people do (servers/starting.py): a server that is still working on its start
(printing progress, or using the CPU) past its init timeout is not failed; one that is silent and idle
is, and every failure says what was seen. Real server processes (tests/servers/starting_server.py)
with an init timeout of 1 s, through the real hub."""

from __future__ import annotations

import copy
import json
import sys
import time
from pathlib import Path

import pytest

from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.servers import ServerHub, ServerState

STARTING_SERVER = str(Path(__file__).parent / "servers" / "starting_server.py")
LIMIT = 1.0


def starting_config(*flags: str, name: str = "starting") -> ServerConfig:
    return ServerConfig(
        name=name, type="stdio", command=sys.executable, args=[STARTING_SERVER, *flags], init_timeout=LIMIT
    )


async def started(*flags: str):
    """The server's status once its start settled (a copy: the hub stops it after), and how long that took."""
    async with ServerHub([starting_config(*flags)]) as hub:
        began = time.monotonic()
        await hub.start_all()
        status = copy.deepcopy(hub.status("starting"))
        return status, time.monotonic() - began, [spec.name for spec in status.tools]


async def test_a_server_printing_progress_for_longer_than_its_init_timeout_starts():
    status, took, tools = await started("--progress", "2")  # twice its init timeout
    assert status.state == ServerState.READY, status.reason
    assert took >= 2 and tools == ["ping"]
    assert any("npm http fetch" in line for line in status.stderr_tail)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="CPU use is read from /proc")
async def test_a_server_using_the_cpu_without_a_word_for_longer_than_its_init_timeout_starts():
    status, took, tools = await started("--busy", "2")  # twice its init timeout
    assert status.state == ServerState.READY, status.reason
    assert took >= 2 and tools == ["ping"]


async def test_a_silent_idle_server_fails_at_its_init_timeout_saying_it_gave_no_output():
    status, took, _ = await started("--silent")
    assert status.state == ServerState.FAILED
    assert "no answer to initialize within 1 s, and no output at all nor CPU use" in status.reason
    assert took < 10


async def test_a_server_that_exits_while_starting_names_its_exit_code_and_last_stderr_line():
    status, _, _ = await started("--exit", "3")
    assert status.state == ServerState.FAILED
    assert "exited with code 3 while starting" in status.reason
    assert "cannot read settings.json" in status.reason
    quiet, _, _ = await started("--exit-quietly", "4")
    assert "exited with code 4 while starting (no output on stderr)" in quiet.reason


async def test_a_server_that_exited_is_never_said_to_have_hung_though_its_connection_is_still_open():
    """The client may hear of the exit after the init timeout (late on a loaded machine; here a child
    holds the connection open): the start still fails naming the exit and its code, not a hang."""
    status, _, _ = await started("--exit", "3", "--orphan")
    assert status.state == ServerState.FAILED
    assert "the server exited with code 3 while starting" in status.reason, status.reason
    assert "cannot read settings.json" in status.reason and "hung" not in status.reason


async def test_a_server_that_prints_what_is_not_mcp_fails_naming_it():
    status, took, _ = await started("--noise")
    assert status.state == ServerState.FAILED
    assert "Welcome to the starting server" in status.reason and "not JSON-RPC" in status.reason
    assert took < 10


def test_a_one_shot_run_still_exits_1_when_a_server_failed_to_start(tmp_path, isolated_user_dirs):
    """-p (a script) needs every server it was given: a failed start is exit 1 naming it (on_server_failure's
    default), where the full-screen app goes on (tests/test_server_starting_ui.py)."""
    from tests.scripted_endpoint import ScriptedEndpoint
    from tests.test_oneshot import run_cli

    servers = tmp_path / "servers.json"
    servers.write_text(
        json.dumps({"servers": {"flaky": {"command": sys.executable, "args": [STARTING_SERVER, "--exit", "3"]}}})
    )
    with ScriptedEndpoint(["Hello."]) as endpoint:
        args = ("--endpoint", endpoint.url, "scripted", "--mcp-config", str(servers), "-p", "hi")
        result = run_cli(*args, cwd=tmp_path, dirs=isolated_user_dirs)
    assert result.returncode == 1, result.stderr
    assert "MCP server failed to start: flaky" in result.stderr and result.stdout == ""
