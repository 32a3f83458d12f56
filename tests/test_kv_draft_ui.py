"""The full-screen app with a quantized KV cache and a draft model: the status bar says both are on,
the draft is downloaded and loaded with the model (its progress shown), and a whole turn runs."""

from __future__ import annotations

import pytest

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.cli.chat import demo_model_path
from mcp_chat_tui.engine import loading
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.fakes import FakeHubDownload
from tests.helpers import mentions
from tests.ui_helpers import SIZE, chat_text, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)


async def test_the_demo_model_with_both_options_answers_and_the_status_bar_names_them():
    demo = demo_model_path()
    engine = MlxEngine(demo, kv_bits=8, kv_group_size=32, quantized_kv_start=0, draft_model=demo)
    app = make_app(engine, policy=ApprovalPolicy("ask"), frozen=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert app.fatal_error is None, app.fatal_error
        status = app.status_bar.render().plain
        assert "KV 8-bit, groups of 32 · draft model (3 tokens)" in status, status
        await send(pilot, "what is 12 * 7?")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the approval dialog")
        assert app.screen.call.arguments == {"expression": "12 * 7"}
        await pilot.press("y")
        await wait_turn_done(pilot, app)
        assert mentions(chat_text(app), "84")


async def test_a_draft_from_the_hub_is_downloaded_with_a_bar_at_start_up(tiny_model, tmp_path, monkeypatch):
    monkeypatch.setattr(loading, "snapshot_download", FakeHubDownload(tiny_model, tmp_path / "snapshot", pause=0.05))
    app = make_app(MlxEngine(str(tiny_model), max_tokens=3, draft_model="someone/tiny-draft"), servers=[])
    lines: list[str] = []

    def status_line() -> str:
        return app.status_bar.render().plain

    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: lines.append(status_line()) or app.ready.is_set(), 60, "the model")
        lines.append(status_line())
    assert any("downloading" in line and "━" in line for line in lines), lines
    assert "ready" in lines[-1] and "draft someone/tiny-draft (3 tokens)" in lines[-1], lines[-1]
