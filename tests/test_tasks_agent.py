"""Calls run as tasks through the agent and the transcript: the task's id is on disk while it runs, its
result recorded like any call's; one task cancelled alone while the turn goes on; a conversation the
app left while its task ran fetches the result when it goes on, asking nothing and calling nothing
again. A scripted model, the real hub and tests/servers/task_server.py, a real conversation file.
"""

from __future__ import annotations

import asyncio

import pytest

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.events import ApprovalNeeded, CallFinished, CallTask
from mcp_chat_tui.agent.turn import CANCELLED_MESSAGE
from mcp_chat_tui.conversation.recording import RecordingSink, pending_calls, tee
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.transcript import (
    AutoSaver,
    Transcript,
    TranscriptRecorder,
    parse,
    read_transcript_text,
    to_openai_messages,
)
from tests.fakes import ScriptedEngine, call
from tests.helpers import eventually
from tests.test_tasks_hub import logged, task_config


class Events:
    """Keeps every event; ``on_task`` runs for each task state heard; approvals are a failure here."""

    def __init__(self, on_task=None) -> None:
        self.events: list = []
        self.on_task = on_task

    def __call__(self, event) -> None:
        self.events.append(event)
        if isinstance(event, ApprovalNeeded):
            raise AssertionError(f"asked about {event.call.tool}")
        if isinstance(event, CallTask) and self.on_task is not None:
            self.on_task(event)

    def of(self, kind) -> list:
        return [event for event in self.events if isinstance(event, kind)]


@pytest.fixture
async def films(tmp_path):
    log = tmp_path / "server.log"
    async with ServerHub([task_config(log)]) as hub:
        await hub.start_all()
        yield hub, log


def recording(path, engine) -> tuple[TranscriptRecorder, RecordingSink]:
    recorder = TranscriptRecorder(Transcript(), AutoSaver(path))
    return recorder, RecordingSink(recorder, "scripted", engine)


async def test_the_tasks_id_is_on_disk_while_it_runs_and_its_result_is_recorded(films, tmp_path):
    hub, _ = films
    path = tmp_path / "chat.md"
    engine = ScriptedEngine([[call("render", {"frames": 4, "frame_seconds": 0.4})], "Rendered."])
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    recorder, sink = recording(path, engine)
    sink.guard_starts(agent)
    events = Events()
    turn = asyncio.ensure_future(agent.run_turn("render it", tee(sink, events)))
    assert await eventually(lambda: events.of(CallTask)), "the task was never created"
    task_id = events.of(CallTask)[0].task.task_id

    def on_disk():
        return parse(read_transcript_text(path), path).exchanges[0].steps[0].proposals[0] if path.exists() else None

    assert await eventually(lambda: on_disk() is not None and on_disk().task_id == task_id), "the id is not saved"
    assert on_disk().result is None, "the task ended before its id was seen on disk"
    await turn
    recorder.close()
    [finished] = events.of(CallFinished)
    assert finished.status is CallState.DONE and finished.content_for_model == "rendered 4 frames"
    proposal = on_disk()
    assert proposal.task_id == task_id and proposal.result.status == "done"
    assert proposal.result.task.task_id == task_id and proposal.result.task.status == "completed"
    assert proposal.result.progress.progress == 4


async def test_a_task_cancelled_alone_ends_cancelled_and_the_turn_goes_on(films):
    hub, log = films
    engine = ScriptedEngine([[call("endless_render", {})], "The render was cancelled."])
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    events = Events(on_task=lambda event: agent.cancel_call(event.call.id))
    await agent.run_turn("render forever", events)
    [finished] = events.of(CallFinished)
    assert finished.status is CallState.CANCELLED and finished.content_for_model == CANCELLED_MESSAGE
    assert finished.duration is not None
    task_id = events.of(CallTask)[0].task.task_id
    assert f"cancelled {task_id}" in logged(log)
    assert agent.messages[-1] == {"role": "assistant", "content": "The render was cancelled."}
    assert {"role": "tool", "tool_call_id": "call_1", "name": "endless_render", "content": CANCELLED_MESSAGE} in (
        engine.prompts[1]
    )
    assert not agent.cancel_call("call_1"), "a call that is over cannot be cancelled"


async def test_a_conversation_left_while_its_task_ran_fetches_the_result_and_calls_nothing_again(films, tmp_path):
    hub, log = films
    path = tmp_path / "chat.md"
    engine = ScriptedEngine([[call("render", {"frames": 2, "frame_seconds": 0.3})], "never asked for"])
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    recorder, sink = recording(path, engine)
    sink.guard_starts(agent)
    events = Events()
    turn = asyncio.ensure_future(agent.run_turn("render it", tee(sink, events)))
    assert await eventually(lambda: events.of(CallTask))
    hub.leaving = True  # the app ends: the file is closed first, then the turn is stopped
    recorder.close()
    turn.cancel()
    await asyncio.gather(turn, return_exceptions=True)
    task_id = events.of(CallTask)[0].task.task_id
    assert await eventually(lambda: f"completed {task_id}" in logged(log)), "the task did not go on at its server"
    hub.leaving = False

    saved = parse(read_transcript_text(path), path)
    assert saved.turn_goes_on() and saved.pending_proposals()[0].task_id == task_id
    engine = ScriptedEngine(["It rendered 2 frames."])
    agent = Agent(engine, hub, ApprovalPolicy("ask"))  # nothing is asked: no call runs
    agent.load_messages(to_openai_messages(saved))
    recorder, sink = recording(path, engine)
    recorder.reset(saved)
    recorder.saver = AutoSaver(path)
    events = Events()
    await agent.continue_turn(pending_calls(saved.pending_proposals(), hub.find_tool), tee(sink, events))
    recorder.close()
    [finished] = events.of(CallFinished)
    assert finished.status is CallState.DONE and finished.content_for_model == "rendered 2 frames"
    assert finished.result.task.finished_while_closed
    told = {"role": "tool", "tool_call_id": "call_1", "name": "render", "content": "rendered 2 frames"}
    assert told in engine.prompts[0]
    assert [line for line in logged(log) if line.startswith("created")] == [
        f'created render {task_id} {{"frame_seconds": 0.3, "frames": 2}}'
    ]
    result = parse(read_transcript_text(path), path).exchanges[0].steps[0].proposals[0].result
    assert result.status == "done" and result.task.finished_while_closed and result.task.task_id == task_id
