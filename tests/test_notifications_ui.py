"""What servers say while they work, in the full-screen app: a running call's progress in its
sidebar row and card (once it ends, and after resume, in its detail), log counts in the server
panel, the server detail screen's log, instructions and log-level keys, and ``/roots``."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.transcript import parse
from mcp_chat_tui.ui.screens.detail import ServerDetailScreen, call_report
from mcp_chat_tui.ui.widgets.chat import ToolCallCard
from tests.fakes import ScriptedEngine, call
from tests.test_notifications import ERAS, notify_config
from tests.ui_helpers import make_app, send, wait_for, wait_ready, wait_turn_done


def text_of(widget: Static) -> str:
    return str(widget.content)


async def test_a_running_call_shows_its_progress_in_its_row_and_card_and_resume_shows_the_last(tmp_path):
    flag = tmp_path / "flag"
    transcript = tmp_path / "chat.md"
    engine = ScriptedEngine([[call("wait_for_file", {"path": str(flag)})], "done"])
    app = make_app(engine, [notify_config("n")], policy=ApprovalPolicy("auto"), transcript_file=transcript)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "wait")
        table = app.calls_table

        def running_with_progress() -> bool:
            return any(r.state is CallState.RUNNING and r.progress for r in table.records.values())

        await wait_for(pilot, running_with_progress, what="the call's first progress")
        record = next(iter(table.records.values()))
        assert str(table.get_cell(record.key, "state")) == "▶ ▰▰▰▱▱▱▱▱ 1/3"
        assert str(table.get_cell(record.key, "result")) == "waiting for the file"
        card = app.call_store.cards[record.key]
        assert "▰▰▰▱▱▱▱▱ 1/3 waiting for the file" in text_of(card)
        flag.touch()
        await wait_turn_done(pilot, app)
        assert record.state is CallState.DONE
        assert "done" in text_of(card) and "▰" not in text_of(card), "the finished card keeps a progress bar"
        assert "last progress: ▰▰▰▰▰▰▰▰ 3/3 found it" in call_report(record, app.clock)  # the detail keeps it
        assert str(table.get_cell(record.key, "args")).startswith("path=")
        assert str(table.get_cell(record.key, "result")) == "the file is there"  # its outcome, in short
    saved = parse(transcript.read_text())
    result = saved.exchanges[0].steps[0].proposals[0].result
    assert result is not None and result.progress is not None and result.progress.describe() == "3/3 found it"
    resumed = make_app(ScriptedEngine([]), [notify_config("n")], transcript=saved)
    async with resumed.run_test(size=(140, 40)) as pilot:
        await wait_ready(pilot, resumed)
        await wait_for(pilot, lambda: bool(resumed.query(ToolCallCard)), what="the loaded call")
        card = resumed.query_one(ToolCallCard)
        assert "done" in text_of(card) and "▰" not in text_of(card)
        assert "last progress: ▰▰▰▰▰▰▰▰ 3/3 found it" in call_report(card.record, resumed.clock)


async def test_log_messages_are_counted_in_the_panel_and_shown_in_the_server_screen_with_level_keys():
    engine = ScriptedEngine([[call("count", {"steps": 2})], "done", [call("count", {"steps": 1}, "call_2")], "again"])
    server = notify_config("n", *ERAS["2025-11-25"], "--instructions", "Count before you flood.")
    app = make_app(engine, [server], policy=ApprovalPolicy("auto"))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "count")
        await wait_turn_done(pilot, app)
        status = app.hub.status("n")
        await wait_for(pilot, lambda: status.log.total == 3, what="three log messages")
        await wait_for(pilot, lambda: "3 log · 1⚠" in str(app.servers_table.get_cell("n", "reason")), what="counts")
        app.servers_table.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ServerDetailScreen), what="the server screen")
        screen = app.screen
        assert "Count before you flood." in text_of(screen.query_one("#server-instructions", Static))
        title = text_of(screen.query_one("#server-log-title", Static))
        assert title.startswith("log · level info · 3 messages, 1 warning or worse")
        lines = text_of(screen.query_one("#server-log-lines", Static))
        assert "12:00:00 info [notify.work] counted 1" in lines
        assert "12:00:00 warning [notify.work] counting is done" in lines
        await pilot.press("plus")
        await wait_for(pilot, lambda: status.log_level == "notice", what="the level raised")
        await pilot.press("plus")
        await wait_for(pilot, lambda: status.log_level == "warning", what="the level raised again")
        server_level = await app.hub.call_tool("n", "log_level", {})
        assert server_level.text == "warning"  # sent with logging/setLevel
        await pilot.press("escape")
        await send(pilot, "count again")
        await wait_turn_done(pilot, app)
        await wait_for(pilot, lambda: status.log.total == 4, what="the warning only")
        assert status.log.entries[-1].level == "warning"
        app.servers_table.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ServerDetailScreen), what="the server screen")
        await pilot.press("minus")
        await wait_for(pilot, lambda: status.log_level == "notice", what="the level lowered")
        await wait_for(
            pilot,
            lambda: "level notice" in text_of(app.screen.query_one("#server-log-title", Static)),
            what="the title to follow",
        )


async def test_roots_command_changes_the_roots_and_is_not_sent_to_the_model(tmp_path):
    engine = ScriptedEngine([])
    app = make_app(engine, [notify_config("n", *ERAS["2025-11-25"])])
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, f"/roots add {tmp_path}")
        await wait_for(pilot, lambda: Path(tmp_path) in app.hub.roots.shared, what="the root added")
        roots = await app.hub.call_tool("n", "list_roots", {})
        assert tmp_path.as_uri() in roots.text.splitlines()
        assert engine.prompts == [] and app.agent.messages == []
        assert app.query_one("#prompt").value == ""
        assert not app.query(DataTable).first().row_count  # no call, no turn
