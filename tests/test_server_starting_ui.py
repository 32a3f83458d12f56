"""Starting servers in the full-screen app (Pilot, real subprocess servers from
tests/servers/starting_server.py, a scripted model): a server that fails never ends the app, it is
shown failed with why and ``r`` starts it again while the chat works; a server still starting past its
init timeout is shown starting with its time and last stderr line, behind a chat that works."""

from __future__ import annotations

import re

from mcp_chat_tui.servers import ServerState
from mcp_chat_tui.ui.screens.fatal import FatalScreen
from tests.fakes import ScriptedEngine
from tests.helpers import demo_config
from tests.test_server_starting import starting_config
from tests.ui_helpers import SIZE, chat_text, make_app, send, wait_for, wait_ready, wait_turn_done


async def test_a_server_that_fails_never_ends_the_app_and_r_starts_it_again(tmp_path):
    ready_file = tmp_path / "configured"
    servers = [demo_config(), starting_config("--exit-unless", str(ready_file), name="flaky")]
    app = make_app(ScriptedEngine(["Hello there."]), servers)  # on_server_failure left at its default
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert app.fatal_error is None and not isinstance(app.screen, FatalScreen)
        assert app.hub.status("flaky").state is ServerState.FAILED
        said = chat_text(app)
        assert "continuing without flaky: the server exited with code 3 while starting" in said
        assert "r on it in the server panel (F4) starts it again" in said
        await wait_for(pilot, lambda: "flaky" in app.servers_table.statuses, what="its row")
        row = [str(cell) for cell in app.servers_table.get_row("flaky")]
        assert row[0].endswith("failed") and "exited with code 3" in row[5]
        await send(pilot, "hi")  # the chat works without it
        await wait_turn_done(pilot, app)
        assert "Hello there." in chat_text(app)
        ready_file.write_text("yes")
        await pilot.press("f4")
        app.servers_table.move_cursor(row=app.servers_table.get_row_index("flaky"))
        await pilot.press("r")
        await wait_for(pilot, lambda: app.hub.status("flaky").state is ServerState.READY, 30, "flaky to start")
        assert any(spec.name == "ping" for spec in app.hub.tools())


async def test_a_server_still_starting_shows_its_time_and_last_line_behind_a_working_chat():
    # Starting for 3 s of progress and its import of mcp after: the app is ready, and its checks are done,
    # well within that; each second more was waited out at the end.
    servers = [demo_config(), starting_config("--progress", "3", name="npx")]
    app = make_app(ScriptedEngine(["Hello there."]), servers, frozen=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert app.hub.status("npx").state is ServerState.STARTING  # the chat opened before it was ready
        assert "still starting: npx" in chat_text(app)
        await wait_for(pilot, lambda: "npx" in app.servers_table.statuses, what="its row")

        def row() -> list[str]:
            return [str(cell) for cell in app.servers_table.get_row("npx")]

        await wait_for(pilot, lambda: "npm http fetch" in row()[5], what="its last stderr line in its row")
        # its time so far (in ms under a second, else in s), then the line
        assert row()[0].endswith("starting") and re.search(r"\d (ms|s): npm http fetch", row()[5]), row()[5]
        await send(pilot, "hi")
        await wait_turn_done(pilot, app)
        assert "Hello there." in chat_text(app)
        await wait_for(pilot, lambda: app.hub.status("npx").state is ServerState.READY, 30, "npx to be ready")
        await wait_for(pilot, lambda: "ready now: npx" in chat_text(app), what="the notice that it is ready")
        assert any(spec.name == "ping" for spec in app.hub.tools())
