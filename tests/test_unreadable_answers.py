"""A server line that is a JSON-RPC message the SDK cannot read (a lone surrogate escape, which
pydantic refuses) is dropped by the SDK: the hub notices it, counts it as a protocol problem the
server panel shows, and fails the call that waited for that answer at once instead of at its
timeout (tests/servers/bad_json_server.py, a raw JSON-RPC server)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.core.tools import FailureKind
from mcp_chat_tui.servers import ServerHub, ServerState, protocol_notes
from tests.fakes import ScriptedEngine, call
from tests.ui_helpers import SIZE, make_app, send, wait_ready, wait_turn_done

SERVER = Path(__file__).resolve().parent / "servers" / "bad_json_server.py"


def bad_json_config() -> ServerConfig:
    return ServerConfig(name="bad", type="stdio", command=sys.executable, args=[str(SERVER)], timeout=60)


async def test_a_call_whose_answer_cannot_be_read_fails_at_once_and_the_server_says_why():
    hub = ServerHub([bad_json_config()])
    async with hub:
        await hub.start_all()
        assert hub.status("bad").state == ServerState.READY
        began = time.perf_counter()
        result = await hub.call_tool("bad", "broken", {})
        took = time.perf_counter() - began
        status = hub.status("bad")
    assert took < 20, f"the call waited {took:.1f} s: toward its 60 s timeout"
    assert result.failure is not None and result.failure.kind == FailureKind.PROTOCOL_ERROR
    assert "an answer from the server could not be read" in result.failure.message
    assert "surrogate" in result.failure.message
    assert status.protocol_problem_count == 1
    assert "could not be read" in protocol_notes(status)


async def test_the_app_shows_the_call_failed_and_the_server_problem():
    engine = ScriptedEngine([[call("broken", {})], "It failed."])
    app = make_app(engine, [bad_json_config()], policy=ApprovalPolicy("auto"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "try it")
        await wait_turn_done(pilot, app)
        [record] = app.calls_table.records.values()
        assert record.state is CallState.ERROR
        assert "could not be read" in record.content_for_model
        assert "1 protocol problem" in str(app.servers_table.get_row_at(0))
