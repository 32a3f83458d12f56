"""Calls run as tasks in the app (Pilot): the sidebar row and the card show the task's status, message
and progress while it runs; Esc cancels it at its server; ``x`` on its row cancels it alone and the
turn goes on; the app quit while a task ran leaves it running, and the conversation opened again
shows it "finished while the app was closed". A scripted model, tests/servers/task_server.py.
"""

from __future__ import annotations

import asyncio

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.agent.turn import CANCELLED_MESSAGE
from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.transcript import parse, read_transcript_text
from mcp_chat_tui.ui.screens.detail import call_report
from tests.fakes import ScriptedEngine, call
from tests.helpers import free_port, start_http_server, wait_until
from tests.test_footer import labels
from tests.test_tasks_hub import TASK_SERVER, logged, task_config
from tests.ui_helpers import SIZE, chat_text, make_app, send, wait_for, wait_ready, wait_turn_done


def cell(app, record, column: str) -> str:
    return str(app.calls_table.get_cell(record.key, column))


async def running_task(pilot, app):
    """The one call's record, once its task has reported progress."""
    await wait_for(pilot, lambda: len(app.calls_table.records) == 1, what="the call's row")
    [record] = app.calls_table.records.values()
    await wait_for(pilot, lambda: record.task is not None and record.progress is not None, what="the task's progress")
    await wait_for(pilot, lambda: "frame" in cell(app, record, "result"), what="the row to show it")
    return record


async def test_the_sidebar_shows_a_running_task_and_esc_cancels_it_at_its_server(tmp_path):
    log, path = tmp_path / "server.log", tmp_path / "chat.md"
    engine = ScriptedEngine([[call("endless_render", {})], "never asked for"])
    app = make_app(engine, [task_config(log)], policy=ApprovalPolicy("auto"), transcript_file=path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "render forever")
        record = await running_task(pilot, app)
        task_id = record.task.task_id
        assert cell(app, record, "result").startswith("⧗ task working: frame")  # its status and message
        assert cell(app, record, "state").startswith("▶ ▰")  # its progress bar
        assert "⧗ task working: frame" in str(app.call_store.cards[record.key].render())
        assert f"task at its server: {task_id} (task working" in call_report(record, app.clock)
        await pilot.press("escape")
        await wait_turn_done(pilot, app)
        assert record.state is CallState.CANCELLED
        assert wait_until(lambda: f"cancelled {task_id}" in logged(log), 10), "tasks/cancel did not reach the server"
    assert engine.replies == ["never asked for"]
    [proposal] = parse(read_transcript_text(path), path).exchanges[0].steps[0].proposals
    assert proposal.task_id == task_id and proposal.result.status == "cancelled"


async def test_x_on_a_running_tasks_row_cancels_it_alone_and_the_turn_goes_on(tmp_path):
    log = tmp_path / "server.log"
    engine = ScriptedEngine([[call("endless_render", {})], "The render was cancelled."])
    app = make_app(engine, [task_config(log)], policy=ApprovalPolicy("auto"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "render forever")
        record = await running_task(pilot, app)
        await pilot.press("f3")
        await wait_for(pilot, lambda: "x Cancel call" in labels(app), what="the footer to offer x")
        await pilot.press("x")
        await wait_turn_done(pilot, app)
        await wait_for(pilot, lambda: "x Cancel call" not in labels(app), what="the footer to stop offering x")
        assert record.state is CallState.CANCELLED
        assert wait_until(lambda: f"cancelled {record.task.task_id}" in logged(log), 10)
        assert "The render was cancelled." in chat_text(app)
        assert {"role": "tool", "tool_call_id": "call_1", "name": "endless_render", "content": CANCELLED_MESSAGE} in (
            app.agent.messages
        )
        assert app.calls_table.check_action("cancel_call", ()) is False, "x is offered for a call that is over"


async def test_a_task_left_running_at_quit_shows_finished_while_the_app_was_closed(tmp_path):
    log, path = tmp_path / "server.log", tmp_path / "chat.md"
    port = free_port()
    server = start_http_server([TASK_SERVER, "--http", str(port), "--log", str(log)], port)
    films = ServerConfig(name="films", type="http", url=f"http://127.0.0.1:{port}/mcp")
    try:
        engine = ScriptedEngine([[call("render", {"frames": 5, "frame_seconds": 0.4})], "never asked for"])
        app = make_app(engine, [films], policy=ApprovalPolicy("auto"), transcript_file=path)
        async with app.run_test(size=SIZE) as pilot:
            await wait_ready(pilot, app)
            await send(pilot, "render the film")
            record = await running_task(pilot, app)
            task_id = record.task.task_id
            await app.action_quit()
        assert wait_until(lambda: f"completed {task_id}" in logged(log), 30), "the task did not go on at its server"
        assert f"cancelled {task_id}" not in logged(log)
        saved = parse(read_transcript_text(path), path)
        [proposal] = saved.exchanges[0].steps[0].proposals
        assert proposal.task_id == task_id and proposal.result is None

        engine = ScriptedEngine(["It rendered five frames."])
        resumed = make_app(engine, [films], policy=ApprovalPolicy("ask"), transcript_file=path, transcript=saved)
        async with resumed.run_test(size=SIZE) as pilot:
            await wait_ready(pilot, resumed)
            await wait_turn_done(pilot, resumed)
            [record] = resumed.calls_table.records.values()
            assert record.state is CallState.DONE and record.task.finished_while_closed
            card = str(resumed.call_store.cards[record.key].render())
            assert "⧗ task completed: done (finished while the app was closed)" in card
            assert "It rendered five frames." in chat_text(resumed)
        assert [line for line in logged(log) if line.startswith("created")] == [
            f'created render {task_id} {{"frame_seconds": 0.4, "frames": 5}}'
        ]
        result = parse(read_transcript_text(path), path).exchanges[0].steps[0].proposals[0].result
        assert result.status == "done" and result.content == "rendered 5 frames" and result.task.finished_while_closed
    finally:
        server.kill()
        await asyncio.to_thread(server.wait, 10)
