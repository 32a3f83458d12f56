"""The agent loop with real MCP servers and a scripted engine: approvals, outcomes, memory, stopping."""

from __future__ import annotations

import asyncio

import pytest

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.events import (
    ApprovalChoice,
    ApprovalDecision,
    ApprovalNeeded,
    AssistantText,
    CallDecided,
    CallFinished,
    CallStarted,
    MalformedCall,
    Notice,
    TurnEnd,
    TurnFinished,
)
from mcp_chat_tui.agent.turn import DENIED_MESSAGE, STOPPED_MESSAGE
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.engine.events import ToolCallMalformed
from mcp_chat_tui.servers import ServerHub
from tests.fakes import ScriptedEngine, call
from tests.helpers import demo_config, eventually, fixture_config, liar_config


class Recorder:
    """A sink that keeps every event and answers approvals from a queue of decisions."""

    def __init__(self, *answers: ApprovalChoice | ApprovalDecision) -> None:
        self.events: list = []
        self.answers = [a if isinstance(a, ApprovalDecision) else ApprovalDecision(a) for a in answers]

    def __call__(self, event) -> None:
        self.events.append(event)
        if isinstance(event, ApprovalNeeded):
            event.decision.set_result(self.answers.pop(0))

    def of(self, kind) -> list:
        return [event for event in self.events if isinstance(event, kind)]


@pytest.fixture
async def hub():
    servers = ServerHub([demo_config("demo"), fixture_config("fx", timeout=1.0, in_process=True)])
    async with servers:
        await servers.start_all()
        yield servers


def tool_messages(prompt: list[dict]) -> list[dict]:
    return [message for message in prompt if message["role"] == "tool"]


async def test_a_whole_turn_asks_runs_the_tool_and_feeds_the_result_back(hub):
    engine = ScriptedEngine([[call("calculator", {"expression": "12 * 7"})], "12 * 7 is 84."])
    agent = Agent(engine, hub, ApprovalPolicy("ask"))
    sink = Recorder(ApprovalChoice.ALLOW_ONCE)
    end = await agent.run_turn("what is 12 * 7?", sink)
    assert end == TurnEnd.ANSWERED
    [asked] = sink.of(ApprovalNeeded)
    assert asked.call.server == "demo" and asked.call.tool == "calculator" and asked.waiting == 1
    [finished] = sink.of(CallFinished)
    assert finished.status == CallState.DONE and finished.result.text == "12 * 7 = 84"
    second_prompt = engine.prompts[1]
    assert second_prompt[0] == {"role": "system", "content": hub.instructions_prompt()}  # the demo's instructions
    assert second_prompt[2]["tool_calls"][0]["function"] == {
        "name": "calculator",
        "arguments": '{"expression": "12 * 7"}',
    }
    assert tool_messages(second_prompt) == [
        {"role": "tool", "tool_call_id": "call_1", "name": "calculator", "content": "12 * 7 = 84"}
    ]
    assert agent.messages[-1] == {"role": "assistant", "content": "12 * 7 is 84."}
    assert engine.tools_sent[0] and {t["function"]["name"] for t in engine.tools_sent[0]} >= {"calculator", "echo"}


async def test_denied_failed_timed_out_and_malformed_calls_all_reach_the_model(hub):
    engine = ScriptedEngine(
        [
            [
                call("echo", {"text": "no"}, "call_1"),
                call("calculator", {"expression": "1/0"}, "call_2"),
                call("slow", {"seconds": 30}, "call_3"),
                ToolCallMalformed("call_4", '<tool_call>{"name": "calc', "cut-off JSON"),
            ],
            "Sorry.",
        ]
    )
    agent = Agent(engine, hub, ApprovalPolicy("ask"))
    sink = Recorder(ApprovalChoice.DENY, ApprovalChoice.ALLOW_ONCE, ApprovalChoice.ALLOW_ONCE)
    await agent.run_turn("try things", sink)
    by_id = {m["tool_call_id"]: m["content"] for m in tool_messages(engine.prompts[1])}
    assert by_id["call_1"] == DENIED_MESSAGE
    assert by_id["call_2"].startswith("Error:") and "division by zero" in by_id["call_2"]
    assert by_id["call_3"].startswith("Error (timeout)") and "within 1 s" in by_id["call_3"]
    told = engine.prompts[1][-1]  # the malformed call: a plain message from the app, after the results
    assert told["role"] == "user" and "cut-off JSON" in told["content"]
    statuses = {e.call.id: e.status for e in sink.of(CallFinished)}
    assert statuses == {
        "call_1": CallState.DENIED,
        "call_2": CallState.ERROR,
        "call_3": CallState.TIMEOUT,
        "call_4": CallState.MALFORMED,
    }
    assert sink.of(MalformedCall)[0].raw.startswith("<tool_call>")
    # Tool messages follow the order of the proposals.
    assert [m["tool_call_id"] for m in tool_messages(engine.prompts[1])] == ["call_1", "call_2", "call_3"]


async def test_an_unknown_tool_name_becomes_a_malformed_call_the_model_hears_about(hub):
    engine = ScriptedEngine([[call("no_such_tool", {})], "ok"])
    agent = Agent(engine, hub, ApprovalPolicy("ask"))
    sink = Recorder()
    await agent.run_turn("x", sink)
    assert not sink.of(ApprovalNeeded)
    assert not tool_messages(engine.prompts[1])
    assert "unknown tool 'no_such_tool'" in engine.prompts[1][-1]["content"]


async def test_allowed_calls_run_concurrently(hub):
    engine = ScriptedEngine([[call("slow", {"seconds": 0.5}, "a"), call("slow", {"seconds": 0.6}, "b")], "done"])
    agent = Agent(engine, hub, ApprovalPolicy("ask"))
    sink = Recorder(ApprovalChoice.ALLOW_PENDING)
    await agent.run_turn("two naps", sink)
    assert len(sink.of(ApprovalNeeded)) == 1, "allow-all-pending must not ask again"
    assert [d.choice for d in sink.of(CallDecided)] == [ApprovalChoice.ALLOW_PENDING] * 2
    kinds = [type(e).__name__ for e in sink.events if isinstance(e, (CallStarted, CallFinished))]
    assert kinds == ["CallStarted", "CallStarted", "CallFinished", "CallFinished"]


async def test_always_allow_a_tool_skips_the_dialog_next_time_and_can_be_saved(hub):
    saved = []
    policy = ApprovalPolicy("ask", on_save=lambda server, tool, value: saved.append((server, tool, value)))
    engine = ScriptedEngine(
        [
            [call("calculator", {"expression": "1+1"})],
            "2",
            [call("calculator", {"expression": "2+2"})],
            "4",
            [call("echo", {"text": "hi"})],
            "hi",
        ]
    )
    agent = Agent(engine, hub, policy)
    sink = Recorder(ApprovalDecision(ApprovalChoice.ALWAYS_TOOL, save=True), ApprovalChoice.ALLOW_ONCE)
    await agent.run_turn("one", sink)
    await agent.run_turn("two", sink)
    await agent.run_turn("three", sink)
    asked = [e.call.tool for e in sink.of(ApprovalNeeded)]
    assert asked == ["calculator", "echo"], "calculator was asked about twice"
    assert [(server, tool, rule.choice) for server, tool, rule in saved] == [("demo", "calculator", "always")]
    assert [d.choice for d in sink.of(CallDecided)][:2] == [ApprovalChoice.ALWAYS_TOOL, ApprovalChoice.AUTO]
    assert [d.allowed_by for d in sink.of(CallDecided)] == [
        "you (always, saved in config.toml)",
        "saved always (config.toml)",
        "you (once)",
    ]


async def test_allow_all_and_always_remembers_every_pending_tool(hub):
    engine = ScriptedEngine(
        [
            [call("echo", {"text": "a"}, "1"), call("whoami", {}, "2")],
            "ok",
            [call("whoami", {}, "1"), call("echo", {"text": "b"}, "2")],
            "ok",
        ]
    )
    agent = Agent(engine, hub, ApprovalPolicy("ask"))
    sink = Recorder(ApprovalChoice.ALWAYS_ALL)
    await agent.run_turn("one", sink)
    await agent.run_turn("two", sink)
    assert len(sink.of(ApprovalNeeded)) == 1
    assert [d.choice for d in sink.of(CallDecided)] == [ApprovalChoice.ALWAYS_ALL] * 2 + [ApprovalChoice.AUTO] * 2


async def test_deny_all_stops_the_turn_and_denies_the_rest(hub):
    engine = ScriptedEngine([[call("echo", {"text": "a"}, "1"), call("echo", {"text": "b"}, "2")], "never said"])
    agent = Agent(engine, hub, ApprovalPolicy("ask"))
    sink = Recorder(ApprovalChoice.DENY_ALL)
    end = await agent.run_turn("x", sink)
    assert end == TurnEnd.STOPPED
    assert len(engine.prompts) == 1, "the model must not be asked again after deny-all"
    assert [m["content"] for m in agent.messages if m["role"] == "tool"] == [DENIED_MESSAGE] * 2
    assert hub.status("fx").call_count == 0


async def test_policies_auto_and_auto_readonly(hub):
    # The demo tools are annotated read-only; the fixture tools are not.
    engine = ScriptedEngine([[call("calculator", {"expression": "1+1"}, "1"), call("echo", {"text": "x"}, "2")], "ok"])
    sink = Recorder(ApprovalChoice.ALLOW_ONCE)
    await Agent(engine, hub, ApprovalPolicy("auto-readonly", trusted={"demo", "fx"})).run_turn("x", sink)
    assert [e.call.tool for e in sink.of(ApprovalNeeded)] == ["echo"]
    assert [d.allowed_by for d in sink.of(CallDecided)] == ["auto-readonly (trusted server demo)", "you (once)"]
    assert sink.of(ApprovalNeeded)[0].why == "auto-readonly: fx does not mark this tool read-only"

    engine = ScriptedEngine([[call("calculator", {"expression": "1+1"}, "1"), call("echo", {"text": "x"}, "2")], "ok"])
    sink = Recorder()
    await Agent(engine, hub, ApprovalPolicy("auto")).run_turn("x", sink)
    assert not sink.of(ApprovalNeeded) and len(sink.of(CallFinished)) == 2

    # A per-tool "ask" in config.toml wins over the mode.
    engine = ScriptedEngine([[call("calculator", {"expression": "1+1"})], "ok"])
    sink = Recorder(ApprovalChoice.ALLOW_ONCE)
    await Agent(engine, hub, ApprovalPolicy("auto", saved={"demo": {"calculator": "ask"}})).run_turn("x", sink)
    assert len(sink.of(ApprovalNeeded)) == 1


async def test_turns_outside_the_window_without_a_summary_are_sent_whole_in_order(hub):
    # (Summaries stand in for them once written: tests/test_summaries.py.)
    replies = []
    for index in range(5):
        replies += [[call("echo", {"text": f"t{index}"})], f"answer {index}"]
    engine = ScriptedEngine(replies)
    agent = Agent(engine, hub, ApprovalPolicy("auto"), max_turns=3, system_prompt="Be brief.")
    for index in range(5):
        await agent.run_turn(f"question {index}", Recorder())
    last_prompt = engine.prompts[-1]
    assert last_prompt[0] == {"role": "system", "content": "Be brief.\n\n" + hub.instructions_prompt()}
    assert [m["content"] for m in last_prompt if m["role"] == "user"] == [f"question {i}" for i in range(5)]
    assert [m["content"] for m in tool_messages(last_prompt)] == ["t0", "t1", "t2", "t3", "t4"]
    assert last_prompt[1] == {"role": "user", "content": "question 0"}
    assert len([m for m in agent.messages if m["role"] == "user"]) == 5, "the full history is kept"


async def test_stopping_keeps_the_partial_answer(hub):
    engine = ScriptedEngine(["one two three four five six seven eight nine ten"], delay=0.1)
    agent = Agent(engine, hub, ApprovalPolicy("ask"))
    sink = Recorder()
    task = asyncio.create_task(agent.run_turn("count", sink))
    assert await eventually(lambda: "".join(e.text for e in sink.of(AssistantText)).startswith("one two"), 10), (
        "the first two words never arrived"
    )
    assert agent.stop()
    assert await task == TurnEnd.STOPPED
    partial = agent.messages[-1]
    assert partial["role"] == "assistant" and partial["content"].startswith("one two")
    assert "ten" not in partial["content"]
    assert engine.closed_streams == 1
    assert sink.of(TurnFinished)[-1].end == TurnEnd.STOPPED
    assert not agent.busy


async def test_stopping_during_a_tool_call_cancels_it_and_records_it(hub):
    engine = ScriptedEngine([[call("sleep", {"seconds": 20})]])
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    sink = Recorder()
    task = asyncio.create_task(agent.run_turn("nap", sink))
    assert await eventually(lambda: sink.of(CallStarted), 10), "the call never started"
    agent.stop()
    assert await asyncio.wait_for(task, 5) == TurnEnd.STOPPED
    assert agent.messages[-1] == {"role": "tool", "tool_call_id": "call_1", "name": "sleep", "content": STOPPED_MESSAGE}
    follow_up = await hub.call_tool("demo", "calculator", {"expression": "1+2"})
    assert follow_up.ok, "the server must stay usable after a stopped call"


async def test_a_turn_stopped_by_replacing_the_conversation_closes_itself_not_the_new_one(hub):
    engine = ScriptedEngine([[call("sleep", {"seconds": 20})]])
    agent = Agent(engine, hub, ApprovalPolicy("auto"))
    sink = Recorder()
    task = asyncio.create_task(agent.run_turn("nap", sink))
    assert await eventually(lambda: sink.of(CallStarted), 10), "the call never started"
    loaded = [{"role": "user", "content": "another conversation"}, {"role": "assistant", "content": "its answer"}]
    agent.stop()
    agent.load_messages(loaded)  # as resuming another file does, before the stopped turn has closed
    assert await asyncio.wait_for(task, 5) == TurnEnd.STOPPED
    [finished] = sink.of(CallFinished)
    assert finished.status == CallState.CANCELLED
    assert agent.messages == loaded, "the stopped turn wrote into the conversation that replaced it"
    task = asyncio.create_task(agent.run_turn("nap again", sink))  # (the script has no reply left: any text)
    await asyncio.wait_for(task, 5)
    agent.clear()  # nothing runs: clearing forgets the conversation at once
    assert agent.messages == []


async def test_a_model_without_tool_support_chats_and_says_so_once(hub):
    engine = ScriptedEngine(["hello", "again"], supports_tools=False)
    agent = Agent(engine, hub, ApprovalPolicy("ask"))
    sink = Recorder()
    await agent.run_turn("hi", sink)
    await agent.run_turn("hi", sink)
    assert len(sink.of(Notice)) == 1 and "no tool support" in sink.of(Notice)[0].text
    assert engine.tools_sent == [None, None]


def test_agent_services_do_not_import_textual():
    import subprocess
    import sys

    code = (
        "import sys, mcp_chat_tui.engine, mcp_chat_tui.servers, mcp_chat_tui.agent, mcp_chat_tui.config;"
        "import mcp_chat_tui.engine.mlx_engine, mcp_chat_tui.agent.loop, mcp_chat_tui.servers.hub;"
        "print('textual' in sys.modules)"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "False"


async def test_an_engine_error_mid_reply_ends_the_turn_with_the_message_and_keeps_the_text(hub):
    from mcp_chat_tui.engine.events import EngineError, TextDelta

    class FailingEngine(ScriptedEngine):
        async def stream(self, messages, tools=None, *, known_tools=None, aside=False):
            yield TextDelta("partial ")
            raise EngineError("endpoint http://127.0.0.1:1/v1 stopped answering")

    agent = Agent(FailingEngine([]), hub, ApprovalPolicy("ask"))
    sink = Recorder()
    assert await agent.run_turn("x", sink) == TurnEnd.ERROR
    assert "stopped answering" in sink.of(TurnFinished)[-1].error
    assert agent.messages[-1] == {"role": "assistant", "content": "partial "}


async def test_auto_readonly_believes_a_read_only_mark_only_from_a_trusted_server(tmp_path):
    """A server can mark a tool that writes read-only: auto-readonly asks unless config.toml trusts it."""
    note = tmp_path / "note.txt"
    servers = ServerHub([liar_config("liar")])
    async with servers:
        await servers.start_all()
        engine = ScriptedEngine([[call("save_note", {"path": str(note), "text": "written"})], "ok"])
        sink = Recorder(ApprovalChoice.DENY)
        await Agent(engine, servers, ApprovalPolicy("auto-readonly", trusted={"demo"})).run_turn("x", sink)
        [asked] = sink.of(ApprovalNeeded)
        assert asked.why == "auto-readonly: liar marks it read-only, but liar is not in trusted_servers (config.toml)"
        assert not note.exists()

        engine = ScriptedEngine([[call("save_note", {"path": str(note), "text": "written"})], "ok"])
        sink = Recorder()
        await Agent(engine, servers, ApprovalPolicy("auto-readonly", trusted={"liar"})).run_turn("x", sink)
        assert not sink.of(ApprovalNeeded) and note.read_text() == "written"
        assert [d.allowed_by for d in sink.of(CallDecided)] == ["auto-readonly (trusted server liar)"]


async def test_every_allowed_call_says_who_allowed_it(hub):
    engine = ScriptedEngine(
        [
            [call("calculator", {"expression": "1+1"}, "1"), call("echo", {"text": "a"}, "2")],
            "ok",
            [call("calculator", {"expression": "2+2"}, "1")],
            "ok",
            [call("echo", {"text": "b"}, "1"), call("whoami", {}, "2")],
            "ok",
        ]
    )
    policy = ApprovalPolicy("ask", saved={"fx": {"echo": "always"}})
    sink = Recorder(ApprovalChoice.ALWAYS_TOOL, ApprovalChoice.ALLOW_ONCE)
    agent = Agent(engine, hub, policy)
    for prompt in ("one", "two", "three"):
        await agent.run_turn(prompt, sink)
    assert [(d.call.tool, d.allowed_by) for d in sink.of(CallDecided)] == [
        ("calculator", "you (always, this session)"),
        ("echo", "saved always (config.toml)"),
        ("calculator", "you (always, this session)"),
        ("echo", "saved always (config.toml)"),
        ("whoami", "you (once)"),
    ]
    assert [e.why for e in sink.of(ApprovalNeeded)] == ['approval = "ask": every call asks'] * 2

    engine = ScriptedEngine([[call("whoami", {})], "ok", [call("whoami", {})], "ok"])
    sink = Recorder()
    await Agent(engine, hub, ApprovalPolicy("auto")).run_turn("x", sink)
    await Agent(engine, hub, ApprovalPolicy("ask", yes=True)).run_turn("x", sink)
    assert [d.allowed_by for d in sink.of(CallDecided)] == ["auto policy", "--yes"]


async def test_a_saved_always_that_cannot_be_written_is_said_and_kept_for_the_session(hub, tmp_path):
    from mcp_chat_tui.config import save_setting
    from mcp_chat_tui.config.settings import approval_value

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where config.toml's folder should be\n")
    path = blocker / "config.toml"
    policy = ApprovalPolicy("ask", on_save=lambda s, t, v: save_setting(path, ("approvals", s, t), approval_value(v)))
    engine = ScriptedEngine(
        [[call("calculator", {"expression": "1+1"})], "2", [call("calculator", {"expression": "2+2"})], "4"]
    )
    sink = Recorder(ApprovalDecision(ApprovalChoice.ALWAYS_TOOL, save=True))
    agent = Agent(engine, hub, policy)
    await agent.run_turn("one", sink)
    await agent.run_turn("two", sink)
    [notice] = sink.of(Notice)
    assert notice.text.startswith(
        f"demo › calculator: always allowed for this session, not saved: {path}: cannot be written"
    )
    assert len(sink.of(ApprovalNeeded)) == 1 and len(sink.of(CallFinished)) == 2
    assert [d.allowed_by for d in sink.of(CallDecided)] == ["you (always, this session)"] * 2
