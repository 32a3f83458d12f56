"""A 2026-07-28 result without ``resultType`` is a complete result (the spec), which the SDK refuses:
the app adds the field's meaning in one place (servers/result_type.py). And a result that really is
malformed fails with each problem named. tests/servers/lenient_server.py, in process to show the
SDK's refusal, over stdio through the hub."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from mcp import Client
from pydantic import ValidationError

from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.servers import ServerHub, ServerState
from mcp_chat_tui.servers.catalog import CatalogError
from tests.helpers import free_port, start_http_server

LENIENT_SERVER = Path(__file__).parent / "servers" / "lenient_server.py"


def lenient_config(*flags: str, name: str = "lenient") -> ServerConfig:
    return ServerConfig(name=name, type="stdio", command=sys.executable, args=[str(LENIENT_SERVER), *flags])


def lenient_server(*, no_result_type: bool):
    sys.path.insert(0, str(LENIENT_SERVER.parent))
    try:
        import lenient_server
    finally:
        sys.path.remove(str(LENIENT_SERVER.parent))
    return lenient_server.build(argparse.Namespace(no_result_type=no_result_type))


async def test_the_sdk_itself_refuses_a_result_without_result_type():
    """Why servers/result_type.py exists: should the SDK come to accept such a result, this fails, and
    the module can go."""
    async with Client(lenient_server(no_result_type=True)) as client:
        assert client.protocol_version == "2026-07-28"
        with pytest.raises(ValidationError) as refused:
            await client.call_tool("echo", {"text": "hi"})
    assert refused.value.error_count() == 2  # one for each arm of CallToolResult | InputRequiredResult
    assert all(error["loc"][-1] == "resultType" for error in refused.value.errors())


@contextmanager
def lenient_over(transport: str) -> Iterator[ServerConfig]:
    """The lenient server without ``resultType``, over stdio or streamable HTTP (its own process)."""
    if transport == "stdio":
        yield lenient_config("--no-result-type")
        return
    port = free_port()
    process = start_http_server([str(LENIENT_SERVER), "--no-result-type", "--http", str(port)], port)
    try:
        yield ServerConfig(name="lenient", type="http", url=f"http://127.0.0.1:{port}/mcp")
    finally:
        process.kill()
        process.wait()


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_results_without_result_type_are_read_as_complete(transport):
    with lenient_over(transport) as config:
        await _read_as_complete(config)


async def _read_as_complete(config: ServerConfig) -> None:
    async with ServerHub([config]) as hub:
        await hub.start_all()
        status = hub.status("lenient")
        assert status.protocol_version == "2026-07-28" and status.state.usable, status.reason
        assert [tool.name for tool in status.tools] == ["get_weather", "echo", "broken", "notes_inline"]
        assert status.catalog_problems == []  # prompts, resources and templates listed
        assert [resource.uri for resource in hub.resources()] == [
            "files://notes.txt",
            "files://latin1.txt",
            "files://broken.txt",
        ]
        result = await hub.call_tool("lenient", "echo", {"text": "hi"})
        assert result.ok, result.failure
        assert result.for_model() == "hi"
        (notes,) = await hub.read_resource("lenient", "files://notes.txt")
        assert notes.uri == "files://notes.txt"


@pytest.mark.parametrize("flags", [(), ("--no-result-type",)])
async def test_a_malformed_result_fails_naming_each_problem(flags):
    async with ServerHub([lenient_config(*flags)]) as hub:
        await hub.start_all()
        result = await hub.call_tool("lenient", "broken")
    assert not result.ok
    assert result.failure.message == (
        "the server sent a malformed result: content.0.text is missing; isError: Input should be a valid boolean, "
        "unable to interpret input"
    )


async def test_a_malformed_resource_fails_its_read_naming_the_problem():
    async with ServerHub([lenient_config()]) as hub:
        await hub.start_all()
        with pytest.raises(CatalogError) as failed:
            await hub.read_resource("lenient", "files://broken.txt")
    assert str(failed.value) == (
        "reading files://broken.txt from lenient failed: the server sent a malformed result: contents.0.text is "
        "missing; contents.0.blob is missing"
    )


async def test_a_malformed_answer_while_starting_names_each_problem():
    """tests/servers/bad_json_server.py: a raw server, since the SDK's never answers initialize so."""
    raw_server = Path(__file__).parent / "servers" / "bad_json_server.py"
    config = ServerConfig(
        name="lenient", type="stdio", command=sys.executable, args=[str(raw_server), "--malformed-initialize"]
    )
    async with ServerHub([config]) as hub:
        await hub.start_all()
        status = hub.status("lenient")
        assert status.state == ServerState.FAILED
        assert status.reason.startswith(
            "the server sent a malformed answer while starting: capabilities: Input should be a valid dictionary"
        ), status.reason
        assert "serverInfo is missing" in status.reason
