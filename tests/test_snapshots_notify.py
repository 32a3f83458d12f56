"""Snapshot of the server detail screen with what a server said: its instructions, its log messages
(time, level, logger) and its log level, at 80×24. Update with ``--snapshot-update`` and look."""

from __future__ import annotations

from textual.widgets import Static

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.ui.screens.detail import ServerDetailScreen
from tests.fakes import ScriptedEngine, call
from tests.test_notifications import ERAS, notify_config
from tests.test_snapshots import start
from tests.ui_helpers import make_app, send, wait_for, wait_turn_done


def test_server_detail_with_instructions_and_log(snap_compare):
    async def run_before(pilot) -> None:
        app = pilot.app
        await start(pilot)
        await send(pilot, "count")
        await wait_turn_done(pilot, app)
        await wait_for(pilot, lambda: app.hub.status("notify").log.total == 3, what="the log messages")
        app.servers_table.focus()
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, ServerDetailScreen)
                and "counting is done" in str(app.screen.query_one("#server-log-lines", Static).content)
            ),
            what="the server screen with its log",
        )
        await pilot.pause(0.2)

    server = notify_config("notify", *ERAS["2026-07-28"], "--instructions", "Count before you flood.")
    engine = ScriptedEngine([[call("count", {"steps": 2})], "Counted."])
    app = make_app(engine, [server], policy=ApprovalPolicy("auto"))
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
