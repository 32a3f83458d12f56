"""A tool's ``title`` is what a person reads where the tool is named (approval dialog, sidebar row,
card, detail screen, --plain and -p), beside its name where a yes is asked; the model is offered and
calls the name. tests/servers/lenient_server.py's ``get_weather``, titled "Weather report"."""

from __future__ import annotations

import json

import pytest

from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.ui.palette import tool_in_palette
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from mcp_chat_tui.ui.widgets.chat import ToolCallCard
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.fakes import ScriptedEngine, call
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_oneshot import run_cli
from tests.test_result_type import lenient_config
from tests.ui_helpers import SIZE, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)


async def test_the_hub_keeps_the_title_and_offers_the_name():
    async with ServerHub([lenient_config()]) as hub:
        await hub.start_all()
        spec = hub.find_tool("get_weather")
        assert (spec.name, spec.title) == ("get_weather", "Weather report")
        assert spec.to_openai()["function"]["name"] == "get_weather"
        assert tool_in_palette(spec) == "Weather report (get_weather)"
        assert tool_in_palette(hub.find_tool("echo")) == "echo"


async def test_the_title_is_shown_where_a_person_reads_the_tool():
    engine = ScriptedEngine([[call("get_weather", {"city": "Oslo"})], "Sunny."])
    app = make_app(engine, [lenient_config()])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "weather in Oslo?")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the approval dialog")
        asked = str(app.screen.query_one("#approval-title").render())
        assert asked == "Run Weather report (get_weather) on lenient?"
        await pilot.press("y")
        await wait_turn_done(pilot, app)
        [record] = app.calls_table.records.values()
        assert (record.tool, record.title) == ("get_weather", "Weather report")
        row = app.calls_table.get_row(record.key)
        assert "lenient›Weather report" in [str(cell) for cell in row]
        card = str(app.query_one(ToolCallCard).render())
        assert card.startswith("✓ Weather report  lenient › get_weather  done"), card
        offered = [tool["function"]["name"] for tool in engine.tools_sent[0]]
        assert "get_weather" in offered and "Weather report" not in str(engine.tools_sent[0])
        assert engine.prompts[1][-1]["content"] == "sunny in Oslo"


def test_dash_p_prints_the_title_and_the_model_calls_the_name(tmp_path, isolated_user_dirs):
    config = tmp_path / "servers.json"
    server = lenient_config()
    config.write_text(json.dumps({"servers": {"lenient": {"command": server.command, "args": server.args}}}))
    script = [tool_reply("get_weather", {"city": "Oslo"}), "Sunny in Oslo."]
    with ScriptedEndpoint(script) as endpoint:
        result = run_cli(
            "--endpoint",
            endpoint.url,
            "scripted",
            "--mcp-config",
            str(config),
            "-p",
            "weather?",
            "--yes",
            cwd=tmp_path,
            dirs=isolated_user_dirs,
        )
    assert result.returncode == 0, result.stderr
    assert "→ Weather report  [lenient › get_weather]" in result.stderr, result.stderr
    assert "✓ Weather report done" in result.stderr
    offered = [tool["function"]["name"] for tool in endpoint.requests[0]["tools"]]
    assert "get_weather" in offered and "Weather report" not in json.dumps(endpoint.requests[0]["tools"])
    assert endpoint.requests[1]["messages"][-1]["name"] == "get_weather"
