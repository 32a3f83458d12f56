"""Canaries for the MCP SDK's private names the app uses (all in servers/sdk_private.py): each one
still exists in the installed SDK, or its test fails naming it and the module to adapt."""

from __future__ import annotations

from importlib.metadata import version

import pytest
from mcp import Client

from mcp_chat_tui.servers.sdk_private import CLIENT_NAMES, PRIVATE_NAMES, SESSION_NAMES, InMemoryTransport
from tests.helpers import demo_server


def missing(owner: object, name: str) -> str | None:
    """What to tell whoever upgraded the SDK when ``owner`` has no ``name`` (None when it has)."""
    if hasattr(owner, name):
        return None
    where = getattr(owner, "__qualname__", None) or getattr(owner, "__name__", repr(owner))
    return f"mcp {version('mcp')} has no {where}.{name}: servers/sdk_private.py relies on it; adapt it there"


@pytest.mark.parametrize(
    ("owner", "name"), PRIVATE_NAMES, ids=[f"{getattr(o, '__name__', o)}.{n}" for o, n in PRIVATE_NAMES]
)
def test_the_sdk_still_has(owner: object, name: str) -> None:
    assert missing(owner, name) is None, missing(owner, name)


async def test_a_connected_session_still_has_its_private_members() -> None:
    async with Client(InMemoryTransport(demo_server())) as client:
        gone = [missing(client.session, name) for name in SESSION_NAMES if missing(client.session, name)]
        gone += [missing(client, name) for name in CLIENT_NAMES if missing(client, name)]
    assert gone == []


def test_a_name_the_sdk_lost_is_reported_with_the_module_to_adapt() -> None:
    import mcp.client.stdio as sdk_stdio

    said = missing(sdk_stdio, "_a_helper_an_upgrade_removed")
    assert said is not None and "mcp.client.stdio._a_helper_an_upgrade_removed" in said
    assert "servers/sdk_private.py" in said and version("mcp") in said
