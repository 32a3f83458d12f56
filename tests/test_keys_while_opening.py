"""Keys typed while a screen the person opened is still opening go to that screen's focused field
when it opens: never to the screen under it, never lost (the first letter of a file name typed
straight after opening export was dropped on the bare, not yet mounted screen).

The real app under Pilot with the real demo server and a scripted model. The keys are put in the
app's queue at the moment the screen is pushed, before it is mounted, as a terminal sends them
to someone typing ahead.
"""

from __future__ import annotations

import asyncio

import pytest
from textual import events
from textual.command import CommandPalette
from textual.screen import Screen
from textual.widgets import Input, TextArea

from mcp_chat_tui.ui.screens.conversations import ExportScreen
from mcp_chat_tui.ui.screens.edit_arguments import EditArgumentsScreen
from mcp_chat_tui.ui.screens.search import SearchScreen
from mcp_chat_tui.ui.widgets.prompt import PromptInput
from tests.fakes import ScriptedEngine
from tests.ui_helpers import SIZE, make_app, wait_for, wait_ready

TYPED = "notes-2026"


def key_events(text: str) -> list[events.Key]:
    """The keys a terminal sends for ``text``."""
    return [events.Key("space" if char == " " else char, char) for char in text]


def type_when_pushed(app, kind: type[Screen], text: str, *, mounted_first: bool = False) -> list[Screen]:
    """Put ``text``'s keys in the app's queue at the moment a ``kind`` screen is pushed. With
    ``mounted_first`` the app gets to them only once the screen has mounted (a busy machine's
    order: the screen's own task ran first), so what the screen queued on the app as it mounted,
    its focus, comes after them in the queue."""
    pushed: list[Screen] = []

    async def until_mounted(screen: Screen) -> None:
        while not screen.is_mounted:
            await asyncio.sleep(0.001)

    def on_push(screen: Screen) -> None:
        if isinstance(screen, kind) and not pushed:
            assert not screen.is_mounted, "the keys must come before the screen is mounted"
            pushed.append(screen)
            if mounted_first:
                app.call_later(until_mounted, screen)
            for key in key_events(text):
                app.post_message(key)

    app.screen_change_signal.subscribe(app, on_push, immediate=True)
    return pushed


def field_text(screen: Screen) -> str | None:
    """What the focused field of ``screen`` holds (None: no field has the focus)."""
    field = screen.focused
    if isinstance(field, Input):
        return field.value
    return field.text if isinstance(field, TextArea) else None


def open_export(app) -> None:
    app.action_export()


def open_search(app) -> None:
    app.action_search()


def open_palette(app) -> None:
    app.post_message(events.Key("ctrl+p", None))


def open_argument_editor(app) -> None:
    app.server_controls.call_tool_yourself(app.hub.find_tool("calculator"))


@pytest.mark.parametrize(
    ("kind", "opener"),
    [
        (ExportScreen, open_export),
        (SearchScreen, open_search),
        (CommandPalette, open_palette),
        (EditArgumentsScreen, open_argument_editor),
    ],
    ids=["export", "search", "palette", "argument-editor"],
)
@pytest.mark.parametrize("mounted_first", [False, True], ids=["before-mount", "mounted-first"])
async def test_keys_typed_as_a_screen_opens_go_to_its_field(kind, opener, mounted_first, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = make_app(ScriptedEngine(["hello"]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        pushed = type_when_pushed(app, kind, TYPED, mounted_first=mounted_first)
        opener(app)
        await wait_for(pilot, lambda: pushed and TYPED in (field_text(pushed[0]) or ""), what="the keys in the field")
        await pilot.pause()
        assert app.screen is pushed[0]
        # a field's text, selected as it takes the focus, is replaced by what is typed (the argument
        # editor's focused field is its form's first: the calculator's expression)
        assert field_text(pushed[0]) == TYPED
        assert app.query_one(PromptInput).value == "", "no key went to the prompt under the screen"
