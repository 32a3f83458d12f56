"""The MCP SDK's private names the app relies on, all in this one module.

Each is used where the SDK offers no public way to do what the app needs: start and stop a stdio
server as the SDK does while reading its stdout itself (stdio_transport.py), shorter shutdown
graces and a longer SSE event (transports.py), a ``tools/list`` page as the server sent it when the
SDK's whole-page check refuses it for one bad tool (listing.py), the in-memory transport, the
session a task-aware client builds (task_session.py), and the steps of the OAuth flow the app
follows (oauth.py). ``PRIVATE_NAMES`` and ``SESSION_NAMES`` list every one, the methods the app's
subclasses override included; tests/test_sdk_private.py checks each still exists in the installed
SDK, so an upgrade that removes one fails there, naming it, and not somewhere in a user's session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import mcp_types
from mcp import Client
from mcp.client import client as sdk_client
from mcp.client import session as sdk_session
from mcp.client import sse as sdk_sse
from mcp.client import stdio as sdk_stdio
from mcp.client._memory import InMemoryTransport
from mcp.client._transport import TransportStreams
from mcp.client.auth import OAuthClientProvider
from mcp.client.session import ClientSession
from mcp.shared._httpx_utils import create_mcp_http_client, sse_within_origin
from mcp.shared.dispatcher import CallOptions

__all__ = [
    "InMemoryTransport",
    "TransportStreams",
    "create_mcp_http_client",
    "evicting_message_handler",
    "sse_within_origin",
]

LEGACY_VERSION = "2025-11-25"  # what the SDK validates against before a version is negotiated
evicting_message_handler = sdk_client._evicting_message_handler

PRIVATE_NAMES: tuple[tuple[Any, str], ...] = (
    (sdk_stdio, "_get_executable_command"),
    (sdk_stdio, "_create_platform_compatible_process"),
    (sdk_stdio, "_drain_stdout"),
    (sdk_stdio, "_stop_server_process"),
    (sdk_stdio, "PROCESS_TERMINATION_TIMEOUT"),  # read by the SDK when it stops a server
    (sdk_stdio, "FORCE_KILL_TIMEOUT"),
    (sdk_sse, "sse_within_origin"),  # what its SSE transport reads events with
    (sdk_client, "_evicting_message_handler"),
    (sdk_session, "_clamp_inbound_ttl"),
    (sdk_session, "_later_revision_fields"),
    (ClientSession, "_absorb_tool_listing"),
    (ClientSession, "_build_capabilities"),  # overridden by task_session.TaskSession
    (ClientSession, "_on_request"),
    (ClientSession, "_on_notify"),
    (Client, "_build_session"),  # overridden by task_session.TaskClient, which builds as the SDK does
    (OAuthClientProvider, "_initialize"),  # overridden by oauth_provider.AppOAuthProvider
    (OAuthClientProvider, "_perform_authorization"),
    (OAuthClientProvider, "_exchange_token_authorization_code"),
    (OAuthClientProvider, "_refresh_token"),
)
SESSION_NAMES = ("_dispatcher", "_stamp", "_session_read_timeout_seconds", "_negotiated_version")  # a session's own
CLIENT_NAMES = (
    "_connect",
    "_response_cache",
    "_folded_extensions",
)  # a client's own, read by TaskClient._build_session


async def executable_command(command: str) -> str:
    return await sdk_stdio._get_executable_command(command)


async def spawn_server(**options: Any) -> Any:
    """The server's process, started as the SDK starts it (its own process group, its stderr)."""
    return await sdk_stdio._create_platform_compatible_process(**options)


async def drain_stdout(process: Any) -> None:
    await sdk_stdio._drain_stdout(process)


async def stop_server(process: Any) -> None:
    """Stop it as the SDK does: stdin closed, then SIGTERM to its group, then SIGKILL."""
    await sdk_stdio._stop_server_process(process)


def set_stdio_graces(exit_grace: float, kill_grace: float) -> None:
    """The seconds the SDK waits for a server to exit after its stdin closes, and after SIGTERM."""
    sdk_stdio.PROCESS_TERMINATION_TIMEOUT = exit_grace
    sdk_stdio.FORCE_KILL_TIMEOUT = kill_grace


def read_sse_events_with(reader: Callable[..., Any]) -> None:
    """Have the SDK's SSE transport read its events with ``reader`` (it gives no option for their size)."""
    sdk_sse.sse_within_origin = reader  # type: ignore[attr-defined]


def absorb_tool_listing(session: ClientSession, page: mcp_types.ListToolsResult, *, complete: bool) -> None:
    """What the SDK's ``list_tools`` does with a page it accepted (output schemas, header maps)."""
    session._absorb_tool_listing(page, complete=complete)


@contextmanager
def noting_absorbed_pages(session: ClientSession, note: Callable[[mcp_types.ListToolsResult], None]) -> Iterator[None]:
    """``note`` hears each ``tools/list`` page before the session absorbs it."""
    absorb = session._absorb_tool_listing

    def noting(result: mcp_types.ListToolsResult, *, complete: bool) -> mcp_types.ListToolsResult:
        note(result)
        return absorb(result, complete=complete)

    session._absorb_tool_listing = noting  # type: ignore[method-assign]
    try:
        yield
    finally:
        if vars(session).get("_absorb_tool_listing") is noting:  # the class's own again
            del session._absorb_tool_listing


def negotiated_version(session: ClientSession) -> str | None:
    return session._negotiated_version


async def send_raw(session: ClientSession, request: mcp_types.Request[Any, Any]) -> Any:
    """Send ``request`` through the session's own request path (its per-version stamp and read
    timeout) and return the result as the server sent it, unchecked."""
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    options: CallOptions = {}
    session._stamp(data, options)
    timeout = session._session_read_timeout_seconds
    if timeout is not None:
        options["timeout"] = timeout
    return await session._dispatcher.send_raw_request(data["method"], data.get("params"), options)


async def raw_result(session: ClientSession, request: mcp_types.ListToolsRequest) -> object:
    """The result of ``request`` as the server sent it, through the session's own request path: its
    per-version stamp and read timeout, a negative ``ttlMs`` floored to 0 and a later revision's fields
    dropped, as the SDK's ``send_request`` does, up to (not including) the whole-result check."""
    raw = await send_raw(session, request)
    if not isinstance(raw, Mapping):
        return raw
    result = dict(raw)
    sdk_session._clamp_inbound_ttl(result)
    foreign = sdk_session._later_revision_fields(request.method, session._negotiated_version or LEGACY_VERSION)
    return {key: value for key, value in result.items() if key not in foreign}
