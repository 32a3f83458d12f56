"""How a turn ends when the model does not simply answer (issue 30): malformed calls told in a plain
message, calls repeated in one turn not run again, the cap on tool rounds, a reply with no text.

The agent with real MCP servers (in process: the demo server and the fixture server) and a scripted
engine for the model's exact replies."""

from __future__ import annotations

import json

import pytest

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.events import (
    ApprovalChoice,
    ApprovalNeeded,
    CallDecided,
    CallFinished,
    CallProposed,
    CallStarted,
    MalformedCall,
    PlannedCall,
    TurnEnd,
    TurnFinished,
)
from mcp_chat_tui.agent.turn import call_key, tools_line
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.core.feedback import APP_SENDER, MALFORMED_NAME
from mcp_chat_tui.engine.events import TextDelta, ToolCallMalformed
from mcp_chat_tui.servers import ServerHub
from tests.fakes import ScriptedEngine, call
from tests.helpers import demo_config, fixture_config
from tests.test_agent import Recorder

FENCED = '```json\n{"name": "add-17-and-25", "arguments": {}}\n```'
UNKNOWN = "unknown tool 'add-17-and-25'; the nearest offered tools: calculator, echo"


@pytest.fixture
async def hub():
    servers = ServerHub([demo_config("demo"), fixture_config("fx", timeout=1.0, in_process=True)])
    async with servers:
        await servers.start_all()
        yield servers


def mentions_malformed_call(messages: list[dict]) -> bool:
    return MALFORMED_NAME in json.dumps(messages)


def finished(sink: Recorder) -> dict[str, CallFinished]:
    return {event.call.id: event for event in sink.of(CallFinished)}


# -- a malformed call goes back as a plain message, never as a call -----------------------------


async def test_a_malformed_call_is_told_in_a_plain_user_message_the_model_cannot_imitate(hub):
    engine = ScriptedEngine([[TextDelta("Let me add."), ToolCallMalformed("call_1", FENCED, UNKNOWN)], "42"])
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    sink = Recorder()
    assert await agent.run_turn("what is 17 + 25?", sink) == TurnEnd.ANSWERED
    second = engine.prompts[1]
    assert not mentions_malformed_call(second), "the model was shown a call it could imitate"
    assistant, told = second[-2], second[-1]
    assert assistant == {"role": "assistant", "content": "Let me add.\n" + FENCED}  # what it wrote, as text
    assert told["role"] == "user" and told["name"] == APP_SENDER
    assert told["content"].startswith("[mcp-chat-tui] Your tool call could not be used: " + UNKNOWN + ".")
    assert "The tools you can call are: " in told["content"] and "calculator" in told["content"]
    assert "or answer in text." in told["content"]
    assert finished(sink)["call_1"].status is CallState.MALFORMED
    assert finished(sink)["call_1"].content_for_model == told["content"].removeprefix("[mcp-chat-tui] ")
    assert len(agent.turns) == 1, "the app's message must not start a turn of the user's"


async def test_the_message_about_a_malformed_call_comes_after_the_replys_tool_results(hub):
    engine = ScriptedEngine(
        [
            [
                call("calculator", {"expression": "1+1"}, "call_1"),
                ToolCallMalformed("call_2", "<tool_call>{x", "not JSON"),
            ]
        ]
        + ["2"]
    )
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    await agent.run_turn("x", Recorder())
    roles = [(message["role"], message.get("name")) for message in engine.prompts[1]]
    assert roles[-3:] == [("assistant", None), ("tool", "calculator"), ("user", APP_SENDER)]
    assert [c["function"]["name"] for c in engine.prompts[1][-3]["tool_calls"]] == ["calculator"]
    assert engine.prompts[1][-3]["content"] == "<tool_call>{x"


async def test_several_malformed_calls_of_one_reply_are_told_in_one_message(hub):
    replies = [[ToolCallMalformed("call_1", "{bad", "not JSON"), ToolCallMalformed("call_2", "{worse", "cut off")]]
    engine = ScriptedEngine([*replies, "ok"])
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    await agent.run_turn("x", Recorder())
    told = engine.prompts[1][-1]["content"]
    assert told.count("Your tool call could not be used") == 2 and told.count("The tools you can call") == 1
    assert engine.prompts[1][-2]["content"] == "{bad\n{worse"


def test_with_many_tools_the_model_is_given_the_nearest_names_and_a_count():
    names = [f"tool_{index}" for index in range(30)] + ["get-sum", "get-time", "get-env"]
    line = tools_line(names, ['{"name": "get-summ", "arguments": {}}'])
    assert line.startswith("The tools you can call are: get-sum, ") and " and 25 more." in line
    assert tools_line(["a", "b"], []).startswith("The tools you can call are: a, b. Call one by its exact name")
    assert tools_line([], ["x"]) == "No tools are offered now: answer in text."


# -- repeats -----------------------------------------------------------------------------------


async def test_a_call_repeated_in_one_turn_is_not_run_again_and_the_model_gets_the_result(hub):
    echo = call("echo", {"text": "hi"}, "call_1")
    engine = ScriptedEngine([[echo], [call("echo", {"text": "hi"}, "call_1")], "hi"])
    agent = Agent(engine, hub, ApprovalPolicy("ask"))
    sink = Recorder(ApprovalChoice.ALLOW_ONCE)  # one answer: the repeat must not ask
    assert await agent.run_turn("say hi", sink) == TurnEnd.ANSWERED
    assert len(sink.of(ApprovalNeeded)) == 1 and len(sink.of(CallStarted)) == 1
    assert hub.status("fx").call_count == 1
    repeat = finished(sink)["call_2"]
    assert repeat.status is CallState.REPEATED and repeat.repeat_of == "call_1" and repeat.result is None
    assert [event.call.id for event in sink.of(CallDecided)] == ["call_1"]
    *_, told, asked = engine.prompts[2]
    assert told["role"] == "tool" and told["tool_call_id"] == "call_2"
    assert told["content"] == "(the same result as above)"
    assert asked["role"] == "user" and asked["name"] == APP_SENDER
    assert asked["content"] == "[mcp-chat-tui] Using the tool result above, answer the question in one sentence: say hi"


async def test_after_a_repeat_the_model_gets_its_question_again(hub):
    """Qwen2.5-Coder-0.5B, told "you already called it", called again every time; with its question
    put again after the result it answered (docs/reference.md; the file rebuilds the same message:
    tests/test_turn_ends_transcript.py)."""
    engine = ScriptedEngine([[call("echo", {"text": "hi"})], [call("echo", {"text": "hi"}, "call_9")], "hi"])
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    assert await agent.run_turn("what does echo say to hi?", Recorder()) == TurnEnd.ANSWERED
    asked = engine.prompts[2][-1]
    assert asked["content"].endswith("answer the question in one sentence: what does echo say to hi?")


def test_the_same_arguments_in_another_key_order_are_the_same_call():
    first = PlannedCall("call_1", "search", {"query": "mlx", "limit": [1, 2]})
    again = PlannedCall("call_2", "search", {"limit": [1, 2], "query": "mlx"})
    other = PlannedCall("call_3", "search", {"limit": [1, 2], "query": "MLX"})
    assert call_key(first) == call_key(again) != call_key(other)


async def test_other_arguments_are_another_call(hub):
    engine = ScriptedEngine(
        [
            [call("calculator", {"expression": "1+1"})],
            [call("calculator", {"expression": "2+2"})],
            [call("calculator", {"expression": "1+1"})],
            "done",
        ]
    )
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    sink = Recorder()
    await agent.run_turn("x", sink)
    assert [event.status for event in sink.of(CallFinished)] == [CallState.DONE, CallState.DONE, CallState.REPEATED]


async def test_the_same_call_again_in_one_reply_runs_once_and_both_get_its_result(hub):
    """A real model wrote one conversion 15 times over in one reply (bench records)."""
    engine = ScriptedEngine([[call("echo", {"text": "a"}, "1"), call("echo", {"text": "a"}, "2")], "ok"])
    agent = Agent(engine, hub, ApprovalPolicy("ask"))
    sink = Recorder(ApprovalChoice.ALLOW_ONCE)  # one question: the repeat is not asked about
    assert await agent.run_turn("x", sink) == TurnEnd.ANSWERED
    assert [event.status for event in sink.of(CallFinished)] == [CallState.DONE, CallState.REPEATED]
    assert hub.status("fx").call_count == 1 and len(sink.of(ApprovalNeeded)) == 1
    assert [m["content"] for m in engine.prompts[1] if m["role"] == "tool"] == ["a", "(the same result as above)"]


async def test_a_reply_that_writes_one_call_over_and_over_is_cut_and_the_model_told(hub):
    """On a CPU each token is a second: a reply repeating a call is cut at its second repeat, and the
    model, told it has the result, writes again (Qwen2.5-Coder-0.5B wrote convert_time three times
    in one reply, and 59 calls in another)."""
    engine = ScriptedEngine([[call("echo", {"text": "a"}) for _ in range(15)], "a"])
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    sink = Recorder()
    assert await agent.run_turn("x", sink) == TurnEnd.ANSWERED
    assert len(sink.of(CallProposed)) == 3 and engine.closed_streams == 2, "the model wrote on after the repeats"
    assert hub.status("fx").call_count == 1
    assert [event.status for event in sink.of(CallFinished)] == [CallState.DONE] + [CallState.REPEATED] * 2
    told = [m["content"] for m in engine.prompts[1] if m["role"] == "tool"]
    assert told[1] == "(the same result as above)"


async def test_a_reply_repeating_after_the_model_was_told_is_cut_at_once_and_ends_the_turn(hub):
    replies = [[call("echo", {"text": "a"})], [call("echo", {"text": "a"})], [call("echo", {"text": "a"})] * 5]
    engine = ScriptedEngine(replies)
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    sink = Recorder()
    assert await agent.run_turn("x", sink) == TurnEnd.REPEATED_CALLS
    assert len(sink.of(CallProposed)) == 3, "the third reply was read past the repeat that ends the turn"


async def test_a_call_that_timed_out_is_not_run_again_with_the_same_arguments(hub):
    """It had its whole time: a real 0.5B model wrote a 90-second call again after it timed out (bench records)."""
    slow = {"seconds": 3}
    engine = ScriptedEngine([[call("slow", slow)], [call("slow", slow)], "gave up"])
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    sink = Recorder()
    assert await agent.run_turn("x", sink) == TurnEnd.ANSWERED
    assert [event.status for event in sink.of(CallFinished)] == [CallState.TIMEOUT, CallState.REPEATED]
    assert len(sink.of(CallStarted)) == 1


async def test_two_repeats_end_the_turn_with_a_line_saying_why(hub):
    replies = [[call("echo", {"text": "hi"})] for _ in range(5)] + ["never asked"]
    engine = ScriptedEngine(replies)
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    sink = Recorder()
    assert await agent.run_turn("say hi", sink) == TurnEnd.REPEATED_CALLS
    assert len(engine.prompts) == 3, "the model was asked again after its second repeat"
    assert [event.status for event in sink.of(CallFinished)] == [CallState.DONE] + [CallState.REPEATED] * 2
    [done] = sink.of(TurnFinished)
    assert done.end is TurnEnd.REPEATED_CALLS
    assert (
        done.note
        == "stopped: the model called echo again with the same arguments (2 repeated calls in this turn) though it had the result"
    )
    assert agent.messages[-1]["role"] == "tool", "every call keeps its tool message"


LIST_FILES = '```json\n{"name": "list_files", "arguments": {"path": "/work/files"}}\n```'
NO_SUCH = "unknown tool 'list_files': no offered tool has a similar name"


async def test_the_same_malformed_call_written_again_and_again_ends_the_turn(hub):
    """Qwen2.5-Coder-0.5B on the filesystem server wrote list_files (not offered) round after round,
    each time told which tools exist."""
    replies = [[ToolCallMalformed("call_1", LIST_FILES.replace(" ", "  "), NO_SUCH)] for _ in range(5)]
    engine = ScriptedEngine([*replies, "never asked"])
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    sink = Recorder()
    assert await agent.run_turn("list the files", sink) == TurnEnd.REPEATED_CALLS
    assert len(engine.prompts) == 3
    assert [event.status for event in sink.of(CallFinished)] == [CallState.MALFORMED] * 3
    [done] = sink.of(TurnFinished)
    assert done.note == (
        "stopped: the model wrote again a tool call it was told it could not use (2 repeated calls in this turn)"
    )


async def test_a_reply_of_one_malformed_call_over_and_over_is_cut_too(hub):
    engine = ScriptedEngine([[ToolCallMalformed(f"call_{n}", LIST_FILES, NO_SUCH) for n in range(20)], "none"])
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    sink = Recorder()
    assert await agent.run_turn("list the files", sink) == TurnEnd.ANSWERED
    assert len(sink.of(MalformedCall)) == 3 and len(engine.prompts) == 2


async def test_other_malformed_calls_are_no_repeats(hub):
    replies = [[ToolCallMalformed("call_1", LIST_FILES.replace("files", f"files{n}"), NO_SUCH)] for n in range(3)]
    engine = ScriptedEngine([*replies, "I cannot list them."])
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    assert await agent.run_turn("list the files", Recorder()) == TurnEnd.ANSWERED


# -- the cap on tool rounds --------------------------------------------------------------------


def counting(n: int) -> list:
    return [[call("echo", {"text": str(index)})] for index in range(n)]


async def test_the_cap_stops_the_calls_tells_the_model_and_lets_it_answer_once(hub):
    engine = ScriptedEngine([*counting(3), "the numbers so far: 0, 1"])
    agent = Agent(engine, hub, ApprovalPolicy("auto"), max_tool_rounds=2)
    sink = Recorder()
    assert await agent.run_turn("count", sink) == TurnEnd.TOOL_ROUND_LIMIT
    statuses = [event.status for event in sink.of(CallFinished)]
    assert statuses == [CallState.DONE, CallState.DONE, CallState.CANCELLED]
    assert hub.status("fx").call_count == 2
    refused = sink.of(CallFinished)[-1].content_for_model
    assert refused.startswith("Not run: this turn has reached its limit of 2 tool rounds")
    assert engine.prompts[3][-1] == {"role": "tool", "tool_call_id": "call_3", "name": "echo", "content": refused}
    assert engine.tools_sent[3] == engine.tools_sent[0], "the last reply must be offered the same tools (cache)"
    [done] = sink.of(TurnFinished)
    assert done.note == "stopped after 2 tool rounds (max_tool_rounds)"
    assert agent.messages[-1] == {"role": "assistant", "content": "the numbers so far: 0, 1"}


async def test_a_model_that_still_calls_after_the_cap_is_stopped_there(hub):
    engine = ScriptedEngine([*counting(10)])
    agent = Agent(engine, hub, ApprovalPolicy("auto"), max_tool_rounds=1)
    sink = Recorder()
    assert await agent.run_turn("count", sink) == TurnEnd.TOOL_ROUND_LIMIT
    assert len(engine.prompts) == 3 and hub.status("fx").call_count == 1
    assert [event.status for event in sink.of(CallFinished)] == [CallState.DONE] + [CallState.CANCELLED] * 2


async def test_a_turn_within_the_cap_is_answered(hub):
    engine = ScriptedEngine([*counting(2), "0 1"])
    agent = Agent(engine, hub, ApprovalPolicy("auto"), max_tool_rounds=2)
    assert await agent.run_turn("count", Recorder()) == TurnEnd.ANSWERED


async def test_a_malformed_call_after_the_cap_is_told_to_answer_not_to_call_again(hub):
    engine = ScriptedEngine([*counting(1), [ToolCallMalformed("call_2", FENCED, UNKNOWN)], "done"])
    agent = Agent(engine, hub, ApprovalPolicy("auto"), max_tool_rounds=1)
    assert await agent.run_turn("x", Recorder()) == TurnEnd.TOOL_ROUND_LIMIT
    told = engine.prompts[2][-1]["content"]
    assert UNKNOWN in told and "reached its limit of 1 tool rounds" in told and "tools you can call" not in told


# -- no answer ---------------------------------------------------------------------------------


@pytest.mark.parametrize("last", ["", "  \n", "<|im_start|><|im_end|>\n", "<|endoftext|>"])
async def test_a_last_reply_without_text_is_no_answer(hub, last):
    engine = ScriptedEngine([[call("echo", {"text": "x"})], [TextDelta(last)] if last else []])
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    sink = Recorder()
    assert await agent.run_turn("x", sink) == TurnEnd.NO_ANSWER
    [done] = sink.of(TurnFinished)
    assert done.note == "no answer: the model's last reply had no text"
    assert done.empty_reply is (last == "")
    assert agent.messages[-1] == {"role": "assistant", "content": last}


async def test_a_reply_with_text_is_answered(hub):
    engine = ScriptedEngine(["<|im_start|>42"])
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    assert await agent.run_turn("x", Recorder()) == TurnEnd.ANSWERED


def test_a_summary_request_says_the_apps_message_is_the_apps():
    from mcp_chat_tui.agent.memory_window import exchange_text
    from mcp_chat_tui.core.feedback import feedback_message

    turn = [{"role": "user", "content": "what is 17 + 25?"}, {"role": "assistant", "content": "{bad"}]
    text = exchange_text([*turn, feedback_message(["Your tool call could not be used: not JSON."])])
    assert text.splitlines() == [
        "User: what is 17 + 25?",
        "Assistant: {bad",
        "The app: [mcp-chat-tui] Your tool call could not be used: not JSON.",
    ]
