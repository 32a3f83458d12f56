"""A tool call the model proposes and the app asks about comes on screen in one frame: its row,
its card and its approval dialog over them (``FrameHold`` in ui/agent_events.py's ``AgentEventView``), not a frame of
the chat with the row and card and then the dialog's, which draws that chat again under its tint.
Counted in frames, not timed: bench/key_latency.py times it."""

from __future__ import annotations

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.ui import agent_events
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from tests.fakes import ScriptedEngine, call
from tests.ui_helpers import SIZE, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done


def frames_until_dialog(app) -> list[tuple[str, int]]:
    """From now on, each frame drawn until the first of the approval dialog: the screen drawn and the
    calls the sidebar lists then."""
    frames: list[tuple[str, int]] = []
    display = app._display

    def noted(screen, renderable) -> None:
        display(screen, renderable)
        if renderable is not None and not any(name == "ApprovalScreen" for name, _ in frames):
            frames.append((type(screen).__name__, len(app.calls_table.records)))

    app._display = noted
    return frames


def a_frame_between(app) -> None:
    """Each call's row and card is followed by a tick of the screen's refresh (as a busy app may have
    one while the next message waits): a frame is drawn there unless the frames are held."""
    add_record = app.agent_view._add_record

    async def added_then_a_tick(record) -> None:
        await add_record(record)
        await app.screen.wait_for_refresh()

    app.agent_view._add_record = added_then_a_tick


async def test_the_calls_row_card_and_dialog_come_in_one_frame():
    engine = ScriptedEngine([[call("calculator", {"expression": "2 + 2"})], "It is 4."])
    app = make_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        a_frame_between(app)
        frames = frames_until_dialog(app)
        await send(pilot, "what is 2 + 2?")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the dialog armed")
        # no frame of the chat shows the call before its dialog's frame does
        assert [frame for frame in frames if frame[1]] == [("ApprovalScreen", 1)], frames
        await pilot.press("y")
        await wait_turn_done(pilot, app)
        assert app.calls_table.records and app.chat.query("ToolCallCard")


async def test_a_call_that_is_not_asked_about_lets_the_frames_go_when_shown(monkeypatch):
    """With no dialog coming, the hold ends once the call's messages are handled, not at its limit
    (a minute here: the turn would wait for it)."""
    monkeypatch.setattr(agent_events, "CALL_HOLD_LIMIT", 60.0)
    engine = ScriptedEngine([[call("calculator", {"expression": "2 + 2"})], "It is 4."])
    app = make_app(engine, policy=ApprovalPolicy("auto"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "what is 2 + 2?")
        await wait_turn_done(pilot, app)
        await wait_for(pilot, lambda: not app._batch_count, what="the frames let go")
        frames = app.agent_view._call_frames
        assert frames is not None and not frames.holding
