"""Snapshot tests of the four screens issue 4 must show, kept as SVG under tests/__snapshots__/.

The real app runs with the real demo server, a scripted model and a frozen clock; each
``run_before`` drives it with Pilot and waits until the screen is in the wanted state. The
prompt's cursor does not blink, so a screenshot never catches it half-way. Update with
``pytest tests/test_snapshots.py --snapshot-update`` and look at the SVGs before committing.
"""

from __future__ import annotations

from textual.widgets import Input

from mcp_chat_tui.config import ServerConfig, Settings
from mcp_chat_tui.servers import ServerState
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from mcp_chat_tui.ui.screens.detail import CallDetailScreen
from tests.fakes import ScriptedEngine, call
from tests.helpers import demo_config
from tests.ui_helpers import SIZE, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

SEARCH_ANSWER = (
    "Two pages in the offline corpus match:\n\n"
    "- **MLX** is an array framework for machine learning on Apple silicon, with a CPU backend on Linux.\n"
    "- The **Model Context Protocol** lets applications give language models tools through servers.\n\n"
    "Both come from `web_search` on the demo server."
)


def conversation_engine() -> ScriptedEngine:
    """A calculator turn, then a web_search turn whose answer has a list and inline code."""
    return ScriptedEngine(
        [
            [call("calculator", {"expression": "12 * 7"}, "call_1")],
            "12 * 7 = **84**.",
            [call("web_search", {"query": "MLX MCP", "max_results": 2}, "call_2")],
            SEARCH_ANSWER,
        ]
    )


async def start(pilot) -> None:
    """Wait for the model and servers (the panes exist by then), then cursor blink off (the test
    config of the house style)."""
    await wait_ready(pilot, pilot.app)
    for field in pilot.app.query(Input):
        field.cursor_blink = False


async def ask_and_approve(pilot, prompt: str) -> None:
    app = pilot.app
    await send(pilot, prompt)
    await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the approval dialog")
    await pilot.press("y")
    await wait_turn_done(pilot, app)


def test_main_screen_mid_conversation(snap_compare):
    """Two turns with a finished calculator call and a web_search call; the last answer streamed in."""

    async def run_before(pilot) -> None:
        await start(pilot)
        await ask_and_approve(pilot, "what is 12 * 7?")
        await ask_and_approve(pilot, "search the web for MLX and MCP")

    assert snap_compare(make_app(conversation_engine()), terminal_size=SIZE, run_before=run_before)


def test_approval_dialog(snap_compare):
    """The dialog before the calculator call: tool, server, description, annotations, arguments, keys."""

    async def run_before(pilot) -> None:
        app = pilot.app
        await start(pilot)
        await send(pilot, "what is 12 * 7?")
        # The screen is pushed before its widgets are mounted and the sidebar row is updated: wait for both.
        await wait_for(
            pilot,
            lambda: (
                dialog_armed(app, ApprovalScreen)
                and app.screen.query("#approval-keys")
                and any(r.state.value == "awaiting approval" for r in app.calls_table.records.values())
            ),
            what="the approval dialog",
        )
        await pilot.pause(0.2)

    assert snap_compare(make_app(conversation_engine()), terminal_size=SIZE, run_before=run_before)


def test_tool_call_detail(snap_compare):
    """Enter on the calculator row of the sidebar: the call in full, with its result."""

    async def run_before(pilot) -> None:
        app = pilot.app
        await start(pilot)
        await ask_and_approve(pilot, "what is 12 * 7?")
        await pilot.press("f3", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CallDetailScreen), what="the call detail")

    assert snap_compare(make_app(conversation_engine()), terminal_size=SIZE, run_before=run_before)


def test_server_panel_with_a_failed_server(snap_compare):
    """A server whose command does not exist, with on_server_failure = "continue"; the table focused
    with the cursor on the failed row, whose whole reason shows under the table."""
    servers = [demo_config(), ServerConfig(name="ghost", type="stdio", command="no-such-mcp-server")]
    app = make_app(ScriptedEngine([]), servers, settings=Settings(on_server_failure="continue"))

    async def run_before(pilot) -> None:
        await start(pilot)
        await wait_for(
            pilot,
            lambda: app.hub.status("ghost").state is ServerState.FAILED and "ghost" in app.servers_table.statuses,
            what="the failed row",
        )
        await pilot.press("f4", "j")
        await wait_for(
            pilot,
            lambda: app.focused is app.servers_table and app.servers_table.selected_server() == "ghost",
            what="the failed row selected",
        )

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_sidebar_with_long_cells_at_80x24(snap_compare):
    """A 200-character tool name on a server with a long name, long arguments: the names are cut with
    an ellipsis and the state column shows whole."""
    from tests.test_ui_truth import call_long_cells, long_cells_app

    assert snap_compare(long_cells_app(), terminal_size=(80, 24), run_before=call_long_cells)


def test_approval_dialog_at_60x16_with_long_arguments(snap_compare):
    """On a small terminal the dialog's body scrolls and its title and keys stay on screen."""
    engine = ScriptedEngine(
        [[call("web_search", {"query": "the history of " + "very long words " * 30, "max_results": 5})], "nothing"]
    )

    async def run_before(pilot) -> None:
        app = pilot.app
        await start(pilot)
        await send(pilot, "search")
        await wait_for(
            pilot,
            lambda: (
                dialog_armed(app, ApprovalScreen)
                and app.screen.query("#approval-keys")
                and any(r.state.value == "awaiting approval" for r in app.calls_table.records.values())
            ),
            what="the approval dialog",
        )
        await pilot.pause(0.2)

    assert snap_compare(make_app(engine), terminal_size=(60, 16), run_before=run_before)
