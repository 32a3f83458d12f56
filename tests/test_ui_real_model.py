"""The full-screen app on the real MLX engine: approve, deny and always on the demo model and demo
server; Esc stopping a real generation (on a random model, which never stops by itself); a model
downloaded at start-up (from a stand-in for the hub)."""

from __future__ import annotations

import re

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.cli.chat import demo_model_path
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.engine import loading
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from tests.fakes import FakeHubDownload
from tests.helpers import mentions
from tests.ui_helpers import SIZE, chat_text, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done


def real_app(**options):
    return make_app(MlxEngine(demo_model_path()), policy=ApprovalPolicy("ask"), **options)


async def test_approve_runs_the_tool_and_the_answer_streams_in():
    app = real_app(frozen=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "what is 12 * 7?")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the approval dialog")
        assert app.screen.call.tool == "calculator" and app.screen.call.arguments == {"expression": "12 * 7"}
        await pilot.press("y")
        await wait_turn_done(pilot, app)
        [record] = app.calls_table.records.values()
        assert record.state is CallState.DONE and record.duration is not None and record.duration > 0

        def cell(column):
            return str(app.calls_table.get_cell(record.key, column))

        assert "done" in cell("state") and cell("took").endswith(("ms", "s"))
        assert mentions(app.agent.messages[-1]["content"], "84"), app.agent.messages[-1]["content"]
        assert mentions(chat_text(app), "84")


async def test_deny_tells_the_model_and_runs_nothing():
    app = real_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "what is 12 * 7?")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the approval dialog")
        await pilot.press("n")
        await wait_turn_done(pilot, app)
        [record] = app.calls_table.records.values()
        assert record.state is CallState.DENIED
        assert app.hub.status("demo").call_count == 0
        tool_message = next(m for m in app.agent.messages if m["role"] == "tool")
        assert "denied" in tool_message["content"]
        answer = app.agent.messages[-1]
        assert answer["role"] == "assistant" and "tool_calls" not in answer
        assert answer["content"] == "You denied the calculator call, so I did not run it."
        assert answer["content"] in chat_text(app)


async def test_always_allow_skips_the_dialog_the_second_time():
    app = real_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "what is 12 * 7?")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the approval dialog")
        await pilot.press("t")
        await wait_turn_done(pilot, app)
        await send(pilot, "what is 9 * 8?")  # the demo model miscopies "345 + 89" since it is trained on conversations
        await wait_turn_done(pilot, app)
        assert not isinstance(app.screen, ApprovalScreen)
        states = [r.state for r in app.calls_table.records.values()]
        assert states == [CallState.DONE, CallState.DONE]
        assert app.hub.status("demo").call_count == 2
        assert mentions(app.agent.messages[-1]["content"], "72"), app.agent.messages[-1]["content"]


async def test_escape_stops_a_real_generation_and_the_engine_answers_again(tiny_model):
    engine = MlxEngine(str(tiny_model), max_tokens=1_000_000)
    app = make_app(engine, servers=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "tell me everything")
        await wait_for(pilot, lambda: len(app.reply.text) > 40, what="streaming")
        await pilot.press("escape")
        await wait_turn_done(pilot, app, timeout=10)
        partial = app.agent.messages[-1]
        assert partial["role"] == "assistant" and len(partial["content"]) > 40
        assert "■ stopped" in chat_text(app)
        engine.max_tokens = 5
        await send(pilot, "and again")
        await wait_turn_done(pilot, app, timeout=30)
        assert [m["role"] for m in app.agent.messages] == ["user", "assistant", "user", "assistant"]
        assert chat_text(app).count("■ stopped") == 1


async def test_start_up_shows_the_download_with_a_bar_and_its_bytes(tiny_model, tmp_path, monkeypatch):
    monkeypatch.setattr(loading, "snapshot_download", FakeHubDownload(tiny_model, tmp_path / "snapshot", pause=0.05))
    total_mb = sum(p.stat().st_size for p in tiny_model.iterdir() if p.is_file()) / 1e6
    app = make_app(MlxEngine("someone/tiny-model", max_tokens=3), servers=[])
    lines: list[str] = []

    def status_line() -> str:
        return app.status_bar.render().plain

    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: lines.append(status_line()) or app.ready.is_set(), 60, "the model")
        lines.append(status_line())
    downloading = [line for line in lines if "downloading" in line]
    assert downloading, lines
    middle = [
        line
        for line in downloading
        if re.search(r"━╸?─+\s+(\d+)%", line) and 0 < int(re.search(r"(\d+)%", line).group(1)) < 100
    ]
    assert middle, downloading  # a part-filled bar with its percentage…
    assert re.search(rf"\d+\.\d of {total_mb:.1f} MB", middle[0]), middle[0]  # …and the bytes
    assert "ready" in lines[-1] and "━" not in lines[-1] and "%" not in lines[-1]
