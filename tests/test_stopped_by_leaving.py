"""Clearing the chat or opening another conversation while a call runs stops the call, and the
conversation's file says so (cancelled, with the stop's message), so resuming it shows what
happened instead of "interrupted: may or may not have run" and a question to run it again."""

from __future__ import annotations

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.agent.turn import STOPPED_MESSAGE
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.transcript import Exchange, Step, Transcript, parse, read_transcript_text, render
from tests.fakes import ScriptedEngine, call
from tests.ui_helpers import SIZE, chat_text, make_app, send, wait_for, wait_ready


def the_stopped_call_as_saved(path) -> None:
    transcript = parse(read_transcript_text(path), path)
    assert transcript.pending_proposals() == [], "the file leaves the call open: resuming it says 'interrupted'"
    [proposal] = transcript.exchanges[0].steps[0].proposals
    assert proposal.result is not None
    assert (proposal.result.status, proposal.result.content) == ("cancelled", STOPPED_MESSAGE)


async def start_a_long_call(pilot, app) -> None:
    await wait_ready(pilot, app)
    await send(pilot, "sleep for 30 seconds")
    await wait_for(
        pilot,
        lambda: any(r.state is CallState.RUNNING for r in app.calls_table.records.values()),
        what="the call running",
    )


async def test_clearing_the_chat_records_the_running_call_as_stopped(tmp_path):
    path = tmp_path / "sleeping.md"
    engine = ScriptedEngine([[call("sleep", {"seconds": 30})], "never said"])
    app = make_app(engine, policy=ApprovalPolicy("auto"), transcript_file=path)
    async with app.run_test(size=SIZE) as pilot:
        await start_a_long_call(pilot, app)
        await app.action_clear_chat()
    the_stopped_call_as_saved(path)


async def test_opening_another_conversation_records_the_running_call_as_stopped(tmp_path):
    path = tmp_path / "sleeping.md"
    other = tmp_path / "other.md"
    other.write_text(render(Transcript([Exchange("hello", "demo model", [Step(text="Hi.")])])), encoding="utf-8")
    engine = ScriptedEngine([[call("sleep", {"seconds": 30})], "never said"])
    app = make_app(engine, policy=ApprovalPolicy("auto"), transcript_file=path)
    async with app.run_test(size=SIZE) as pilot:
        await start_a_long_call(pilot, app)
        assert await app.open_conversation(other)
    the_stopped_call_as_saved(path)


async def test_a_prompt_waiting_when_another_conversation_opens_never_runs_there(tmp_path):
    """A prompt typed during a reply belongs to that conversation: opening another one drops it
    (and says so), as clearing the chat does; it never becomes the opened conversation's question."""
    path = tmp_path / "sleeping.md"
    other = tmp_path / "other.md"
    other.write_text(render(Transcript([Exchange("hello", "demo model", [Step(text="Hi.")])])), encoding="utf-8")
    engine = ScriptedEngine([[call("sleep", {"seconds": 30})], "never said", "the waiting prompt's answer"])
    app = make_app(engine, policy=ApprovalPolicy("auto"), transcript_file=path)
    async with app.run_test(size=SIZE) as pilot:
        await start_a_long_call(pilot, app)
        await send(pilot, "a question for the sleeping conversation")  # waits behind the running turn
        await wait_for(pilot, lambda: app.status_bar.waiting == 1, what="the prompt to wait")
        assert app.status_bar.context_tokens > 0
        assert await app.open_conversation(other)
        assert app.status_bar.context_tokens == 0, "the status bar counts the tokens of the conversation left"
        await wait_for(
            pilot,
            lambda: any("resumed other.md (1 waiting prompt dropped)" == n.message for n in app._notifications),
            what="the notice that the waiting prompt was dropped",
        )
        await wait_for(pilot, lambda: not app.turns.running, what="the stopped turn to end")
        await pilot.pause(0.3)  # a waiting prompt that was kept would start its turn now
        assert app.status_bar.waiting == 0
        assert not any(
            "sleeping conversation" in str(message.get("content")) for prompt in engine.prompts for message in prompt
        ), "the waiting prompt reached the model"
        assert "sleeping conversation" not in chat_text(app)
    assert "sleeping conversation" not in other.read_text(encoding="utf-8")


async def test_leaving_while_the_panes_are_mounted_starts_nothing_after_it():
    """SIGTERM at the first frame lands while the app mounts its panes: the rest of the start
    (showing the conversation, starting the servers) does not run after the app began to leave,
    where it found the panes gone (a NoMatches traceback and exit 1 instead of 143)."""
    import asyncio

    app = make_app(ScriptedEngine([]))
    started: list[bool] = []
    app.start_up.start_services = lambda: started.append(app.leaving)
    layout = app._layout

    def layout_then_leave():
        widgets = layout()
        asyncio.ensure_future(app.action_quit(return_code=143))  # as the app's SIGTERM handler does
        return widgets

    app._layout = layout_then_leave
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.leaving, what="the app to leave")
        await pilot.pause(0.2)
    assert started == []
    assert app.return_code == 143
