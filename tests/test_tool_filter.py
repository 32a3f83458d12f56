"""Which tools are offered to the model at all: mcp.json's includeTools / excludeTools and
config.toml's [server_tools.NAME], through the real loaders, the hub with a real SDK server, the
CLI with a scripted endpoint, and the server's panel in the app."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp_chat_tui.cli.setup import make_hub
from mcp_chat_tui.config import load_settings
from mcp_chat_tui.config.mcp_json import load_mcp_config
from mcp_chat_tui.core.tool_filter import NOT_OFFERED, ToolFilter
from tests.helpers import FIXTURE_SERVER
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_oneshot import run_cli

FIXTURE_TOOLS = {"whoami", "echo", "crash", "slow", "big", "shout_to_stderr", "add_tool"}


def test_a_filter_takes_names_and_globs_include_first_then_exclude():
    only = ToolFilter.of(["echo", "who*"])
    assert only.offers("echo") and only.offers("whoami") and not only.offers("crash")
    assert not ToolFilter.of(None, ["s*"]).offers("slow") and ToolFilter.of(None, ["s*"]).offers("big")
    assert not ToolFilter.of(["*"], ["crash"]).offers("crash")
    assert not ToolFilter.of(["Echo"]).offers("echo")  # names are case-sensitive


def write_files(folder: Path, entry: dict, config_text: str = "") -> tuple[Path, Path]:
    servers = folder / "servers.json"
    command = {"command": sys.executable, "args": [FIXTURE_SERVER, "--label", "fx"]}
    servers.write_text(json.dumps({"servers": {"fx": command | entry}}))
    config = folder / "config.toml"
    config.write_text(config_text)
    return servers, config


async def test_mcp_json_and_config_toml_both_narrow_what_the_hub_offers(tmp_path):
    servers, config = write_files(
        tmp_path, {"includeTools": ["echo", "who*", "slow"]}, '[server_tools.fx]\nexclude = ["slow"]\n'
    )
    mcp_config = load_mcp_config(servers, workspace_folder=tmp_path)
    hub = make_hub(load_settings(config), mcp_config)
    async with hub:
        await hub.start_all()
        assert {spec.name for spec in hub.tools()} == {"echo", "whoami"}
        status = hub.status("fx")
        assert {spec.name for spec in status.not_offered_tools} == FIXTURE_TOOLS - {"echo", "whoami"}
        assert hub.find_tool("crash") is None


def test_a_bad_filter_in_config_toml_names_the_key(tmp_path):
    import pytest

    from mcp_chat_tui.core.errors import ConfigError

    config = tmp_path / "config.toml"
    config.write_text('[server_tools.fx]\ninclude = "echo"\n')
    with pytest.raises(ConfigError, match=r"server_tools\.fx\.include"):
        load_settings(config)


def test_the_model_is_not_given_a_left_out_tool_and_a_call_to_it_runs_nothing(tmp_path, isolated_user_dirs):
    servers, config = write_files(tmp_path, {"excludeTools": ["crash", "s*"]})
    with ScriptedEndpoint([tool_reply("crash", {}), "done"]) as endpoint:
        result = run_cli(
            "--endpoint", endpoint.url, "scripted", "--mcp-config", str(servers), "--config", str(config),
            "--yes", "-p", "crash it", cwd=tmp_path, dirs=isolated_user_dirs,
        )  # fmt: skip
        requests = endpoint.requests
    offered = {tool["function"]["name"] for tool in requests[0]["tools"]}
    assert offered == FIXTURE_TOOLS - {"crash", "slow", "shout_to_stderr"}, offered
    told = requests[-1]["messages"][-1]["content"]
    assert "unknown tool 'crash'" in told and "The tools you can call are: whoami, echo, big, add_tool." in told
    assert result.returncode == 0, result.stderr  # the server did not crash: nothing ran


async def test_the_server_panel_lists_the_tools_left_out_as_not_offered(tmp_path):
    from textual.widgets import DataTable

    from mcp_chat_tui.ui.screens.detail import ServerDetailScreen
    from tests.fakes import ScriptedEngine
    from tests.helpers import fixture_config
    from tests.ui_helpers import SIZE, make_app, wait_for, wait_ready

    server = fixture_config("fx", in_process=True).model_copy(update={"include_tools": ["echo", "whoami"]})
    app = make_app(ScriptedEngine([]), [server])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("f4")
        await wait_for(pilot, lambda: "fx" in app.servers_table.statuses, what="the fx row")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ServerDetailScreen), what="the server's detail")
        table = app.screen.query_one(DataTable)
        rows = {str(table.get_row_at(i)[0]): str(table.get_row_at(i)[4]) for i in range(table.row_count)}
        assert rows["crash"] == NOT_OFFERED and rows["slow"] == NOT_OFFERED
        assert rows["echo"] != NOT_OFFERED
        assert {spec.name for spec in app.hub.tools()} == {"echo", "whoami"}
