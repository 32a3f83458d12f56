"""Turns that did not simply answer, through the conversation file: written as they happen, read
back, and the model sent exactly the same messages (malformed calls as plain messages, repeats, the
cap on tool rounds, a reply with no text); a file from before, with calls named
``malformed_tool_call``, sends the model the new shape."""

from __future__ import annotations

import json

import pytest

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.events import TurnEnd
from mcp_chat_tui.conversation.recording import RecordingSink, pending_calls, tee
from mcp_chat_tui.core.feedback import APP_SENDER, MALFORMED_NAME
from mcp_chat_tui.engine.events import TextDelta, ToolCallMalformed
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.transcript import Transcript, TranscriptRecorder, parse, render, to_openai_messages
from mcp_chat_tui.ui.transcript_view import reply_note
from tests.fakes import ScriptedEngine, call
from tests.helpers import demo_config, fixture_config
from tests.test_agent import Recorder

FENCED = '```json\n{"name": "add-17-and-25", "arguments": {}}\n```'


@pytest.fixture
async def hub():
    servers = ServerHub([demo_config("demo"), fixture_config("fx", timeout=1.0, in_process=True)])
    async with servers:
        await servers.start_all()
        yield servers


async def recorded_turn(hub, replies: list, **limits) -> tuple[Agent, Transcript, TurnEnd]:
    """Run one turn with ``replies`` and a recorder; return the agent and the file read back."""
    agent = Agent(ScriptedEngine([*replies]), hub, ApprovalPolicy("auto"), **limits)
    recorder = TranscriptRecorder()
    end = await agent.run_turn("the question", tee(RecordingSink(recorder, "scripted"), Recorder()))
    return agent, parse(render(recorder.transcript)), end


TURNS = {
    "malformed and good calls in one reply": (
        [
            [
                TextDelta("Let me see."),
                call("calculator", {"expression": "1+1"}, "call_1"),
                ToolCallMalformed("call_2", FENCED, "unknown tool 'add-17-and-25'"),
            ],
            [ToolCallMalformed("call_1", "{oops", "not JSON")],
            "2",
        ],
        {},
        TurnEnd.ANSWERED,
    ),
    "repeats": ([[call("echo", {"text": "hi"})] for _ in range(3)], {}, TurnEnd.REPEATED_CALLS),
    "a repeat, then the answer": ([[call("echo", {"text": "hi"})] for _ in range(2)] + ["hi"], {}, TurnEnd.ANSWERED),
    "the cap": (
        [[call("echo", {"text": str(n)})] for n in range(3)] + ["so far"],
        {"max_tool_rounds": 2},
        TurnEnd.TOOL_ROUND_LIMIT,
    ),
    "the cap, still calling": (
        [[call("echo", {"text": str(n)})] for n in range(5)],
        {"max_tool_rounds": 1},
        TurnEnd.TOOL_ROUND_LIMIT,
    ),
    "no text after a call": ([[call("echo", {"text": "x"})], []], {}, TurnEnd.NO_ANSWER),
    "only whitespace": (["   "], {}, TurnEnd.NO_ANSWER),
}


@pytest.mark.parametrize("name", list(TURNS))
async def test_the_file_gives_the_model_the_same_messages(hub, name):
    replies, limits, expected = TURNS[name]
    agent, transcript, end = await recorded_turn(hub, replies, **limits)
    assert end is expected
    assert to_openai_messages(transcript) == agent.messages
    assert MALFORMED_NAME not in json.dumps(agent.messages)
    resumed = Agent(ScriptedEngine([]), hub, ApprovalPolicy("auto"))
    resumed.load_messages(to_openai_messages(transcript))
    assert resumed.turns == agent.turns
    assert not transcript.turn_goes_on(), "resuming must not go on with a turn that ended"
    exchange = transcript.exchanges[-1]
    assert exchange.end == (None if expected is TurnEnd.ANSWERED else expected.value)


async def test_a_resumed_reply_shows_the_line_it_ended_with(hub):
    _, transcript, _ = await recorded_turn(hub, TURNS["the cap"][0], max_tool_rounds=2)
    assert reply_note(transcript.exchanges[-1]) == "■ stopped after 2 tool rounds (max_tool_rounds)"
    _, transcript, _ = await recorded_turn(hub, TURNS["repeats"][0])
    [*_, repeat] = transcript.all_proposals()
    assert repeat.result.status == "repeated" and repeat.result.repeat_of == "call_1" and repeat.choice is None


OLD_FILE = """💬: what is 17 + 25?

🤖:[scripted]

Let me add.

❓: `{"id":"call_1","type":"function","function":{"name":"malformed_tool_call","arguments":"<tool_call>{\\"name\\": \\"add\\""}}`

🛠️: [malformed_tool_call][call_1]
```malformed
Error: that tool call could not be used (cut-off JSON). Call a listed tool by its exact name with a JSON object of arguments.
```

42.

"""


async def test_an_old_file_with_malformed_tool_call_entries_is_sent_in_the_new_shape(hub):
    transcript = parse(OLD_FILE)
    messages = to_openai_messages(transcript)
    assert MALFORMED_NAME not in json.dumps(messages)
    assert messages == [
        {"role": "user", "content": "what is 17 + 25?"},
        {"role": "assistant", "content": 'Let me add.\n<tool_call>{"name": "add"'},
        {
            "role": "user",
            "name": APP_SENDER,
            "content": "[mcp-chat-tui] Error: that tool call could not be used (cut-off JSON). Call a listed tool "
            "by its exact name with a JSON object of arguments.",
        },
        {"role": "assistant", "content": "42."},
    ]
    engine = ScriptedEngine(["ok"])
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    agent.load_messages(messages)
    assert len(agent.turns) == 1
    await agent.run_turn("and 1 + 1?", Recorder())
    assert MALFORMED_NAME not in json.dumps(engine.prompts[0])


async def test_a_resumed_reply_with_a_call_left_open_tells_the_malformed_one_after_its_result(hub):
    """The app ended while a good call of a reply waited (its malformed call already told): resuming
    sends the model what the live turn sent it."""
    replies = [[call("echo", {"text": "hi"}, "call_1"), ToolCallMalformed("call_2", "{oops", "not JSON")], "hi"]
    live, transcript, _ = await recorded_turn(hub, replies)
    live_prompt = live.engine.prompts[1]
    exchange = transcript.exchanges[-1]
    exchange.steps, exchange.end = exchange.steps[:1], "unfinished"  # the file as the app left it
    waiting = exchange.steps[0].proposals[0]
    waiting.result, waiting.choice, waiting.started_at = None, None, None
    transcript = parse(render(transcript))
    assert [p.call_id for p in transcript.pending_proposals()] == ["call_1"] and transcript.turn_goes_on()
    messages = to_openai_messages(transcript)
    assert messages[-1]["role"] == "assistant", "the app's message waits for the open call's result"
    engine = ScriptedEngine(["hi"])
    resumed = Agent(engine, hub, ApprovalPolicy("auto"))
    resumed.load_messages(messages)
    pending = pending_calls(transcript.pending_proposals(), hub.find_tool)
    assert await resumed.continue_turn(pending, Recorder(), transcript.pending_feedback()) is TurnEnd.ANSWERED
    assert engine.prompts[0] == live_prompt, "the resumed model was sent another conversation"
