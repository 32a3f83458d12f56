"""Snapshots of the prompt and resource screens: the ``/`` completion list, a prompt's argument form
(80×24 and 60×16), and the resources screen with a preview. Real catalog server, scripted model.
Update with ``pytest tests/test_snapshots_catalog.py --snapshot-update`` and look at the SVGs."""

from __future__ import annotations

from textual.widgets import Input, Markdown

from mcp_chat_tui.ui.screens.arguments import ArgumentsScreen
from mcp_chat_tui.ui.screens.resources import ResourcesScreen
from mcp_chat_tui.ui.widgets.completion import CompletionMenu
from tests.fakes import ScriptedEngine
from tests.helpers import catalog_config
from tests.ui_helpers import make_app, wait_for, wait_ready

SMALL = (80, 24)


async def start(pilot) -> None:
    await wait_ready(pilot, pilot.app)
    for field in pilot.app.query(Input):
        field.cursor_blink = False


def no_blink(screen) -> None:
    for field in screen.query(Input):
        field.cursor_blink = False


def app():
    return make_app(ScriptedEngine([]), [catalog_config("docs")])


def test_completion_list(snap_compare):
    async def run_before(pilot) -> None:
        await start(pilot)
        await pilot.press("/")
        await wait_for(pilot, lambda: pilot.app.query(CompletionMenu) and pilot.app.query_one(CompletionMenu).is_open)

    assert snap_compare(app(), terminal_size=SMALL, run_before=run_before)


def _argument_form(size):
    async def run_before(pilot) -> None:
        await start(pilot)
        await pilot.press(*"/docs:review", "escape", "enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ArgumentsScreen) and pilot.app.screen.query(Input))
        no_blink(pilot.app.screen)
        await pilot.press("p")
        await wait_for(pilot, lambda: "python" in str(pilot.app.screen.query_one("#hint-0").render()))

    return app(), size, run_before


def test_argument_form(snap_compare):
    application, size, run_before = _argument_form(SMALL)
    assert snap_compare(application, terminal_size=size, run_before=run_before)


def test_argument_form_small(snap_compare):
    application, size, run_before = _argument_form((60, 16))
    assert snap_compare(application, terminal_size=size, run_before=run_before)


def test_resources_screen(snap_compare):
    async def run_before(pilot) -> None:
        await start(pilot)
        await pilot.press("f4", "o")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ResourcesScreen))
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: pilot.app.screen.query(Markdown))

    assert snap_compare(app(), terminal_size=SMALL, run_before=run_before)
