"""Snapshots of what a deciding dialog shows before it takes keys, and of a server's page address
(tests/__snapshots__/): the approval dialog not yet armed (keys dimmed, "keys active in 0.5 s"),
and the URL dialog with a refused address and with a user name before the host. The real app,
the real demo and asking servers, a scripted model. Update with
``pytest tests/test_snapshots_dialogs.py --snapshot-update`` and look at the SVGs before committing."""

from __future__ import annotations

import pytest

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.ui.screens import deciding
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from mcp_chat_tui.ui.screens.requests import ElicitUrlScreen
from tests.fakes import ScriptedEngine, call
from tests.test_client_requests import asking_config
from tests.test_snapshots import start
from tests.ui_helpers import dialog_armed, make_app, send, wait_for


def test_approval_dialog_before_it_is_armed(snap_compare, monkeypatch):
    monkeypatch.setattr(deciding, "ARMING_DELAY", 600.0)  # held in its first half second for the picture

    async def run_before(pilot) -> None:
        app = pilot.app
        await start(pilot)
        await send(pilot, "what is 12 * 7?")
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, ApprovalScreen)
                and app.screen.query("#approval-keys")
                and app.screen._drawn_at is not None
                and any(r.state.value == "awaiting approval" for r in app.calls_table.records.values())
            ),
            what="the approval dialog, drawn",
        )
        await pilot.pause(0.2)
        assert not app.screen.armed

    engine = ScriptedEngine([[call("calculator", {"expression": "12 * 7"})], "84"])
    assert snap_compare(make_app(engine), terminal_size=(80, 24), run_before=run_before)


@pytest.mark.parametrize(
    "url",
    ["file:///etc/shadow", "https://bank.example@evil.example/login?next=%2Faccount"],
    ids=["refused", "user-name"],
)
def test_url_dialog(snap_compare, url):
    async def run_before(pilot) -> None:
        app = pilot.app
        await start(pilot)
        await send(pilot, "open it")
        await wait_for(pilot, lambda: dialog_armed(app, ElicitUrlScreen), what="the URL dialog, armed")
        await pilot.pause()

    engine = ScriptedEngine([[call("open_url", {"url": url})], "Done."])
    app = make_app(engine, [asking_config("modern")], policy=ApprovalPolicy("auto"))
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
