"""The approval policy in the real app: what it writes to config.toml, the ⚡ marks it derives, and
which rule let each call run (the dialog, the call's detail, a resumed conversation)."""

from __future__ import annotations

import argparse
import sys
import tomllib

import pytest

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.cli.chat import make_policy
from mcp_chat_tui.config import McpConfig, load_settings
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.transcript import parse, read_transcript_text
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from mcp_chat_tui.ui.screens.detail import CallDetailScreen, ServerDetailScreen
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.fakes import ScriptedEngine, call
from tests.helpers import demo_config, fixture_config
from tests.ui_helpers import SIZE, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)

CONFIG = """\
# my settings: the app must not rewrite this file when nothing it owns changes
theme = "mcp-dark"
approval = "ask"
trusted_servers = ["demo"]

[approvals.demo]
calculator = "always"

[approvals.ghost]  # a server that is not configured today
paint = "always"
"""


DEMO_COMMAND = [sys.executable, "-m", "mcp_chat_tui.demo.server"]  # tests.helpers.demo_config's


def app_with_config(tmp_path, engine, servers=None, **options):
    """The app with the policy ``mcp-chat-tui --config PATH`` builds from a real config.toml."""
    path = tmp_path / "config.toml"
    path.write_text(CONFIG, encoding="utf-8")
    servers = servers or [demo_config()]
    mcp_config = McpConfig(path=tmp_path / "mcp.json", source="test", servers={s.name: s for s in servers})
    settings = load_settings(path)
    hub = ServerHub(servers)
    policy = make_policy(argparse.Namespace(config=path, yes=False), settings, mcp_config, hub)
    return path, make_app(engine, servers, policy=policy, settings=settings, settings_file=path, hub=hub, **options)


def tool_cell(app, key: str) -> str:
    return str(app.calls_table.get_cell(key, "tool"))


def server_cell(app, name: str) -> str:
    return str(app.servers_table.get_cell(name, "tools"))


async def answer(pilot, key: str) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the approval dialog")
    await pilot.press(key)


async def test_toggling_a_server_on_and_off_leaves_config_toml_byte_identical(tmp_path):
    path, app = app_with_config(tmp_path, ScriptedEngine([]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("f4", "a")
        await wait_for(pilot, lambda: "⚡" in server_cell(app, "demo"), what="the server's ⚡")
        await pilot.press("a")
        await wait_for(pilot, lambda: "⚡" not in server_cell(app, "demo"), what="the ⚡ gone")
        calculator = app.hub.find_tool("calculator")
        assert not app.policy.runs_without_asking(calculator), "off means every tool asks, this session"
        await pilot.press("a", "a")  # and once more, on and off
        await wait_for(pilot, lambda: "⚡" not in server_cell(app, "demo"), what="the ⚡ gone")
    assert path.read_text(encoding="utf-8") == CONFIG


async def test_a_tool_toggle_writes_nothing_and_a_saved_always_keeps_every_other_entry(tmp_path):
    engine = ScriptedEngine(
        [
            [call("calculator", {"expression": "1+1"})],
            "2",
            [call("web_search", {"query": "mlx"})],
            "found",
        ]
    )
    path, app = app_with_config(tmp_path, engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "one")  # calculator: saved always, runs without asking
        await wait_turn_done(pilot, app)
        await pilot.press("f3", "a")  # off for this session
        await wait_for(pilot, lambda: "⚡" not in tool_cell(app, "call-1"), what="the row's ⚡ gone")
        await pilot.press("a")  # on again
        await wait_for(pilot, lambda: "⚡" in tool_cell(app, "call-1"), what="the row's ⚡")
        assert path.read_text(encoding="utf-8") == CONFIG
        await send(pilot, "two")
        await answer(pilot, "T")  # web_search: always, saved
        await wait_turn_done(pilot, app)
    saved = tomllib.loads(path.read_text(encoding="utf-8"))
    assert saved == {
        "theme": "mcp-dark",
        "approval": "ask",
        "trusted_servers": ["demo"],
        "approvals": {
            "demo": {"calculator": "always", "web_search": {"choice": "always", "command": DEMO_COMMAND}},
            "ghost": {"paint": "always"},
        },
    }


async def test_marks_follow_the_policy_on_every_row_of_the_tool(tmp_path):
    engine = ScriptedEngine(
        [
            [call("calculator", {"expression": "1+1"})],
            "2",
            [call("calculator", {"expression": "2+2"})],
            "4",
            [call("web_search", {"query": "mlx"})],
            "found",
        ]
    )
    app = make_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "one")
        await answer(pilot, "y")
        await wait_turn_done(pilot, app)
        assert "⚡" not in tool_cell(app, "call-1")
        await send(pilot, "two")
        await answer(pilot, "t")  # always, this session: the older row of the tool shows it too
        await wait_turn_done(pilot, app)
        await wait_for(
            pilot, lambda: all("⚡" in tool_cell(app, key) for key in ("call-1", "call-2")), what="⚡ on both rows"
        )
        await send(pilot, "three")
        await answer(pilot, "y")
        await wait_turn_done(pilot, app)
        assert "⚡" not in tool_cell(app, "call-3")

        await pilot.press("f3")
        app.calls_table.move_cursor(row=1)
        await pilot.press("a")  # calculator off
        await wait_for(
            pilot, lambda: not any("⚡" in tool_cell(app, key) for key in app.calls_table.records), what="no row marked"
        )
        await pilot.press("f4", "a")  # every demo tool on
        await wait_for(
            pilot, lambda: all("⚡" in tool_cell(app, key) for key in app.calls_table.records), what="every row marked"
        )
        assert "⚡" in server_cell(app, "demo")
        await pilot.press("a")  # every demo tool off
        await wait_for(
            pilot, lambda: not any("⚡" in tool_cell(app, key) for key in app.calls_table.records), what="no row marked"
        )
        assert "⚡" not in server_cell(app, "demo")
        await pilot.press("enter")  # the server's tools: the marks there come from the policy too
        await wait_for(pilot, lambda: isinstance(app.screen, ServerDetailScreen), what="the server's tools")
        table = app.screen.query_one("#server-tools")
        assert not any(str(table.get_cell(spec.name, "auto")) for spec in app.hub.status("demo").tools)
        await pilot.press("a")
        first = app.hub.status("demo").tools[0].name
        assert str(table.get_cell(first, "auto")) == "⚡"


async def test_the_dialog_says_why_it_asks_and_each_call_who_allowed_it_also_after_a_resume(tmp_path):
    engine = ScriptedEngine(
        [
            [call("calculator", {"expression": "1+1"}, "call_1"), call("echo", {"text": "hi"}, "call_2")],
            "done",
        ]
    )
    servers = [demo_config(), fixture_config("fx", in_process=True)]
    transcript = tmp_path / "chat.md"
    policy = ApprovalPolicy("auto-readonly", trusted={"demo"})
    app = make_app(engine, servers, policy=policy, transcript_file=transcript)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "go")
        await wait_for(
            pilot,
            lambda: dialog_armed(app, ApprovalScreen) and app.screen.query("#approval-why"),
            what="the dialog",
        )
        why = str(app.screen.query_one("#approval-why").render())
        assert why == "asking: auto-readonly: fx does not mark this tool read-only"
        await pilot.press("y")
        await wait_turn_done(pilot, app)
        live = {record.tool: record.allowed_by for record in app.calls_table.records.values()}
        assert live == {"calculator": "auto-readonly (trusted server demo)", "echo": "you (once)"}
        await pilot.press("f3")
        app.calls_table.move_cursor(row=0)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CallDetailScreen), what="the call's detail")
        assert "allowed by: auto-readonly (trusted server demo)" in str(
            app.screen.query_one(".detail-body Static").render()
        )

    proposals = parse(read_transcript_text(transcript)).exchanges[0].steps[0].proposals
    assert [(p.choice, p.allowed_by) for p in proposals] == [
        ("auto", "auto-readonly (trusted server demo)"),
        ("yo", "you (once)"),
    ]
    resumed = make_app(
        ScriptedEngine([]), servers, transcript_file=transcript, transcript=parse(read_transcript_text(transcript))
    )
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, resumed)
        assert {r.tool: r.allowed_by for r in resumed.calls_table.records.values()} == live
        await pilot.press("f3")
        resumed.calls_table.move_cursor(row=1)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(resumed.screen, CallDetailScreen), what="the call's detail")
        assert "allowed by: you (once)" in str(resumed.screen.query_one(".detail-body Static").render())
