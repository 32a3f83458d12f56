"""Markup and terminal escape sequences from tools and models show as literal text everywhere."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from mcp_chat_tui.ui.screens.detail import CallDetailScreen
from mcp_chat_tui.ui.widgets.chat import ToolCallCard
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.fakes import ScriptedEngine, call
from tests.helpers import fixture_config
from tests.ui_helpers import SIZE, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)

PAYLOAD = "[bold red]x[/] [link=http://a]click[/link] \x1b[2J \x1b]8;;http://evil\x1b\\spoof\x1b]8;;\x1b\\"


def assert_literal(content) -> None:
    plain = content.plain
    assert "[bold red]x[/]" in plain and "[link=http://a]" in plain
    # Shown as an escape, either ours (\\x1b) or JSON's (\\u001b) inside pretty-printed arguments.
    assert ("\\x1b[2J" in plain or "\\u001b[2J" in plain) and ("\\x1b]8;;" in plain or "\\u001b]8;;" in plain)
    assert "\x1b" not in plain
    for span in getattr(content, "spans", []):
        style = str(span.style)
        assert "link" not in style and "red" not in style, f"markup was interpreted: {style}"


def svg_has_no_escape(app) -> None:
    assert "\x1b" not in app.export_screenshot()


async def test_arguments_and_results_render_literally_everywhere():
    engine = ScriptedEngine([[call("echo", {"text": PAYLOAD})], "done"])
    app = make_app(engine, [fixture_config("fx", in_process=True)], policy=ApprovalPolicy("ask"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "echo it")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="dialog")
        arguments = app.screen.query_one("#approval-arguments", Static)
        assert_literal(arguments.render())
        svg_has_no_escape(app)
        await pilot.press("y")
        await wait_turn_done(pilot, app)

        arguments_cell = app.calls_table.get_cell("call-1", "args")  # the start of them: the column cuts the rest
        assert arguments_cell.plain.startswith('text="[bold') and "\x1b" not in arguments_cell.plain
        assert not any("red" in str(span.style) or "link" in str(span.style) for span in arguments_cell.spans)
        assert app.calls_table.records["call-1"].result.text == PAYLOAD, "the result itself is kept intact"

        await pilot.press("f3", "enter")
        assert isinstance(app.screen, CallDetailScreen)
        body = app.screen.query(".detail-body Static").first(Static)
        content = body.render()
        assert_literal(content)
        assert content.plain.count("[bold red]x[/]") == 2, "arguments and result both shown"
        svg_has_no_escape(app)


async def test_a_malformed_call_with_escapes_shows_literally_in_the_chat():
    from mcp_chat_tui.engine.events import ToolCallMalformed

    engine = ScriptedEngine([[ToolCallMalformed("call_1", f"<tool_call>{PAYLOAD}", "not JSON")], "ok"])
    app = make_app(engine, [fixture_config("fx", in_process=True)])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "go")
        await wait_turn_done(pilot, app)
        card = app.query_one(ToolCallCard)
        plain = card.render().plain
        assert "not JSON" in plain and "[bold red]x[/]" in plain and "\x1b" not in plain
        svg_has_no_escape(app)


async def test_model_text_with_escape_sequences_cannot_reach_the_terminal():
    engine = ScriptedEngine(["before \x1b[2J after \x1b]8;;http://x\x1b\\link"])
    app = make_app(engine, [fixture_config("fx", in_process=True)])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "hi")
        await wait_turn_done(pilot, app)
        svg = app.export_screenshot()
        assert "\x1b" not in svg and "\\x1b[2J" in svg.replace("&#160;", " ")
