"""Snapshot at 80×24 of a conversation near its context's limit: the status bar's tokens used of the
model's context (warning colour and mark from 80%), and the card of a result cut for the model.
The sidebar is hidden (Ctrl+B): its column widths depend on which states a row went through while
drawn, which a loaded machine changes. Update with ``--snapshot-update`` and look."""

from __future__ import annotations

from mcp_chat_tui.agent import ApprovalPolicy
from tests.fakes import ScriptedEngine, call
from tests.test_context_budget import long_result_config
from tests.test_snapshots import start
from tests.ui_helpers import make_app, send, wait_for, wait_turn_done


def test_status_bar_near_the_context_limit_and_a_cut_result(snap_compare):
    async def run_before(pilot) -> None:
        await start(pilot)
        await send(pilot, "is the build log clean?")
        await wait_turn_done(pilot, pilot.app)
        await pilot.press("ctrl+b")
        await wait_for(pilot, lambda: not pilot.app.query_one("#sidebar").display, what="the sidebar hidden")
        await pilot.pause(0.2)

    engine = ScriptedEngine(
        [[call("read_log", {"lines": 1500})], "The log is clean."], context_length=4096, prompt_tokens=3500
    )
    app = make_app(engine, [long_result_config()], policy=ApprovalPolicy("auto"))
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
