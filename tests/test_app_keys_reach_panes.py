"""The app's own keys act on what a pane now does itself (the sidebar shows, hides and sizes
itself), whatever has the focus: each key of the app names an action the app has, is offered from
every pane, and does there what F1 says it does."""

from __future__ import annotations

import pytest

from mcp_chat_tui.config import load_settings
from mcp_chat_tui.ui.help import help_text
from mcp_chat_tui.ui.keys import APP_BINDINGS
from mcp_chat_tui.ui.widgets.prompt import PromptInput
from mcp_chat_tui.ui.widgets.sidebar_pane import WIDTH_STEP
from tests.fakes import ScriptedEngine
from tests.ui_helpers import make_app, wait_ready

FOCUS_KEYS = {"chat": "f2", "calls": "f3", "servers": "f4", "prompt": "f5"}
SIDEBAR_KEYS = {"ctrl+b": "Ctrl+B", "f7": "F7", "f8": "F8"}


def test_every_key_of_the_app_names_an_action_of_the_app():
    app = make_app(ScriptedEngine([]))
    for binding in APP_BINDINGS:
        name = binding.action.split("(")[0]
        assert callable(getattr(app, f"action_{name}", None)), binding.id


@pytest.mark.parametrize("pane", FOCUS_KEYS)
async def test_the_sidebar_keys_act_from_every_pane(pane, tmp_path):
    config = tmp_path / "config.toml"
    app = make_app(ScriptedEngine([]), settings_file=config)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_ready(pilot, app)
        await pilot.press(FOCUS_KEYS[pane])
        assert app.focused is not None and app.focused.id == pane
        active = app.active_bindings
        assert all(key in active and active[key].enabled for key in SIDEBAR_KEYS)
        assert active["ctrl+b"].binding.show  # in the footer
        start = app.sidebar.percent
        await pilot.press("f8")
        assert app.sidebar.percent == start + WIDTH_STEP
        assert load_settings(config).ui.sidebar_width == start + WIDTH_STEP
        await pilot.press("ctrl+b")
        assert not app.sidebar.display
        focused = app.focused
        assert isinstance(focused, PromptInput) if pane in ("calls", "servers") else focused.id == pane
        await pilot.press("f7", "f7")  # shows it again, narrower
        assert app.sidebar.display and app.sidebar.percent == start - WIDTH_STEP
        assert load_settings(config).ui.sidebar_width == start - WIDTH_STEP
        await pilot.press("ctrl+b", "ctrl+b")
        assert app.sidebar.display and app.focused is focused


def test_f1_lists_the_sidebar_keys():
    listed = help_text().plain
    assert all(f"  {shown}" in listed for shown in SIDEBAR_KEYS.values())
