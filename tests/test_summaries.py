"""Summaries of the exchanges that leave the memory window: what the model is asked, what it is sent
after, hand-written ones, /compact, stopping, failures. Scripted engine, real demo server."""

from __future__ import annotations

import asyncio

import pytest

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.events import SummariesEnded, SummaryFailed, SummaryStarted, SummaryWritten
from mcp_chat_tui.agent.memory_window import (
    MAX_SUMMARY_CHARS,
    SUMMARIES_HEADING,
    SUMMARY_INSTRUCTION,
    Memory,
    summary_request,
)
from mcp_chat_tui.engine.events import EngineError
from mcp_chat_tui.servers import ServerHub
from tests.fakes import ScriptedEngine, call
from tests.helpers import demo_config, eventually, fixture_config


class Events(list):
    def of(self, kind) -> list:
        return [event for event in self if isinstance(event, kind)]


class FailingSummaries(ScriptedEngine):
    """A scripted engine that fails every summary request (and plays its script for the rest)."""

    async def stream(self, messages, tools=None, *, known_tools=None, aside=False):
        if messages and messages[0]["content"] == SUMMARY_INSTRUCTION:
            self.prompts.append(messages)
            raise EngineError("the model ran out of memory")
        async for event in super().stream(messages, tools, known_tools=known_tools):
            yield event


@pytest.fixture
async def hub():
    servers = ServerHub([demo_config("demo"), fixture_config("fx", timeout=1.0, in_process=True)])
    async with servers:
        await servers.start_all()
        yield servers


def system(hub: ServerHub) -> dict:
    return {"role": "system", "content": "Be brief.\n\n" + hub.instructions_prompt()}


def summaries_message(*lines: str) -> dict:
    return {"role": "user", "content": "\n".join([SUMMARIES_HEADING, *(f"- {line}" for line in lines)])}


async def test_exchanges_leaving_the_window_are_summarised_and_sent_as_one_message(hub):
    # Five turns, three in the window: after the third and fourth replies, the turn that leaves the
    # window at the next prompt is summarised by a request of its own (no tools).
    script = []
    for index in range(5):
        script += [[call("echo", {"text": f"t{index}"})], f"answer {index}"]
        if index in (2, 3):
            script.append(f"Summary {index - 2}: echoed t{index - 2}.\nA second line is dropped.")
    engine = ScriptedEngine(script)
    agent = Agent(engine, hub, ApprovalPolicy("auto"), max_turns=3, system_prompt="Be brief.")
    events = Events()
    for index in range(5):
        await agent.run_turn(f"question {index}", events.append)
        if index < 4:
            await agent.write_summaries(events.append)

    assert [(e.exchange, e.text) for e in events.of(SummaryWritten)] == [
        (0, "Summary 0: echoed t0."),
        (1, "Summary 1: echoed t1."),
    ]
    asked = [prompt for prompt in engine.prompts if prompt[0]["content"] == SUMMARY_INSTRUCTION]
    assert asked == [summary_request(agent.turns[0]), summary_request(agent.turns[1])]
    assert asked[0][1]["content"] == "User: question 0\nAssistant called: echo\nResult of echo: t0\nAssistant: answer 0"
    assert [tools for tools, prompt in zip(engine.tools_sent, engine.prompts, strict=True) if prompt in asked] == [
        None,
        None,
    ]

    last = engine.prompts[-1]
    assert last[:3] == [
        system(hub),
        summaries_message("Summary 0: echoed t0.", "Summary 1: echoed t1."),
        {"role": "user", "content": "question 2"},
    ]
    assert [m["content"] for m in last if m["role"] == "tool"] == ["t2", "t3", "t4"]
    assert agent.summarised_count == 2
    assert len([m for m in agent.messages if m["role"] == "user"]) == 5, "the full history is kept"


async def test_a_failed_summary_says_why_and_keeps_the_exchange_in_full(hub):
    engine = FailingSummaries(["answer 0", "answer 1"])
    agent = Agent(engine, hub, ApprovalPolicy("auto"), max_turns=1, system_prompt="Be brief.")
    events = Events()
    await agent.run_turn("question 0", events.append)
    await agent.write_summaries(events.append)
    assert [(e.exchange, e.error) for e in events.of(SummaryFailed)] == [(0, "the model ran out of memory")]
    assert events.of(SummariesEnded) == [SummariesEnded(0)]
    await agent.run_turn("question 1", events.append)
    assert engine.prompts[-1] == [
        system(hub),
        {"role": "user", "content": "question 0"},
        {"role": "assistant", "content": "answer 0"},
        {"role": "user", "content": "question 1"},
    ]


async def test_a_hand_written_summary_is_used_as_written_and_the_missing_ones_are_written(hub):
    engine = ScriptedEngine(["Written by the model.", "answer"])
    agent = Agent(engine, hub, ApprovalPolicy("auto"), max_turns=2)
    messages = []
    for index in range(4):
        messages += [{"role": "user", "content": f"q{index}"}, {"role": "assistant", "content": f"a{index}"}]
    agent.load_messages(messages, ["By hand, *as is*.", None, None, None])
    events = Events()
    await agent.write_summaries(events.append)
    # The next prompt (five turns) keeps q3 and itself in full: q1 and q2 leave; q0 has its summary.
    assert [e.exchange for e in events.of(SummaryStarted)] == [1, 2]
    assert [e.text for e in events.of(SummaryWritten)] == ["Written by the model.", "answer"]
    assert agent.memory.summaries == ["By hand, *as is*.", "Written by the model.", "answer", None]
    assert engine.prompts[0] == summary_request(agent.turns[1]), "the hand-written summary is not redone"


async def test_compact_summarises_every_exchange_but_the_last(hub):
    engine = ScriptedEngine(["s0", "s1", "s2", "reply"])
    agent = Agent(engine, hub, ApprovalPolicy("auto"), max_turns=3)
    agent.load_messages([{"role": "user", "content": f"q{index}"} for index in range(4)])
    events = Events()
    await agent.write_summaries(events.append, compact=True)
    assert [e.exchange for e in events.of(SummaryWritten)] == [0, 1, 2]
    assert events.of(SummariesEnded) == [SummariesEnded(3)]
    await agent.run_turn("q4", events.append)
    prompt = engine.prompts[-1]
    assert prompt[-3:] == [
        summaries_message("s0", "s1", "s2"),
        {"role": "user", "content": "q3"},
        {"role": "user", "content": "q4"},
    ]


async def test_stopping_the_summaries_keeps_what_was_written_and_the_rest_in_full(hub):
    engine = ScriptedEngine(["first summary", "never finished " * 40], delay=0.05)
    agent = Agent(engine, hub, ApprovalPolicy("auto"), max_turns=1)
    agent.load_messages([{"role": "user", "content": f"q{index}"} for index in range(3)])
    events = Events()
    task = asyncio.create_task(agent.write_summaries(events.append, compact=True))
    assert await eventually(lambda: len(events.of(SummaryStarted)) == 2, 10), "the second summary never started"
    assert agent.summarising and agent.stop()
    await asyncio.wait_for(task, 5)
    assert events.of(SummariesEnded) == [SummariesEnded(1, stopped=True)]
    assert agent.memory.summaries == ["first summary", None, None]
    assert engine.closed_streams == 2, "the engine was told to stop"
    assert not agent.summarising


async def test_a_long_summary_is_cut_to_one_line():
    engine = ScriptedEngine(["word " * 400])
    hub_less = Agent(engine, _NoTools(), ApprovalPolicy("auto"), max_turns=1)
    hub_less.load_messages([{"role": "user", "content": "q0"}, {"role": "user", "content": "q1"}])
    events = Events()
    await hub_less.write_summaries(events.append, compact=True)
    [written] = events.of(SummaryWritten)
    assert len(written.text) <= MAX_SUMMARY_CHARS and written.text.endswith("…")
    assert engine.closed_streams == 1


class _NoTools:
    def tools(self):
        return []

    def find_tool(self, name):
        return None

    async def settle_tools(self):
        return None

    def instructions_prompt(self):
        return ""


def test_the_window_of_the_memory():
    memory = Memory(3, [None] * 6)
    assert (memory.window_start(6), memory.summarised(6), memory.due(7)) == (3, 0, [0, 1, 2, 3])
    memory.summaries[4] = "by hand"  # a summary inside the window takes it and what is before it out
    assert memory.window_start(6) == 5 and memory.due(6) == [0, 1, 2, 3]
    memory.summaries[:4] = ["a", None, "c", "d"]  # a gap: from it on, turns go in full (in order)
    assert memory.summarised(6) == 1
    memory.summaries[5] = "the last"  # the last turn is always sent in full
    assert memory.window_start(6) == 5
    assert Memory(3).window_start(0) == 0 and Memory(3).due(1) == []


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="a regression of the demo model trained on conversations: asked 'hello' with no system message "
    "and no tools (never so in its training) it starts a call it cannot finish, the app tells it so, and "
    "the exchange it is then asked to summarise is not one it can write a line for",
)
async def test_the_demo_model_writes_a_summary_that_lands_in_the_transcript_and_the_next_prompt(tmp_path):
    """Real MLX on the bundled demo model: its summary (whatever it says) is one line, recorded as
    the exchange's 📝: line, and sent in the next prompt in place of the exchange."""
    from mcp_chat_tui.cli.chat import demo_model_path
    from mcp_chat_tui.conversation.recording import RecordingSink, tee
    from mcp_chat_tui.engine.mlx_engine import MlxEngine
    from mcp_chat_tui.transcript import AutoSaver, TranscriptRecorder, parse, read_transcript_text

    engine = MlxEngine(demo_model_path(), max_tokens=40)
    await engine.load()
    prompts: list[list[dict]] = []
    stream = engine.stream

    def recorded(messages, tools=None, **options):
        prompts.append(messages)
        return stream(messages, tools, **options)

    engine.stream = recorded
    path = tmp_path / "chat.md"
    recorder = TranscriptRecorder(saver=AutoSaver(path))
    events = Events()
    sink = tee(RecordingSink(recorder, "demo"), events.append)
    agent = Agent(engine, _NoTools(), ApprovalPolicy("auto"), max_turns=1)
    try:
        await agent.run_turn("hello", sink)
        await agent.write_summaries(sink)
        [written] = events.of(SummaryWritten)
        assert written.exchange == 0 and written.text and "\n" not in written.text
        print(f"the demo model's summary: {written.text!r}")
        await agent.run_turn("and then?", sink)
    finally:
        recorder.close()
        await engine.close()
    assert [p for p in prompts if p[0]["content"] == SUMMARY_INSTRUCTION] == [summary_request(agent.turns[0])]
    assert prompts[-1][0] == {"role": "user", "content": f"{SUMMARIES_HEADING}\n- {written.text}"}
    assert prompts[-1][1] == {"role": "user", "content": "and then?"}
    assert parse(read_transcript_text(path)).exchanges[0].summary == written.text


async def test_clearing_the_conversation_forgets_its_summaries():
    engine = ScriptedEngine(["answer"])
    agent = Agent(engine, _NoTools(), ApprovalPolicy("auto"), max_turns=1)
    agent.load_messages([{"role": "user", "content": "q0"}, {"role": "user", "content": "q1"}], ["s0", None])
    assert agent.summaries_in_use == 1
    agent.clear()
    await agent.run_turn("new", Events().append)
    assert engine.prompts[-1] == [{"role": "user", "content": "new"}]
    assert agent.memory.summaries == [None]
