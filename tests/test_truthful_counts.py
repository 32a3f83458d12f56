"""What the screen counts and offers agrees with what there is: the welcome line and the status
bar give one tool count (the tools the model is offered, the app's own among them), the ``/`` list
offers every command the app answers, and a finished call's card shows its outcome, not a bar."""

from __future__ import annotations

from textual.widgets import Input

from mcp_chat_tui.core.tools import BUILTIN_SERVER
from mcp_chat_tui.ui.completion import APP_COMMANDS, candidates
from mcp_chat_tui.ui.widgets.completion import CompletionMenu
from tests.fakes import ScriptedEngine
from tests.helpers import catalog_config
from tests.ui_helpers import SIZE, chat_text, make_app, wait_for, wait_ready


async def test_the_welcome_line_and_the_status_bar_count_the_same_tools():
    app = make_app(ScriptedEngine([]), [catalog_config("docs")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await wait_for(pilot, lambda: "is ready with" in chat_text(app), what="the welcome line")
        offered = app.hub.tools()
        own = [spec.name for spec in offered if spec.server == BUILTIN_SERVER]
        assert own, "the server has resources: the app offers its own resource tools"
        servers = len(offered) - len(own)
        assert f"ready with {len(offered)} tools: {servers} from 1 server and the app's own {', '.join(own)}." in (
            chat_text(app)
        )
        assert str(app.status_bar.render()).endswith(f"1/1 servers · {len(offered)} tools")


def test_the_slash_list_offers_every_command_the_app_answers():
    offered = [candidate.name for candidate in candidates("/", 1, [], [])]
    assert offered == ["/compact", "/retry", "/call", "/model", "/roots"]
    assert [command.command for command in APP_COMMANDS] == offered


async def test_roots_taken_from_the_slash_list_lists_the_roots():
    engine = ScriptedEngine([])
    app = make_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press(*"/ro")
        menu = app.query_one(CompletionMenu)
        await wait_for(pilot, lambda: menu.is_open and [c.name for c in menu.candidates] == ["/roots"], what="/roots")
        await pilot.press("tab")
        prompt = app.query_one("#prompt", Input)
        await wait_for(pilot, lambda: prompt.value == "/roots ", what="the command written out")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(n.title == "roots" for n in app._notifications), what="the roots listed")
    assert engine.prompts == [], "the command went to the model"
