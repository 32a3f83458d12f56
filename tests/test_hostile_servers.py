"""Servers that send what the SDK refuses, or that lie: real SDK server processes (tests/servers/hostile_server.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.servers import ServerHub, ServerState
from tests.helpers import eventually

HOSTILE_SERVER = str(Path(__file__).parent / "servers" / "hostile_server.py")
VALID_TOOLS = {"echo", "whoami", "flood_changes", "grow"}


def hostile_config(name: str, *flags: str, **overrides: object) -> ServerConfig:
    """A stdio server running tests/servers/hostile_server.py with the given flags."""
    return ServerConfig(name=name, type="stdio", command=sys.executable, args=[HOSTILE_SERVER, *flags], **overrides)


def hostile_entry(*flags: str) -> dict:
    return {"type": "stdio", "command": sys.executable, "args": [HOSTILE_SERVER, *flags]}


# ----- tools the SDK refuses --------------------------------------------------------------------


def assert_bad_tools_refused(refused) -> None:
    by_name = {item.name: item.problem for item in refused}
    assert by_name.keys() == {"string_schema", "list_schema", None, "[bold]no_schema[/]"}, by_name
    assert "inputSchema.type" in by_name["string_schema"] and "'object'" in by_name["string_schema"]
    assert "inputSchema" in by_name["list_schema"] and "['not', 'an', 'object']" in by_name["list_schema"]
    assert by_name[None] == "name is missing"
    assert by_name["[bold]no_schema[/]"] == "inputSchema is missing"


async def test_invalid_tools_are_refused_with_why_and_the_server_keeps_its_valid_tools():
    hub = ServerHub([hostile_config("liar", "--bad-tools")])
    async with hub:
        await hub.start_all()
        status = hub.status("liar")
        assert status.state == ServerState.READY, status.summary()
        assert {spec.name for spec in status.tools} == VALID_TOOLS
        assert_bad_tools_refused(status.refused_tools)
        assert {spec.name for spec in hub.tools()} == VALID_TOOLS
        assert (await hub.call_tool("liar", "echo", {"text": "still here"})).text == "still here"


async def test_invalid_tools_on_a_later_page_leave_every_page_read():
    hub = ServerHub([hostile_config("paged", "--bad-tools", "--extra-tools", "150", "--page-size", "40")])
    async with hub:
        await hub.start_all()
        status = hub.status("paged")
        assert status.state == ServerState.READY, status.summary()
        names = [spec.name for spec in status.tools]
        assert len(names) == len(set(names)) == len(VALID_TOOLS) + 150
        assert {"extra_0", "extra_149"} <= set(names)
        assert_bad_tools_refused(status.refused_tools)


async def test_a_tool_list_change_reads_the_list_the_same_way():
    hub = ServerHub([hostile_config("grower", "--bad-tools", "--page-size", "3")])
    async with hub:
        await hub.start_all()
        assert (await hub.call_tool("grower", "grow", {"name": "sprout"})).ok
        assert await eventually(lambda: hub.find_tool("sprout") is not None, 10), hub.status("grower").summary()
        status = hub.status("grower")
        assert status.state == ServerState.READY
        assert_bad_tools_refused(status.refused_tools)
        assert (await hub.call_model_tool("sprout")).text == "I am sprout"


def test_check_servers_lists_each_refused_tool_with_why(tmp_path, isolated_user_dirs):
    from tests.test_cli import run_cli, write_mcp_json

    config = write_mcp_json(tmp_path / "servers.json", {"liar": hostile_entry("--bad-tools")})
    result = run_cli("--check-servers", "--mcp-config", str(config), cwd=tmp_path, env_dirs=isolated_user_dirs)
    assert result.returncode == 0, result.stdout + result.stderr
    out = " ".join(result.stdout.split())
    assert "ready" in out and "echo" in out
    assert "refused 4 invalid tool(s)" in out
    assert "'string_schema': inputSchema.type" in out
    assert "(a tool without a name): name is missing" in out
    assert "'[bold]no_schema[/]': inputSchema is missing" in out
    assert "4 tool(s) refused" in out


async def test_the_server_panel_shows_refused_tools_literally():
    from tests.fakes import ScriptedEngine
    from tests.ui_helpers import SIZE, make_app, wait_for, wait_ready
    from textual.widgets import Static

    app = make_app(ScriptedEngine([]), [hostile_config("liar", "--bad-tools")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        table = app.servers_table
        await wait_for(pilot, lambda: "liar" in table.statuses, what="the liar row")
        row = [str(cell) for cell in table.get_row("liar")]
        assert row[0].endswith("ready") and "+4✗" in row[3] and "4 tool(s) refused" in row[5]
        await pilot.press("f4")
        reason = app.query_one("#server-reason", Static)
        await wait_for(pilot, lambda: reason.display, what="the reason area")
        shown = str(reason.render())
        assert "refused 4 invalid tool(s)" in shown
        assert "'[bold]no_schema[/]': inputSchema is missing" in shown

