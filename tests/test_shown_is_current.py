"""What is shown is current: clearing the chat or opening another conversation leaves nothing of
the one before in the sidebar or the status bar."""

from __future__ import annotations

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.engine.events import Stats
from mcp_chat_tui.transcript import render
from tests.fakes import ScriptedEngine, call
from tests.test_transcript_app import finished_calculation
from tests.ui_helpers import SIZE, chat_text, make_app, send, wait_for, wait_ready, wait_turn_done

CACHED = Stats(100, 10, 2, 0.01, 100.0, 0.0)  # the turn's first reply: 90 of 100 prompt tokens were cached


def status_text(app) -> str:
    return app.status_bar.render().plain


async def a_turn_with_a_call(pilot, app) -> None:
    await send(pilot, "what is 12 * 7?")
    await wait_turn_done(pilot, app)
    assert app.calls_table.row_count == 1
    assert "90 of 100 prompt tokens were cached" in status_text(app)


async def test_clearing_the_chat_empties_the_sidebar_and_the_status_bars_figures():
    engine = ScriptedEngine(
        [
            [call("calculator", {"expression": "12 * 7"}), CACHED],
            "84.",
            [call("calculator", {"expression": "1 + 1"})],
            "2.",
        ]
    )
    app = make_app(engine, policy=ApprovalPolicy("auto"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await a_turn_with_a_call(pilot, app)
        await app.action_clear_chat()
        await pilot.pause()
        assert app.calls_table.row_count == 0 and not app.calls_table.records
        assert not app.call_store.cards
        assert "prompt tokens" not in status_text(app) and "tokens" not in status_text(app)
        await send(pilot, "and 1 + 1?")
        await wait_turn_done(pilot, app)
        assert [record.arguments for record in app.calls_table.records.values()] == [{"expression": "1 + 1"}]


async def test_opening_another_conversation_leaves_nothing_of_the_one_before(isolated_user_dirs, tmp_path):
    other = tmp_path / "other.md"
    other.write_text(render(finished_calculation()))
    engine = ScriptedEngine([[call("web_search", {"query": "MLX"}), CACHED], "MLX is an array framework."])
    app = make_app(engine, policy=ApprovalPolicy("auto"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "search MLX")
        await wait_turn_done(pilot, app)
        assert "90 of 100 prompt tokens were cached" in status_text(app)
        assert await app.open_conversation(other)
        await wait_for(pilot, lambda: "12 * 7 = 84." in chat_text(app), what="the opened conversation")
        assert "prompt tokens" not in status_text(app)
        assert [record.tool for record in app.calls_table.records.values()] == ["calculator"]


async def test_up_after_a_slash_command_recalls_it_and_keeps_walking_the_history():
    app = make_app(ScriptedEngine(["hello back"]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "hello")
        await wait_turn_done(pilot, app)
        await send(pilot, "/roots")
        prompt = app.query_one("#prompt")
        await wait_for(pilot, lambda: prompt.value == "", what="the command taken")
        await pilot.press("up")
        await pilot.pause()
        assert prompt.value == "/roots"
        assert prompt.menu is None or not prompt.menu.is_open, "the / list opened over the history"
        await pilot.press("up")
        await pilot.pause()
        assert prompt.value == "hello"
        await pilot.press("down", "down")
        await pilot.pause()
        assert prompt.value == ""
        await pilot.press("/")
        await wait_for(pilot, lambda: prompt.menu is not None and prompt.menu.is_open, what="the / list for typing")


async def test_at_with_no_resources_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an empty folder: no file to attach either (core/local_files.py)
    app = make_app(ScriptedEngine([]))  # the demo server offers no resources
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert not app.hub.resources() and not app.hub.resource_templates()
        app.query_one("#prompt").focus()
        await pilot.press("a", "space", "@")
        await wait_for(
            pilot,
            lambda: any("no server offers resources" in str(n.message) for n in app._notifications),
            what="the notice that there is nothing to attach",
        )
        await pilot.press("x")  # typing on after the @ says nothing more
        await pilot.pause()
        assert sum("no server offers resources" in str(n.message) for n in app._notifications) == 1


async def test_f1_wraps_what_a_key_does_in_its_own_column():
    from mcp_chat_tui.ui.help import KEY_COLUMN
    from mcp_chat_tui.ui.screens.detail import TextScreen

    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=(60, 16)) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, TextScreen), what="the F1 screen")
        await pilot.pause()
        body = app.screen.query_one(".detail-body Static")
        lines = ["".join(segment.text for segment in body.render_line(y)) for y in range(body.size.height)]
        start = next(i for i, line in enumerate(lines) if "Cancel the" in line)
        column = lines[start].index("Cancel the")
        assert column >= KEY_COLUMN
        follow = lines[start + 1]
        assert follow[:column].strip() == "" and follow[column:].strip(), (lines[start], follow)


async def test_the_server_detail_gives_its_tools_the_height_the_log_does_not_need():
    from mcp_chat_tui.ui.screens.detail import ServerDetailScreen

    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("f4", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ServerDetailScreen), what="the server detail")
        await pilot.pause()
        tools = app.screen.query_one("#server-tools")
        count = len(app.hub.status("demo").tools)
        assert tools.size.height >= count + 1, (tools.size.height, count)  # every tool, under its header
        assert not tools.max_scroll_y


async def test_a_notification_about_a_server_does_not_cover_its_row():
    from textual.widgets._toast import Toast

    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("f4", "r")
        await wait_for(pilot, lambda: bool(app.screen.query(Toast)), what="the notification")
        await pilot.pause()
        row = app.servers_table.region
        for toast in app.screen.query(Toast):
            assert not toast.region.overlaps(row), (toast.region, row)
