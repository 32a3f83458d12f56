"""Snapshots of the dialogs for a server's requests (tests/__snapshots__/): the sampling dialog and the
elicitation form, at 80×24 and 60×16, with the real asking server and a scripted model. Update with
``pytest tests/test_snapshots_requests.py --snapshot-update`` and look at the SVGs before committing."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.ui.screens.requests import ElicitFormScreen, SamplingScreen
from tests.fakes import ScriptedEngine, call
from tests.test_client_requests import asking_config
from tests.ui_helpers import dialog_armed, make_app, send, wait_for, wait_ready

SIZES = [(80, 24), (60, 16)]


def asking_app(tool: str, arguments: dict):
    engine = ScriptedEngine([[call(tool, arguments)], "A one-line summary.", "Done."])
    return make_app(engine, [asking_config("modern")], policy=ApprovalPolicy("auto"))


def until(screen_class, prompt: str, typed: dict[int, str] | None = None):
    async def run_before(pilot) -> None:
        app = pilot.app
        await wait_ready(pilot, app)
        for field in app.query(Input):  # the prompt behind the dialog: its cursor is drawn steady too
            field.cursor_blink = False
        await send(pilot, prompt)
        await wait_for(pilot, lambda: isinstance(app.screen, screen_class), what=screen_class.__name__)
        for widget in app.screen.query("Input, TextArea"):
            widget.cursor_blink = False  # before it first blinks, so the cursor is drawn steady
        await wait_for(pilot, lambda: dialog_armed(app, screen_class), what=f"{screen_class.__name__} armed")
        await wait_for(  # its first field has the focus (its cursor drawn), however late it came
            pilot, lambda: app.focused is not None and app.focused.screen is app.screen, what="the dialog's focus"
        )
        for widget in app.screen.query("Input, TextArea"):  # blinking stopped again now the focus is settled:
            widget.cursor_blink = True  # the focused field's cursor shown (stopped in a blink's dark half, or
            widget.cursor_blink = False  # before its focus came, it drew none: 60x16 failed so under load)
        for index, text in (typed or {}).items():
            app.screen.query_one(f"#field-{index}", Input).value = text
        if typed:
            await pilot.press("ctrl+s")  # shows the errors at the fields
        await pilot.pause()

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "60x16"])
def test_sampling_dialog(snap_compare, size):
    app = asking_app("summarize", {"text": "The MLX array framework runs on Apple silicon and on Linux CPUs."})
    assert snap_compare(app, terminal_size=size, run_before=until(SamplingScreen, "summarize"))


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "60x16"])
def test_elicitation_form_with_an_error_at_a_field(snap_compare, size):
    app = asking_app("sign_up", {})
    typed = {0: "Ada", 1: "ada@example"}
    assert snap_compare(app, terminal_size=size, run_before=until(ElicitFormScreen, "sign me up", typed))


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "60x16"])
def test_elicitation_form_with_every_kind_of_field(snap_compare, size):
    """Scrolled to the multi-selects: checkboxes, the default checked; above them a yes or no without a
    default, unanswered."""
    app = asking_app("every_field", {})
    shown = until(ElicitFormScreen, "fill it")

    async def run_before(pilot) -> None:
        await shown(pilot)
        pilot.app.screen.query_one("#field-13").focus()  # the instruments, scrolled into view
        await pilot.wait_for_scheduled_animations()  # the scroll to the focused field and its label ends
        for _ in range(3):
            await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)
