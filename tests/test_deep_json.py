"""JSON nested 100,000 deep from a server (tests/servers/deep_json_server.py, raw JSON-RPC): in an
answer, a notification, a tool's schema, a stray line on stdout. Each fails its one message at
once with a protocol error that names the server and what was wrong; nothing raises
RecursionError into a handler, and the server stays usable. Nesting a parser still takes (190
deep) is followed through what the client does with it afterwards."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.core.text import pretty_json
from mcp_chat_tui.core.tools import FailureKind
from mcp_chat_tui.servers import ServerHub, ServerState
from tests.helpers import eventually

DEEP_SERVER = str(Path(__file__).parent / "servers" / "deep_json_server.py")


def deep_config(*flags: str, **overrides: object) -> ServerConfig:
    return ServerConfig(name="deep", type="stdio", command=sys.executable, args=[DEEP_SERVER, *flags], **overrides)


async def test_an_answer_nested_100000_deep_fails_its_call_at_once_with_a_protocol_error():
    async with ServerHub([deep_config(timeout=60)]) as hub:
        await hub.start_all()
        started = time.perf_counter()
        result = await hub.call_tool("deep", "deep_result", {})
        took = time.perf_counter() - started
        assert result.failure is not None and result.failure.kind == FailureKind.PROTOCOL_ERROR
        message = result.failure.message
        assert message.startswith("server 'deep' broke the protocol: an answer from the server could not be read")
        assert "recursion limit exceeded" in message
        assert took < 20, f"the call waited {took:.1f} s, toward its 60 s timeout"
        status = hub.status("deep")
        assert status.state == ServerState.READY and status.protocol_problem_count == 1
        assert (await hub.call_tool("deep", "echo", {"text": "still here"})).text == "still here"


async def test_a_notification_or_a_stray_line_nested_100000_deep_costs_only_itself():
    async with ServerHub([deep_config(timeout=60)]) as hub:
        await hub.start_all()
        logged = await hub.call_tool("deep", "deep_log", {})
        noisy = await hub.call_tool("deep", "deep_noise", {})
        assert logged.text == "logged" and noisy.text == "noisy"
        status = hub.status("deep")
        assert await eventually(lambda: status.protocol_problem_count == 1)
        assert status.protocol_problems[0].startswith("a message from the server could not be read")
        assert any("not an MCP message: '[[[[" in line for line in status.stderr_tail)
        assert status.state == ServerState.READY
        assert (await hub.call_tool("deep", "echo", {"text": "fine"})).text == "fine"


async def test_a_deep_line_on_stdout_before_the_handshake_is_ignored():
    async with ServerHub([deep_config("--noise-first")]) as hub:
        await hub.start_all()
        assert hub.status("deep").state == ServerState.READY, hub.status("deep").summary()


async def test_a_tool_schema_nested_100000_deep_fails_the_start_at_once_and_says_why():
    async with ServerHub([deep_config("--deep-schema", "100000", init_timeout=60)]) as hub:
        started = time.perf_counter()
        await hub.start_all()
        took = time.perf_counter() - started
        status = hub.status("deep")
    assert status.state == ServerState.FAILED
    assert status.reason.startswith("an answer from the server could not be read (Invalid JSON: recursion limit")
    assert "not JSON-RPC" not in status.reason, status.reason  # it is JSON-RPC, nested too deep to read
    assert status.reason.count("could not be read") == 1, status.reason
    assert status.protocol_problem_count == 1
    assert took < 20, f"the start waited {took:.1f} s, toward its 60 s timeout"


async def test_nesting_a_parser_takes_goes_through_schemas_and_results():
    """A tool schema 180 deep is listed; structured content 190 deep with an output schema as deep
    fails its call as a protocol error (the SDK's schema check recurses deeper than Python allows)."""
    async with ServerHub([deep_config("--deep-schema", "180")]) as hub:
        await hub.start_all()
        status = hub.status("deep")
        assert status.state == ServerState.READY, status.summary()
        assert "deep_schema" in {spec.name for spec in status.tools}
        result = await hub.call_tool("deep", "shaped", {})
        assert result.failure is not None and result.failure.kind == FailureKind.PROTOCOL_ERROR
        assert result.failure.message == (
            "server 'deep' broke the protocol: its result, or the tool's output schema, is nested too deep "
            "to check the one against the other"
        )
        assert status.protocol_problem_count == 1
        assert (await hub.call_tool("deep", "echo", {"text": "fine"})).text == "fine"


def test_json_too_deep_to_show_is_shown_as_text():
    deep = "[" * 100_000 + "]" * 100_000
    from mcp_chat_tui.ui.widgets.attachments import preview

    shown = preview(Attachment("resource", "docs", "deep.json", "file:///deep.json", "application/json", deep))
    assert str(shown.content).startswith("[[[[")  # type: ignore[attr-defined]
    value: list = []
    for _ in range(5_000):  # deeper than Python's JSON encoder goes
        value = [value]
    assert pretty_json(value) == "[nested too deep to show]"
    assert json.loads(pretty_json({"a": [1, {"b": 2}]})) == {"a": [1, {"b": 2}]}
