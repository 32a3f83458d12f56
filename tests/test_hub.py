"""The server hub against real MCP servers: stdio subprocesses and streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import time

import pytest

from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.core.tools import FailureKind
from mcp_chat_tui.servers import ServerHub, ServerState
from tests.helpers import (
    call_by_model_name,
    demo_config,
    eventually,
    fixture_config,
    free_port,
    new_marker,
    pids_with,
    start_http_server,
)


def slow_call_running(hub: ServerHub, server: str) -> bool:
    """The fixture server said on stderr that its ``slow`` tool is running."""
    return any(line.endswith(": slow call started") for line in hub.status(server).stderr_tail)


async def test_stdio_and_http_servers_start_together_and_answer(tmp_path):
    port = free_port()
    http_process = start_http_server(["-m", "mcp_chat_tui.demo.server", "--http", str(port)], port)
    try:
        hub = ServerHub(
            [
                demo_config("demo", process=True),  # the stdio transport itself is under test
                fixture_config("fix"),
                ServerConfig(name="web", type="http", url=f"http://127.0.0.1:{port}/mcp"),
            ],
            log_dir=tmp_path,
        )
        async with hub:
            statuses = await hub.start_all()
            assert [s.state for s in statuses] == [ServerState.READY] * 3, [s.summary() for s in statuses]
            web = hub.status("web")
            assert web.transport == "http"
            assert {"calculator", "web_search", "current_time"} <= {t.name for t in web.tools}
            assert hub.status("fix").server_name == "fixture-fix"

            over_http = await hub.call_tool("web", "calculator", {"expression": "12 * 7"})
            over_stdio = await hub.call_tool("demo", "calculator", {"expression": "6 * 7"})
            assert over_http.ok and over_http.text == "12 * 7 = 84"
            assert over_stdio.ok and over_stdio.text == "6 * 7 = 42"
            assert over_stdio.duration > 0 and over_stdio.started_at is not None
            assert hub.status("demo").call_count == 1
            assert hub.status("demo").usage["calculator"].calls == 1
    finally:
        http_process.kill()
        http_process.wait()


async def test_same_tool_name_on_two_servers_is_made_unique_and_maps_back():
    hub = ServerHub(
        [fixture_config("alpha", in_process=True), fixture_config("beta", in_process=True), demo_config("demo")]
    )
    async with hub:
        await hub.start_all()
        names = {spec.model_name: spec for spec in hub.tools()}
        # Names both fixture servers expose are prefixed with their server ...
        assert "alpha__whoami" in names and "beta__whoami" in names
        assert "whoami" not in names
        # ... names only one server has stay as they are.
        assert names["calculator"].server == "demo"
        assert (await call_by_model_name(hub, "alpha__whoami")).text == "alpha"
        assert (await call_by_model_name(hub, "beta__whoami")).text == "beta"
        openai = names["beta__whoami"].to_openai()
        assert openai["function"]["name"] == "beta__whoami"
        assert hub.find_tool("whoami") is None


async def _assert_others_still_work(hub: ServerHub, name: str = "ok") -> None:
    result = await hub.call_tool(name, "echo", {"text": "still here"})
    assert result.ok and result.text == "still here"


async def test_command_not_found_is_reported_and_others_keep_working():
    hub = ServerHub(
        [
            ServerConfig(name="ghost", type="stdio", command="mcp-chat-tui-no-such-command"),
            fixture_config("ok", in_process=True),
        ]
    )
    async with hub:
        await hub.start_all()
        ghost = hub.status("ghost")
        assert ghost.state == ServerState.FAILED
        assert "command not found: 'mcp-chat-tui-no-such-command'" in ghost.reason
        assert "PATH" in ghost.reason
        await _assert_others_still_work(hub)
        failed = await hub.call_tool("ghost", "anything", {})
        assert failed.failure is not None and failed.failure.kind == FailureKind.NOT_READY
        assert "command not found" in failed.failure.message


async def test_server_exiting_during_initialize_is_reported_with_its_stderr():
    hub = ServerHub([fixture_config("quitter", "--exit-during-init"), fixture_config("ok", in_process=True)])
    async with hub:
        await hub.start_all()
        quitter = hub.status("quitter")
        assert quitter.state == ServerState.FAILED
        assert "exited with code 3 while starting" in quitter.reason
        assert "giving up during initialize" in quitter.reason
        await _assert_others_still_work(hub)


async def test_server_that_never_answers_initialize_times_out():
    hub = ServerHub([fixture_config("mute", "--never-answer", init_timeout=1.5), fixture_config("ok", in_process=True)])
    async with hub:
        started = time.monotonic()
        await hub.start_all()
        elapsed = time.monotonic() - started
        mute = hub.status("mute")
        assert mute.state == ServerState.FAILED
        assert "no answer to initialize within 1.5 s" in mute.reason
        assert elapsed >= 1.5
        await _assert_others_still_work(hub)


async def test_server_crashing_during_a_call_is_reported_and_can_be_restarted():
    marker = new_marker()
    hub = ServerHub([fixture_config("fragile", marker=marker), fixture_config("ok", in_process=True)])
    async with hub:
        await hub.start_all()
        result = await hub.call_tool("fragile", "crash", {})
        assert result.failure is not None and result.failure.kind == FailureKind.CRASHED
        assert "fragile" in result.failure.message
        assert await eventually(lambda: hub.status("fragile").state == ServerState.CRASHED, 5)
        assert await eventually(lambda: not pids_with(marker), 5), "the crashed server's process is still there"
        assert "fragile" not in {spec.server for spec in hub.tools()}
        await _assert_others_still_work(hub)

        status = await hub.restart("fragile")
        assert status.state == ServerState.READY and status.restarts == 1
        assert (await hub.call_tool("fragile", "whoami")).text == "fragile"


async def test_tool_past_its_timeout_fails_after_that_time_and_server_stays_usable():
    hub = ServerHub([fixture_config("sleepy", timeout=1.0, in_process=True)])
    async with hub:
        await hub.start_all()
        started = time.monotonic()
        result = await hub.call_tool("sleepy", "slow", {"seconds": 30})
        elapsed = time.monotonic() - started
        assert result.failure is not None and result.failure.kind == FailureKind.TIMEOUT
        assert "within 1 s" in result.failure.message
        assert 1.0 <= elapsed < 10
        assert hub.status("sleepy").state == ServerState.READY
        assert (await hub.call_tool("sleepy", "echo", {"text": "awake"})).text == "awake"
        # An explicit per-call timeout wins over the server's own.
        quick = await hub.call_tool("sleepy", "slow", {"seconds": 0.2}, timeout=5)
        assert quick.ok


async def test_cancelling_a_call_leaves_the_server_usable():
    hub = ServerHub([fixture_config("s")])
    async with hub:
        await hub.start_all()
        task = asyncio.create_task(hub.call_tool("s", "slow", {"seconds": 30}))
        assert await eventually(lambda: slow_call_running(hub, "s"), 20), "the slow call never started on the server"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (await hub.call_tool("s", "echo", {"text": "fine"})).text == "fine"
        assert hub.status("s").state == ServerState.READY


async def test_non_protocol_text_on_stdout_is_ignored_and_noted():
    hub = ServerHub([fixture_config("noisy", "--stdout-noise")])
    async with hub:
        await hub.start_all()
        status = hub.status("noisy")
        assert status.state == ServerState.READY, status.summary()
        assert (await hub.call_tool("noisy", "echo", {"text": "clean"})).text == "clean"
        assert any("not an MCP message" in line for line in status.stderr_tail)


async def test_a_5mb_result_is_cut_to_the_limit():
    hub = ServerHub([fixture_config("big")], max_result_chars=100_000)
    async with hub:
        await hub.start_all()
        result = await hub.call_tool("big", "big", {"size": 5_000_000})
        assert result.ok
        assert len(result.text) == 100_000
        assert result.truncated and result.full_size == 5_000_000
        assert "[result cut: 5000000 characters in all]" in result.for_model()


async def test_stderr_is_captured_in_the_tail_and_the_log_file(tmp_path):
    hub = ServerHub([fixture_config("talker")], log_dir=tmp_path)
    async with hub:
        await hub.start_all()
        await hub.call_tool("talker", "shout_to_stderr", {"text": "hello log"})
        status = hub.status("talker")
        assert await eventually(lambda: any("stderr says: hello log" in line for line in status.stderr_tail), 5)
    log_text = (tmp_path / "talker.log").read_text()
    assert "fixture talker starting" in log_text and "stderr says: hello log" in log_text


async def test_tool_list_changed_refreshes_that_servers_tools():
    hub = ServerHub([fixture_config("grower", in_process=True)])
    heard = []
    hub.add_observer(lambda status: heard.append([t.name for t in status.tools]))
    async with hub:
        await hub.start_all()
        assert hub.find_tool("sprout") is None
        result = await hub.call_tool("grower", "add_tool", {"name": "sprout"})
        assert result.ok, result.for_model()
        assert await eventually(lambda: hub.find_tool("sprout") is not None, 10), "the new tool never reached the hub"
        assert hub.find_tool("sprout").server == "grower"
        assert (await call_by_model_name(hub, "sprout")).text == "I am sprout"
        assert any("sprout" in names for names in heard)


async def test_all_pages_of_a_long_tool_list_are_read():
    hub = ServerHub([fixture_config("many", "--extra-tools", "150", in_process=True)])
    async with hub:
        await hub.start_all()
        names = {spec.name for spec in hub.status("many").tools}
        assert {"extra_0", "extra_149", "whoami"} <= names


async def test_observers_hear_each_state_change():
    hub = ServerHub([fixture_config("watched", in_process=True)])
    states = []
    hub.add_observer(lambda status: states.append(status.state))
    async with hub:
        await hub.start_all()
        await hub.call_tool("watched", "echo", {"text": "x"})
    assert states[0] == ServerState.STARTING
    assert ServerState.READY in states and ServerState.BUSY in states
    assert states[-1] == ServerState.STOPPED


async def test_disabled_servers_are_not_started():
    marker = new_marker()
    hub = ServerHub([fixture_config("off", marker=marker, disabled=True), fixture_config("on")])
    async with hub:
        await hub.start_all()
        assert hub.status("off").state == ServerState.DISABLED
        assert not pids_with(marker)
        assert hub.status("on").state == ServerState.READY


async def test_no_server_process_outlives_shutdown():
    marker = new_marker()
    hub = ServerHub([fixture_config(f"s{i}", marker=marker) for i in range(3)])
    async with hub:
        await hub.start_all()
        assert len(pids_with(marker)) == 3
        pending = asyncio.create_task(hub.call_tool("s0", "slow", {"seconds": 60}))
        assert await eventually(lambda: slow_call_running(hub, "s0"), 20), "the slow call never started on the server"
    assert [s.state for s in hub.statuses] == [ServerState.STOPPED] * 3
    assert not pids_with(marker)
    result = await pending
    assert not result.ok


async def test_an_sse_server_with_headers_is_reached_and_called():
    port = free_port()
    process = start_http_server(["-m", "mcp_chat_tui.demo.server", "--sse", str(port)], port)
    try:
        hub = ServerHub(
            [
                ServerConfig(
                    name="old",
                    type="sse",
                    url=f"http://127.0.0.1:{port}/sse",
                    headers={"Authorization": "Bearer test-token"},
                )
            ]
        )
        async with hub:
            await hub.start_all()
            status = hub.status("old")
            assert status.state == ServerState.READY, status.summary()
            assert status.transport == "sse"
            result = await hub.call_tool("old", "convert_units", {"value": 5, "from_unit": "km", "to_unit": "mi"})
            assert result.ok and result.text.startswith("5 km = 3.10686 mi")
    finally:
        process.kill()
        process.wait()


async def test_an_unreachable_http_server_fails_with_a_clear_reason():
    port = free_port()
    hub = ServerHub([ServerConfig(name="away", type="http", url=f"http://127.0.0.1:{port}/mcp")], init_timeout=5)
    async with hub:
        await hub.start_all()
        status = hub.status("away")
        assert status.state == ServerState.FAILED
        assert f"cannot connect to http://127.0.0.1:{port}/mcp" in status.reason


async def test_configured_headers_carry_a_bearer_token_to_an_http_server():
    from tests.helpers import FIXTURE_SERVER

    port = free_port()
    process = start_http_server(
        [FIXTURE_SERVER, "--label", "guarded", "--http", str(port), "--require-token", "s3cret"], port
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        hub = ServerHub(
            [
                ServerConfig(name="with", type="http", url=url, headers={"Authorization": "Bearer s3cret"}),
                ServerConfig(name="without", type="http", url=url),
            ],
            init_timeout=5,
        )
        async with hub:
            await hub.start_all()
            assert hub.status("with").state == ServerState.READY, hub.status("with").summary()
            assert (await hub.call_tool("with", "whoami")).text == "guarded"
            refused = hub.status("without")
            assert refused.state == ServerState.FAILED
            assert (
                refused.reason
                == f"{url} answered HTTP 401 Unauthorized (check the token or headers for it in mcp.json)"
            )
    finally:
        process.kill()
        process.wait()
