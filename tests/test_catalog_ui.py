"""Prompts and resources in the full-screen app: the ``/`` and ``@`` completion list, the argument
form, the resources screen and its preview, against tests/servers/catalog_server.py."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Markdown, Static

from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.transcript import Transcript
from mcp_chat_tui.transcript.model import Exchange
from mcp_chat_tui.ui.screens.arguments import ArgumentsScreen
from mcp_chat_tui.ui.screens.resources import ResourcesScreen
from mcp_chat_tui.ui.widgets.completion import CompletionMenu
from mcp_chat_tui.ui.widgets.media import IMAGE_WIDGET
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.fakes import ScriptedEngine
from tests.helpers import catalog_config
from tests.ui_helpers import SIZE, chat_text, dialog_armed, make_app, wait_for, wait_ready, wait_turn_done

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)


def names(app) -> list[str]:
    menu = app.query_one(CompletionMenu)
    return [candidate.name for candidate in menu.candidates] if menu.is_open else []


async def test_slash_lists_prompts_and_a_chosen_prompt_with_arguments_opens_its_form():
    engine = ScriptedEngine(["Reviewed."])
    app = make_app(engine, [catalog_config("docs")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("/")
        await wait_for(pilot, lambda: app.query(CompletionMenu) and names(app), what="the completion list")
        assert names(app) == [
            "/docs:review",
            "/docs:greet",
            "/docs:summarise",
            "/compact",
            "/retry",
            "/call",
            "/model",
            "/roots",
        ]
        await pilot.press("r", "e")
        narrowed = ["/docs:review", "/docs:greet", "/retry"]
        await wait_for(pilot, lambda: names(app) == narrowed, what="the list narrowed")
        await pilot.press("tab")
        await wait_for(pilot, lambda: isinstance(app.screen, ArgumentsScreen), what="the argument form")
        form = app.screen
        await pilot.press("enter")  # the required language is empty: the form says so and stays
        await wait_for(pilot, lambda: "required: language" in str(form.query_one("#arguments-problem").render()))
        await pilot.press("p", "y")
        await wait_for(pilot, lambda: "python" in str(form.query_one("#hint-0").render()), what="suggestions")
        await pilot.press("right", "enter")  # the suggestion is taken, then sent
        await wait_turn_done(pilot, app)
        assert engine.prompts[0][-1] == {"role": "user", "content": "Please review this python code, looking for bugs."}
        assert "📎 /docs:review language=python" in chat_text(app)
        assert app.recorder.transcript.exchanges[0].attachments[0].arguments == {"language": "python"}


async def test_enter_sends_a_prompt_typed_in_full_without_arguments_and_opens_the_form_of_one_with():
    engine = ScriptedEngine(["Hello, Ada.", "Milk."])
    app = make_app(engine, [catalog_config("docs")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        prompt = app.query_one("#prompt", Input)
        prompt.focus()
        await pilot.press(*"/docs:greet")
        await wait_for(pilot, lambda: names(app) == ["/docs:greet"], what="/docs:greet offered")
        await pilot.press("enter")  # typed in full, but it takes a name: its form opens
        await wait_for(pilot, lambda: isinstance(app.screen, ArgumentsScreen), what="the argument form")
        await pilot.press(*"Ada", "enter")
        await wait_turn_done(pilot, app)
        assert engine.prompts[0][-1]["content"] == "Say hello to Ada."
        await pilot.press(*"/docs:summarise")
        await wait_for(pilot, lambda: names(app) == ["/docs:summarise"], what="/docs:summarise offered")
        await pilot.press("enter")  # typed in full and it takes nothing: one Enter sends it
        await wait_for(pilot, lambda: len(engine.prompts) == 2, what="the prompt sent on the first Enter")
        await wait_turn_done(pilot, app)
        assert engine.prompts[1][-1]["content"].startswith("Summarise these notes.")
        assert "📎 /docs:summarise" in chat_text(app)


async def test_enter_takes_the_entry_when_only_a_prefix_is_typed_and_a_command_typed_whole_comes_first():
    engine = ScriptedEngine([])
    app = make_app(engine, [catalog_config("docs")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await app.hub.call_tool("docs", "add_prompt", {"name": "compact"})  # a server's /docs:compact
        await wait_for(pilot, lambda: "compact" in [p.name for p in app.hub.prompts()], what="the new prompt")
        prompt = app.query_one("#prompt", Input)
        prompt.focus()
        await pilot.press(*"/summ")
        await wait_for(pilot, lambda: names(app) == ["/docs:summarise"], what="/docs:summarise offered")
        await pilot.press("enter")  # a prefix: Enter writes the entry out, nothing is sent
        await wait_for(pilot, lambda: prompt.value == "/docs:summarise ", what="the entry written out")
        assert not engine.prompts
        prompt.value = ""
        await pilot.press(*"/compact")
        await wait_for(pilot, lambda: names(app) == ["/compact", "/docs:compact"], what="/compact first")
        prompt.value = ""
        await pilot.press(*"/compac")
        await wait_for(pilot, lambda: names(app) == ["/docs:compact", "/compact"], what="prompts before commands")


async def test_a_typed_command_with_its_arguments_sends_at_once_and_an_unknown_one_keeps_the_text():
    engine = ScriptedEngine(["Hello there."])
    app = make_app(engine, [catalog_config("docs")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        prompt = app.query_one("#prompt", Input)
        prompt.value = "/docs:gret name=Ada"
        await pilot.press("escape", "enter")  # Esc closes the list, Enter sends
        await wait_for(pilot, lambda: prompt.value == "/docs:gret name=Ada" and app._notifications, what="a notice")
        assert "did you mean /docs:greet" in list(app._notifications)[-1].message
        assert prompt.cursor_position == len(prompt.value)  # typing goes on at its end
        prompt.value = '/greet name="Ada Lovelace"'
        await pilot.press("escape", "enter")
        await wait_turn_done(pilot, app)
        assert engine.prompts[0][-1]["content"] == "Say hello to Ada Lovelace."


async def test_at_attaches_a_resource_to_the_message_and_the_model_gets_its_contents():
    engine = ScriptedEngine(["Dark."])
    app = make_app(engine, [catalog_config("docs")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press(*"what is in @con")
        await wait_for(pilot, lambda: names(app) == ["@config"], what="the resource in the list")
        await pilot.press("enter")
        prompt = app.query_one("#prompt", Input)
        await wait_for(pilot, lambda: prompt.attached, what="the attachment")
        assert prompt.value == "what is in @config "
        await pilot.press("?", "enter")
        await wait_turn_done(pilot, app)
        content = engine.prompts[0][-1]["content"]
        assert content == (
            'what is in @config ?\n\n[attached: docs › data://config (application/json)]\n{"theme": "dark", "size": 3}'
        )
        assert "📎 docs › data://config (application/json)" in chat_text(app)


async def test_at_a_template_asks_for_its_variables_with_completions():
    engine = ScriptedEngine(["Sunny."])
    app = make_app(engine, [catalog_config("docs")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press(*"@weat", "tab")
        await wait_for(pilot, lambda: isinstance(app.screen, ArgumentsScreen), what="the variables form")
        await pilot.press("p", "r")
        await wait_for(pilot, lambda: "prague" in str(app.screen.query_one("#hint-0").render()))
        await pilot.press("right", "enter")
        prompt = app.query_one("#prompt", Input)
        await wait_for(pilot, lambda: prompt.attached, what="the attachment")
        assert prompt.attached[0][1].text == "sunny in prague"


async def test_the_resources_screen_lists_previews_and_follows_updates():
    app = make_app(ScriptedEngine([]), [catalog_config("docs")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("f4", "o")
        await wait_for(pilot, lambda: isinstance(app.screen, ResourcesScreen), what="the resources screen")
        screen = app.screen
        table = screen.query_one("#resources")
        assert table.row_count == 5
        await pilot.press("down", "enter")  # the read-me: Markdown rendered
        await wait_for(pilot, lambda: screen.query(Markdown), what="the Markdown preview")
        await pilot.press("down", "enter")  # the JSON settings, pretty-printed
        body = screen.query_one("#resource-body")
        await wait_for(pilot, lambda: '"theme": "dark",\n  "size": 3' in _shown(body), what="pretty JSON")
        await pilot.press("down", "enter")  # the image: its line, and the image drawn under it
        await wait_for(pilot, lambda: body.query(IMAGE_WIDGET), what="the image drawn")
        assert "▣ image image/png, 70 B, 1×1 px" in _shown(body)
        await pilot.press("ctrl+home", "enter")  # today's notes, subscribed while shown
        await wait_for(pilot, lambda: "buy milk" in _shown(body), what="the notes")
        await app.hub.call_tool("docs", "edit_note", {"text": "buy bread"})
        await wait_for(pilot, lambda: "buy bread" in _shown(body), what="the updated notes")
        await app.hub.call_tool("docs", "add_note", {"uri": "notes://later", "text": "x"})
        await wait_for(pilot, lambda: table.row_count == 6, what="the new resource listed")


async def test_the_resources_screen_unsubscribes_what_it_no_longer_shows():
    """2025-11-25 (``resources/unsubscribe``): previewing another resource lets the last one go, and
    closing the screen lets go of the one shown."""
    app = make_app(ScriptedEngine([]), [catalog_config("docs", "--legacy")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        status = app.hub.status("docs")
        await pilot.press("f4", "o")
        await wait_for(pilot, lambda: isinstance(app.screen, ResourcesScreen), what="the resources screen")
        screen = app.screen
        await pilot.press("enter")  # today's notes
        await wait_for(pilot, lambda: "buy milk" in _shown(screen.query_one("#resource-body")), what="the notes")
        assert status.subscribed == {"notes://today": 1}
        await pilot.press("down", "enter")  # the read-me
        await wait_for(pilot, lambda: status.subscribed == {"docs://readme": 1}, what="the notes let go")
        await pilot.press("escape")
        await wait_for(pilot, lambda: status.subscribed == {}, what="the read-me let go as the screen closed")
        said = lambda: [line for line in status.stderr_tail if "subscribed" in line]  # noqa: E731
        await wait_for(pilot, lambda: len(said()) == 4, what="the server told")
        assert said() == [
            "catalog: subscribed to notes://today",
            "catalog: subscribed to docs://readme",
            "catalog: unsubscribed from notes://today",
            "catalog: unsubscribed from docs://readme",
        ]


async def test_a_resumed_conversation_shows_its_attachments_and_sends_them_again():
    notes = Attachment("resource", "docs", "today", "notes://today", "text/plain", "buy milk")
    transcript = Transcript([Exchange("Summarise.", "scripted", attachments=[notes])])
    engine = ScriptedEngine(["Again."])
    app = make_app(engine, [catalog_config("docs")], transcript=transcript, autosave=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert "📎 docs › notes://today (text/plain)" in chat_text(app)
        app.query_one("#prompt", Input).value = "more"
        await pilot.press("enter")
        await wait_turn_done(pilot, app)
        assert engine.prompts[0][0]["content"].endswith("[attached: docs › notes://today (text/plain)]\nbuy milk")


def _shown(body) -> str:
    return "\n".join(str(widget.render()) for widget in body.query(Static))


async def test_the_built_in_read_resource_is_approved_and_listed_like_any_call():
    from mcp_chat_tui.ui.screens.approval import ApprovalScreen
    from tests.fakes import call
    from tests.ui_helpers import send

    engine = ScriptedEngine([[call("read_resource", {"server": "docs", "uri": "data://config"})], "Dark."])
    app = make_app(engine, [catalog_config("docs")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "which theme?")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the approval dialog")
        await pilot.press("y")
        await wait_turn_done(pilot, app)
        [record] = app.calls_table.records.values()
        assert (record.server, record.tool) == ("(app)", "read_resource")
        assert engine.prompts[1][-1]["content"] == '{"theme": "dark", "size": 3}'


async def test_a_clicked_entry_is_taken_like_enter():
    app = make_app(ScriptedEngine([]), [catalog_config("docs")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("/")
        await wait_for(pilot, lambda: app.query(CompletionMenu) and names(app), what="the completion list")
        await pilot.click(CompletionMenu, offset=(4, 2))  # the second entry, /docs:greet
        await wait_for(pilot, lambda: isinstance(app.screen, ArgumentsScreen), what="the argument form")
        assert app.screen.title_text == "/docs:greet"
