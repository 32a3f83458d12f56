"""Use a tool yourself: Enter on a tool in the server panel asks its arguments, runs it with no
approval, shows the result, and attaches it to the next message (the model reads it then, the
conversation file keeps it)."""

from __future__ import annotations

from textual.widgets import DataTable, Input

from mcp_chat_tui.core.attachments import CALL
from mcp_chat_tui.transcript.media import read_conversation
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from mcp_chat_tui.ui.screens.detail import ServerDetailScreen, TextScreen
from mcp_chat_tui.ui.screens.edit_arguments import EditArgumentsScreen
from tests.fakes import ScriptedEngine
from tests.helpers import demo_config
from tests.ui_helpers import SIZE, make_app, wait_for, wait_ready, wait_turn_done


async def test_enter_on_a_tool_calls_it_shows_the_result_and_attaches_it_to_the_next_message(tmp_path):
    path = tmp_path / "chat.md"
    engine = ScriptedEngine(["84, as you found."])
    app = make_app(engine, [demo_config()], transcript_file=path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("f4", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ServerDetailScreen), what="the server's detail")
        table = app.screen.query_one(DataTable)
        table.move_cursor(row=table.get_row_index("calculator"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, EditArgumentsScreen), what="the argument editor")
        assert "Call demo › calculator" in str(app.screen.query_one("#approval-title").render())
        app.screen.query_one("#field-0", Input).value = "12 * 7"  # the form built from the tool's schema
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, TextScreen), what="the result")
        assert not any(isinstance(screen, ApprovalScreen) for screen in app.screen_stack)  # nobody asked
        assert app.screen.body == "12 * 7 = 84"
        await pilot.press("escape", "escape")
        prompt = app.query_one("#prompt", Input)
        assert prompt.value == "@demo:calculator "
        await pilot.press("f5", *"what does it say?", "enter")
        await wait_turn_done(pilot, app)
    told = engine.prompts[0][-1]["content"]
    assert told == (
        "@demo:calculator what does it say?\n\n"
        '[attached: you called demo › calculator(expression="12 * 7")]\n12 * 7 = 84'
    )
    [attachment] = read_conversation(path).exchanges[0].attachments
    assert (attachment.kind, attachment.server, attachment.name) == (CALL, "demo", "calculator")
