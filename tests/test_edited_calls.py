"""A call the user edits before it runs: it runs with the user's arguments, the model is told so and
to what, who allowed it says "edited", and the conversation file keeps both the model's arguments
and the ones that ran (resume shows them)."""

from __future__ import annotations

import json

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.approval import EDITED_LABEL
from mcp_chat_tui.agent.events import ApprovalChoice, ApprovalDecision, CallDecided, CallFinished, CallStatus
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.transcript import parse
from mcp_chat_tui.transcript.recorder import TranscriptRecorder
from mcp_chat_tui.transcript.render import render
from tests.fakes import ScriptedEngine, call
from tests.helpers import demo_config
from tests.test_agent import Recorder


async def test_an_edited_call_runs_with_the_users_arguments_and_the_model_is_told():
    engine = ScriptedEngine([[call("calculator", {"expression": "12 * 7"})], "It is 96."])
    async with ServerHub([demo_config("demo")]) as hub:
        await hub.start_all()
        agent = Agent(engine, hub, ApprovalPolicy("ask"))
        sink = Recorder(ApprovalDecision(ApprovalChoice.ALLOW_ONCE, arguments={"expression": "12 * 8"}))
        await agent.run_turn("what is 12 * 7?", sink)
    [decided] = sink.of(CallDecided)
    assert decided.allowed_by == EDITED_LABEL and decided.ran_with == {"expression": "12 * 8"}
    assert decided.call.arguments == {"expression": "12 * 7"}  # the model's own, kept
    [finished] = sink.of(CallFinished)
    assert finished.status == CallStatus.DONE and finished.result.text == "12 * 8 = 96"
    told = [m["content"] for m in engine.prompts[1] if m["role"] == "tool"]
    assert told == [
        'The user edited this call\'s arguments before it ran; it ran with: {"expression": "12 * 8"}\n\n12 * 8 = 96'
    ]


async def test_arguments_given_back_unchanged_are_no_edit():
    engine = ScriptedEngine([[call("calculator", {"expression": "1 + 1"})], "2."])
    async with ServerHub([demo_config("demo")]) as hub:
        await hub.start_all()
        agent = Agent(engine, hub, ApprovalPolicy("ask"))
        sink = Recorder(ApprovalDecision(ApprovalChoice.ALLOW_ONCE, arguments={"expression": "1 + 1"}))
        await agent.run_turn("1 + 1?", sink)
    [decided] = sink.of(CallDecided)
    assert decided.allowed_by == "you (once)" and decided.ran_with is None


def test_the_file_keeps_the_models_arguments_and_the_ones_that_ran():
    recorder = TranscriptRecorder()
    recorder.user("what is 12 * 7?")
    proposal = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "calculator", "arguments": json.dumps({"expression": "12 * 7"})},
    }
    recorder.proposed(proposal)
    recorder.chose("call_1", ApprovalChoice.ALLOW_ONCE.value, EDITED_LABEL, {"expression": "12 * 8"})
    again = parse(render(recorder.transcript))
    [kept] = again.exchanges[0].steps[0].proposals
    assert kept.ran_with == {"expression": "12 * 8"} and kept.allowed_by == EDITED_LABEL
    assert json.loads(kept.call["function"]["arguments"]) == {"expression": "12 * 7"}
