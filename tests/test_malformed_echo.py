"""A model that writes back what it was told of a malformed call is not given the turn's rounds to do
it again and again (issue 30).

Recorded from a real run: Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF, greedy), asked "Add 17 and 25
with a tool" with the reference time, filesystem and everything servers, called 'add-17-and-25';
told that no offered tool has that name, it made the reason it was given the next call's name, and
that call's reason the next one's, round after round (each longer, at about a token a second). The
agent here runs with real MCP servers (in process) and the recogniser reads the recorded calls as it
reads a reply; the scripted engine plays them."""

from __future__ import annotations

import pytest

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.events import CallFinished, TurnEnd, TurnFinished
from mcp_chat_tui.agent.turn import echoes, told_sentences
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.engine.callcheck import NAME_QUOTED, CallChecker
from mcp_chat_tui.engine.events import ToolCallMalformed
from mcp_chat_tui.engine.toolcalls import ToolCallStream
from mcp_chat_tui.servers import ServerHub
from tests.fakes import ScriptedEngine
from tests.helpers import demo_config, fixture_config
from tests.test_agent import Recorder

TOLD = (
    "no offered tool has a similar name. The tools you can call are: get-annotated-message, read_media_file, "
    "gzip-file-as-resource, trigger-url-elicitation, get-tiny-image, trigger-sampling-request, "
    "toggle-simulated-logging, trigger-elicitation-request and 26 more. Call one by its exact name with a JSON "
    "object of arguments, or answer in text."
)
RECORDED = [  # the calls of the run's first three replies, as the model wrote them
    '{\n  "name": "add-17-and-25",\n  "arguments": {\n    "a": 17,\n    "b": 25\n  }\n}',
    '{\n  "name": "unknown tool \'add-17-and-25\': '
    + TOLD
    + '",\n  "arguments": {\n    "tool": "add-17-and-25"\n  }\n}',
    "{\n  \"name\": \"unknown tool 'unknown tool 'add-17-and-25': "
    + TOLD
    + '",\n  "arguments": {\n    "tool": "unknown tool \'add-17-and-25\'"\n  }\n}',
]


@pytest.fixture
async def hub():
    servers = ServerHub([demo_config("demo"), fixture_config("fx", timeout=1.0, in_process=True)])
    async with servers:
        await servers.start_all()
        yield servers


def read_as_a_reply(text: str, known: set[str]) -> ToolCallMalformed:
    stream = ToolCallStream(known)
    [event] = [e for e in [*stream.feed(text), *stream.finish()] if isinstance(e, ToolCallMalformed)]
    return event


async def test_a_model_writing_back_what_it_was_told_ends_the_turn(hub):
    known = {spec.model_name for spec in hub.tools()}
    replies = [[read_as_a_reply(text, known)] for text in RECORDED * 2]
    engine = ScriptedEngine([*replies, "never asked"])
    sink = Recorder()
    assert await Agent(engine, hub, ApprovalPolicy("auto")).run_turn("Add 17 and 25 with a tool", sink) == (
        TurnEnd.REPEATED_CALLS
    )
    assert len(engine.prompts) == 3, "the model was given more rounds to write back what it was told"
    assert [event.status for event in sink.of(CallFinished)] == [CallState.MALFORMED] * 3
    [done] = sink.of(TurnFinished)
    assert done.note.startswith("stopped: the model wrote again a tool call it was told it could not use")


def test_what_the_model_was_told_is_found_in_the_call_that_writes_it_back():
    told = told_sentences([f"Your tool call could not be used: unknown tool 'add-17-and-25': {TOLD}"])
    assert not echoes(RECORDED[0], told)
    assert echoes(RECORDED[1], told) and echoes(RECORDED[2], told)
    assert not echoes('{"name": "list_files", "arguments": {"path": "/tmp"}}', told)


def test_a_name_longer_than_any_tools_is_quoted_cut():
    name = "unknown tool 'add-17-and-25': " + TOLD
    reason = CallChecker({"get-sum", "echo"}).unknown_reason(name, None)
    assert reason.startswith(f"unknown tool '{name[:NAME_QUOTED]}…' ({len(name)} characters): ")
    assert TOLD not in reason
