"""A form keeps the server's message and the focused field's label in view (issue 33): at 80×24 and
120×35, after it has been up a while, and as the focus moves down its fields. The real app under
Pilot, the real asking server's six-field form (tests/servers/asking_server.py), a scripted model."""

from __future__ import annotations

import time

import pytest
from textual.widget import Widget

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.ui.screens.requests import ElicitFormScreen
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.fakes import ScriptedEngine, call
from tests.test_client_requests import asking_config
from tests.ui_helpers import dialog_armed, make_app, send, wait_for, wait_ready

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)


def wholly_in_view(screen, widget: Widget) -> bool:
    """Whether every cell of ``widget`` is drawn on ``screen`` (none scrolled or clipped away)."""
    shown = screen._compositor.visible_widgets.get(widget)
    if shown is None:
        return False
    region, clip = shown
    return region.area > 0 and region.intersection(clip) == region


def label_of(form: ElicitFormScreen, index: int) -> Widget:
    return form.query(".request-label")[index]


@pytest.mark.parametrize("size", [(80, 24), (120, 35)])
async def test_the_forms_message_and_the_focused_fields_label_stay_in_view(size):
    engine = ScriptedEngine([[call("sign_up", {})], "Final."])
    app = make_app(engine, [asking_config("modern")], policy=ApprovalPolicy("auto"))
    async with app.run_test(size=size) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "sign me up")
        await wait_for(pilot, lambda: dialog_armed(app, ElicitFormScreen), what="the form")
        form = app.screen
        message = form.query_one(".request-info")
        armed = time.monotonic()
        await wait_for(pilot, lambda: time.monotonic() - armed > 2, what="two seconds with the form up")
        assert wholly_in_view(form, message), "the server's message scrolled away"
        assert wholly_in_view(form, label_of(form, 0)), "the first field's label is not in view"
        for index in range(1, len(form.fields)):
            await pilot.press("tab")
            await wait_for(pilot, lambda: form.focused is form.query_one(f"#field-{index}"), what=f"field {index}")
            await pilot.pause()
            assert wholly_in_view(form, message), f"the message scrolled away at field {index}"
            assert wholly_in_view(form, label_of(form, index)), f"field {index}'s label is not in view"
