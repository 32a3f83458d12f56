"""Keys typed straight after an Enter that closes a screen go where it leaves the person: into the
screen it opens (a palette command opening export: its file name), or into the prompt when it only
acts (the sidebar hidden, a theme, export written). They were lost: Enter reached the screen's field
first, the keys typed after it reached that field too, and the screen closed with them. An Enter
that leaves the screen open leaves the keys after it there.

The real app under Pilot with the real demo server and a scripted model. Enter and the keys after it
are put in the app's queue at once, as a terminal sends them to someone typing ahead.
"""

from __future__ import annotations

import pytest
from textual import events
from textual.command import CommandInput, CommandList, CommandPalette
from textual.widgets import Input

from mcp_chat_tui.ui.screens.conversations import ExportScreen
from mcp_chat_tui.ui.widgets.prompt import PromptInput
from tests.fakes import ScriptedEngine
from tests.test_keys_while_opening import field_text, key_events
from tests.ui_helpers import SIZE, make_app, wait_for, wait_ready

TYPED = "notes-2026"


async def choose_in_palette(pilot, app, words: str) -> None:
    """Open the palette and type ``words`` until its list offers a command for them."""
    await pilot.press("ctrl+p")
    await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette) and app.screen.is_mounted, what="the palette")
    await pilot.press(*(key.key for key in key_events(words)))
    commands = app.screen.query_one(CommandList)
    await wait_for(pilot, lambda: commands.option_count > 0, what=f"a command for {words!r}")


async def open_export(pilot, app) -> None:
    """Open export and wait until its field shows the suggested file name."""
    app.action_export()
    await wait_for(pilot, lambda: isinstance(app.screen, ExportScreen) and app.screen.is_mounted, what="export")
    await wait_for(pilot, lambda: field_text(app.screen), what="the suggested file name")


def enter_and_type(app, text: str) -> None:
    """Enter, then ``text``'s keys, all in the app's queue before Enter is handled."""
    for key in [events.Key("enter", "\r"), *key_events(text)]:
        app.post_message(key)


async def test_keys_after_a_command_that_opens_a_screen_go_to_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = make_app(ScriptedEngine(["hello"]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await choose_in_palette(pilot, app, "export the")
        enter_and_type(app, TYPED)
        await wait_for(pilot, lambda: isinstance(app.screen, ExportScreen), what="the export screen")
        await wait_for(pilot, lambda: TYPED in (field_text(app.screen) or ""), what="the keys in the file name")
        assert field_text(app.screen) == TYPED
        assert app.query_one(PromptInput).value == "", "no key went to the prompt under the screen"


@pytest.mark.parametrize("words", ["hide or show the sidebar", "change theme: textual-light"])
async def test_keys_after_a_command_that_acts_go_to_the_prompt(words, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = make_app(ScriptedEngine(["hello"]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await choose_in_palette(pilot, app, words)
        enter_and_type(app, TYPED)
        prompt = app.query_one(PromptInput)
        await wait_for(pilot, lambda: TYPED in prompt.value, what="the keys in the prompt")
        assert not isinstance(app.screen, CommandPalette)
        assert prompt.value == TYPED


async def test_keys_after_enter_in_export_go_to_the_prompt(tmp_path, monkeypatch):
    """The same in a screen of the app's own: Enter on a file name writes it and closes export."""
    monkeypatch.chdir(tmp_path)
    app = make_app(ScriptedEngine(["hello"]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await open_export(pilot, app)
        enter_and_type(app, TYPED)
        prompt = app.query_one(PromptInput)
        await wait_for(pilot, lambda: TYPED in prompt.value, what="the keys in the prompt")
        assert not isinstance(app.screen, ExportScreen)
        assert prompt.value == TYPED


async def test_keys_after_an_enter_that_leaves_the_palette_open_stay_in_it(tmp_path, monkeypatch):
    """Enter on words no command matches does nothing: the keys after it are the palette's."""
    monkeypatch.chdir(tmp_path)
    app = make_app(ScriptedEngine(["hello"]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("ctrl+p")
        await wait_for(
            pilot, lambda: isinstance(app.screen, CommandPalette) and app.screen.is_mounted, what="the palette"
        )
        palette = app.screen
        field = palette.query_one(CommandInput)
        for _ in range(3):
            app.post_message(events.Key("percent_sign", "%"))
        await wait_for(pilot, lambda: field.value == "%%%", what="the words in the palette")
        await wait_for(pilot, lambda: not palette.query_one(CommandList).option_count, what="no command for them")
        await pilot.pause()
        enter_and_type(app, "ab")
        await wait_for(pilot, lambda: field.value == "%%%ab", what="the keys after Enter in the palette")
        assert app.screen is palette


async def test_a_change_of_the_prompt_handled_once_it_is_gone_is_no_error():
    """The last key's change reached the app after the prompt had left (the app closing): the app
    raised NoMatches looking for the prompt, and the run ended in that error."""
    app = make_app(ScriptedEngine(["hello"]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        prompt = app.query_one(PromptInput)
        await prompt.remove()
        app.post_message(Input.Changed(prompt, TYPED))
        await pilot.pause()
        assert app._exception is None


@pytest.mark.parametrize("where", ["the field", "the screen", "the app"])
async def test_the_enter_watch_ticking_while_the_enter_is_on_its_way_keeps_the_keys(where, tmp_path, monkeypatch):
    """The watch's tick (its own task) can land anywhere on the Enter's way: the field handling it,
    the screen it bubbles through, the app it comes back to (whose binding submits the field). The
    queues of the screen are empty then, yet the Enter is not done: the keys were given to the export
    field and closed with it (the flaky test above, under load). Here the tick is made to land there."""
    monkeypatch.chdir(tmp_path)
    app = make_app(ScriptedEngine(["hello"]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await open_export(pilot, app)
        node = {"the field": app.screen.query_one(Input), "the screen": app.screen, "the app": app}[where]
        handle, ticked = node.on_event, []

        async def tick_first(event: events.Event) -> None:
            if isinstance(event, events.Key) and event.key == "enter" and event.is_forwarded:
                ticked.append(event)
                await app.key_guard._after_enter()  # what the watch's interval calls
            await handle(event)

        monkeypatch.setattr(node, "on_event", tick_first)
        enter_and_type(app, TYPED)
        prompt = app.query_one(PromptInput)
        await wait_for(pilot, lambda: TYPED in prompt.value, what="the keys in the prompt")
        assert ticked, f"the tick landed in {where}"
        assert not isinstance(app.screen, ExportScreen)
        assert prompt.value == TYPED
