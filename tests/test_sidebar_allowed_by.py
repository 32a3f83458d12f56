"""The sidebar's "by" column: who let each call run, in short, live and after a resume."""

from __future__ import annotations

import pytest

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.transcript import parse, read_transcript_text
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.fakes import ScriptedEngine, call
from tests.helpers import demo_config, fixture_config
from tests.test_ui_truth import visible_end
from tests.ui_helpers import SIZE, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)


def by_cells(app) -> dict[str, str]:
    """Each row's "by" cell, by the row's tool."""
    table = app.calls_table
    return {record.tool: str(table.get_cell(key, "by")) for key, record in table.records.items()}


async def test_the_by_column_names_you_the_rule_or_nobody_and_a_resume_shows_the_same(tmp_path):
    engine = ScriptedEngine(
        [
            [
                call("calculator", {"expression": "1+1"}, "call_1"),
                call("echo", {"text": "hi"}, "call_2"),
                call("whoami", {}, "call_3"),
            ],
            "done",
        ]
    )
    servers = [demo_config(), fixture_config("fx", in_process=True)]
    transcript = tmp_path / "chat.md"
    app = make_app(
        engine, servers, policy=ApprovalPolicy("auto-readonly", trusted={"demo"}), transcript_file=transcript
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "go")
        await wait_for(
            pilot,
            lambda: (
                dialog_armed(app, ApprovalScreen)
                and any(r.state is CallState.AWAITING for r in app.calls_table.records.values())
            ),
            what="the dialog for echo",
        )
        assert by_cells(app)["echo"] == ""  # awaiting: nobody has allowed it yet
        await pilot.press("y")
        await wait_for(
            pilot,
            lambda: (
                dialog_armed(app, ApprovalScreen)
                and any(r.tool == "whoami" and r.state is CallState.AWAITING for r in app.calls_table.records.values())
            ),
            what="the dialog for whoami",
        )
        await pilot.press("n")
        await wait_turn_done(pilot, app)
        live = by_cells(app)
        assert live == {"calculator": "trusted", "echo": "you", "whoami": ""}

    resumed = make_app(
        ScriptedEngine([]), servers, transcript_file=transcript, transcript=parse(read_transcript_text(transcript))
    )
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, resumed)
        assert by_cells(resumed) == live


@pytest.mark.parametrize(
    ("policy", "shown"),
    [
        (ApprovalPolicy("ask", yes=True), "--yes"),
        (ApprovalPolicy("auto"), "auto"),
        (ApprovalPolicy("ask", {"demo": {"calculator": "always"}}), "saved"),
    ],
)
async def test_the_by_column_names_the_rule_that_ran_a_call_without_asking(policy, shown):
    app = make_app(ScriptedEngine([[call("calculator", {"expression": "2*3"})], "6"]), policy=policy)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "go")
        await wait_turn_done(pilot, app)
        assert by_cells(app) == {"calculator": shown}


async def test_always_for_the_session_shows_as_you_always_and_the_state_stays_whole_at_60x16():
    engine = ScriptedEngine(
        [[call("calculator", {"expression": "2*3"})], "6", [call("calculator", {"expression": "3*3"})], "9"]
    )
    app = make_app(engine)
    async with app.run_test(size=(60, 16)) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "go")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the dialog")
        await pilot.press("t")
        await wait_turn_done(pilot, app)
        await send(pilot, "again")
        await wait_turn_done(pilot, app)
        table = app.calls_table
        assert [str(table.get_cell(key, "by")) for key in table.records] == ["you·always", "you·always"]
        assert visible_end(table, "state") <= table.scrollable_content_region.width
