"""The calls sidebar with one call in each case a person must read at a glance: long arguments (done),
an error, a denied call and a call still running with progress; for the sidebar's tests and snapshots."""

from __future__ import annotations

from textual.widgets import Input

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.ui.call_records import CallState
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from tests.fakes import ScriptedEngine, call
from tests.helpers import demo_config
from tests.test_notifications import notify_config
from tests.ui_helpers import dialog_armed, make_app, send, wait_for, wait_ready

LONG_EXPRESSION = "(1234567 * 891011) + (121314 * 151617) - sqrt(181920) / 212223"
WAITED_FILE = "/nowhere/reports/2026/quarterly-figures.csv"  # never there: the call keeps running
SCENE_CALLS = [
    call("calculator", {"expression": LONG_EXPRESSION}, "call_1"),
    call("calculator", {"expression": "1 / 0"}, "call_2"),
    call("web_search", {"query": "what the weather will be like in Reykjavik next week", "max_results": 3}, "call_3"),
    call("wait_for_file", {"path": WAITED_FILE}, "call_4"),
]
EXPECTED_STATES = {
    "call_1": CallState.DONE,
    "call_2": CallState.ERROR,
    "call_3": CallState.DENIED,
    "call_4": CallState.RUNNING,
}


def scene_app(**options):
    """Calculator and wait_for_file run without asking; web_search asks (and is denied)."""
    policy = ApprovalPolicy("ask", saved={"demo": {"calculator": "always"}, "notify": {"wait_for_file": "always"}})
    engine = ScriptedEngine([SCENE_CALLS, "done"])
    return make_app(engine, [demo_config(), notify_config("notify")], policy=policy, **options)


def scene_reached(app) -> bool:
    records = {record.call_id: record for record in app.calls_table.records.values()}
    if {key: getattr(records.get(key), "state", None) for key in EXPECTED_STATES} != EXPECTED_STATES:
        return False
    return records["call_4"].progress is not None


async def show_scene(pilot) -> None:
    """Send the prompt, deny web_search, wait until every call is in its state and drawn."""
    app = pilot.app
    await wait_ready(pilot, app)
    for field in app.query(Input):
        field.cursor_blink = False
    await send(pilot, "four calls")
    await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the approval dialog")
    await pilot.press("n")
    await wait_for(pilot, lambda: scene_reached(app), what="the four calls in their states")
    await pilot.pause()
    for pane in (app.chat, app.calls_table):  # one scroll position whatever the timing of the calls' rows
        pane.scroll_end(animate=False, immediate=True)
    await pilot.pause()
    await pilot.pause()
