"""Build the SDK transport for one configured server, and explain start-up failures in plain words."""

from __future__ import annotations

import logging
import shutil
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import ValidationError

from mcp_chat_tui.core.redact import without_url_secrets
from mcp_chat_tui.servers.result_type import complete_by_default
from mcp_chat_tui.servers.results import validation_problems
from mcp_chat_tui.servers.stdio_transport import stdio_streams
from mcp_chat_tui.servers.stdout_lines import line_limit
from mcp_chat_tui.servers.watchdog import server_watchdog

if TYPE_CHECKING:
    import httpx2

    from mcp_chat_tui.servers.sdk_private import InMemoryTransport

log = logging.getLogger(__name__)

# How the SDK stops a stdio server: close its stdin, wait PROCESS_TERMINATION_TIMEOUT for it to
# exit, SIGTERM its process group, wait FORCE_KILL_TIMEOUT, SIGKILL. Its 2 s + 2 s would hold the
# app's exit (Ctrl+C, SIGTERM) well past the second it promises whenever a server does not read
# its stdin (one still starting, one busy); a server that reads it exits at once either way.
SERVER_EXIT_GRACE = 0.25  # seconds after stdin closes before SIGTERM
SERVER_KILL_GRACE = 0.3  # seconds after SIGTERM before SIGKILL


@asynccontextmanager
async def stdio_transport(
    config: Any, errlog: TextIO, on_spawn: Callable[[Any], None] | None = None
) -> AsyncIterator[Any]:
    """The stdio transport (``stdio_transport.py``: the SDK's start and stop, the app's reader of
    stdout) with the server's stderr sent to ``errlog``, the shorter shutdown grace above (the SDK
    reads these module settings when it stops a server), and the server's process group watched
    from spawn to stop, so neither it nor its children outlive the app. ``on_spawn`` hears of the
    process as soon as it exists."""
    from mcp import StdioServerParameters

    from mcp_chat_tui.servers.sdk_private import set_stdio_graces

    set_stdio_graces(SERVER_EXIT_GRACE, SERVER_KILL_GRACE)
    params = StdioServerParameters(
        command=config.command,
        args=list(config.args),
        env=config.effective_env() or None,
        cwd=str(config.cwd) if config.cwd else None,
        # Bytes that are not UTF-8 become U+FFFD (the reader decodes so): such a line is then reported as not
        # JSON-RPC instead of ending the reader.
        encoding_error_handler="replace",
    )
    groups: list[int] = []  # the server's pid is its process group's id (it starts a session of its own)

    def watch(process: Any) -> None:
        groups.append(process.pid)
        server_watchdog().watch(process.pid)
        if on_spawn is not None:
            on_spawn(process)

    try:
        async with complete_by_default(stdio_streams(params, errlog, watch)) as streams:
            yield streams
    finally:
        for pgid in groups:  # the server is stopped: what is left of its group goes now
            server_watchdog().release(pgid)


def memory_transport(config: Any) -> InMemoryTransport | None:
    """The SDK's in-memory transport to the ``MCPServer`` that a config built by the tests carries
    (its ``in_process()``): the same server code and the same client above the transport, without
    a process to start (tests/helpers.py). None for every config the app reads from a file."""
    from mcp_chat_tui.servers.sdk_private import InMemoryTransport

    build = getattr(config, "in_process", None)
    return InMemoryTransport(build()) if build is not None else None


@asynccontextmanager
async def http_transport(
    url: str,
    headers: dict[str, str],
    on_response: Callable[[int, str], None] | None = None,
    auth: httpx2.Auth | None = None,
) -> AsyncIterator[Any]:
    """The SDK's streamable HTTP transport, with the configured headers (bearer tokens and the like)
    and ``auth`` (the OAuth sign-in, ``servers/oauth.py``).

    ``on_response`` hears every response's status (the sign-in's too): an error the SDK reports
    only as a generic one, so a refused token can be named as such, and a sign of life while starting.
    """
    from mcp.client.streamable_http import streamable_http_client

    from mcp_chat_tui.servers.sdk_private import create_mcp_http_client

    async with create_mcp_http_client(headers=headers or None, auth=auth) as http_client:
        if on_response is not None:

            async def note(response: Any) -> None:
                on_response(response.status_code, response.reason_phrase)

            http_client.event_hooks["response"].append(note)
        # The SDK keeps one event of a streamed answer to 1 MiB; a larger one failed its call as a
        # closed connection (the server shown crashed). Stdio's limit is the one for every transport.
        limit = line_limit()
        http = streamable_http_client(url, http_client=http_client, max_sse_event_size=limit)
        async with complete_by_default(http) as streams:
            yield streams


def sse_transport(url: str, headers: dict[str, str], auth: httpx2.Auth | None = None) -> Any:
    """The SDK's SSE transport, with stdio's limit on one message (``_sse_events``)."""
    from mcp.client import sse as sdk_sse

    from mcp_chat_tui.servers.sdk_private import read_sse_events_with

    read_sse_events_with(_sse_events)
    return complete_by_default(sdk_sse.sse_client(url, headers=headers or None, auth=auth))


def _sse_events(client: httpx2.AsyncClient, url: Any, **options: Any) -> Any:
    """The SDK's event source for its SSE transport, which keeps each event to 1 MiB and gives no
    way to say otherwise: past that the connection is lost (the server shown crashed). Past stdio's
    limit it still is: the SDK's SSE reader ends on an event it will not keep."""
    from mcp_chat_tui.servers.sdk_private import sse_within_origin

    return sse_within_origin(client, url, **(options | {"max_event_size": line_limit()}))


def root_cause(exc: BaseException) -> BaseException:
    """The first leaf of an exception group (task groups wrap what really went wrong)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def exit_reason(exit_code: int, stderr_tail: list[str]) -> str:
    """What a server's process ended with while starting (a code, or the signal that ended it)."""
    last_lines = [line for line in stderr_tail if line.strip()][-3:]
    stderr_hint = f"; its stderr ended with: {' | '.join(last_lines)}" if last_lines else ""
    if exit_code < 0:
        return f"the server was ended by signal {-exit_code} while starting{stderr_hint}"
    return f"the server exited with code {exit_code} while starting{stderr_hint or ' (no output on stderr)'}"


def describe_start_failure(
    config: Any,
    exc: BaseException,
    stderr_tail: list[str],
    http_error: tuple[int, str] | None = None,
    exit_code: int | None = None,
) -> str:
    """Why a server did not start, with what to check (never showing values from password inputs);
    ``exit_code``: what its process exited with, when it did."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED, PARSE_ERROR

    exc = root_cause(exc)
    url = config.display_url() if hasattr(config, "display_url") else config.url
    if http_error is not None:
        code, phrase = http_error
        hint = " (check the token or headers for it in mcp.json)" if code in (401, 403) else ""
        return f"{url} answered HTTP {code} {phrase}".rstrip() + hint
    last_lines = [line for line in stderr_tail if line.strip()][-3:]
    stderr_hint = f"; its stderr ended with: {' | '.join(last_lines)}" if last_lines else ""
    if config.type == "stdio" and isinstance(exc, FileNotFoundError):
        if shutil.which(config.command) is None:
            return f"command not found: {config.command!r} (check `command` in mcp.json and your PATH)"
        return f"cannot start {config.command!r}: {exc.strerror or exc}"
    if isinstance(exc, PermissionError):
        return f"cannot start {config.command!r}: permission denied"
    if isinstance(exc, NotADirectoryError) or (isinstance(exc, OSError) and config.type == "stdio"):
        return f"cannot start {config.command!r}: {exc}"
    if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
        if exit_code is not None and exit_code != 0:
            return exit_reason(exit_code, stderr_tail)
        return f"the server exited or closed the connection during initialize{stderr_hint}"
    if isinstance(exc, MCPError) and exc.code == PARSE_ERROR:  # what it said while starting could not be read
        return exc.message  # (the stderr tail would say it again)
    if isinstance(exc, MCPError):
        return f"the server answered initialize with an error: {exc.message} (code {exc.code}){stderr_hint}"
    if isinstance(exc, ValidationError):
        return f"the server sent a malformed answer while starting: {validation_problems(exc)}{stderr_hint}"
    name = type(exc).__name__
    if "Connect" in name or "connect" in str(exc).lower():
        return f"cannot connect to {url}: {type(exc).__name__} (is the server running?)"
    if "HTTPStatusError" in name:
        return f"{url} answered with an HTTP error ({type(exc).__name__})"
    said = without_url_secrets(str(exc), config.url) if config.url else str(exc)  # an error may quote the URL
    return f"{name}: {said}{stderr_hint}" if said else f"{name}{stderr_hint}"
