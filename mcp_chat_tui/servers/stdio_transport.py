"""The stdio transport: the SDK's way of starting and stopping a server process, with the app's
own reader of its stdout.

The SDK's reader joins what it holds with each new chunk and splits the whole again, so a result
of N bytes costs about N²/64 KiB of work on the event loop (80 MB: three minutes). This one cuts
stdout into lines in one pass (``stdout_lines.py``) and hands each to the SDK's JSON-RPC parser,
as the SDK's does; what is read and written, and how the process is stopped, is the SDK's. What
it adds:

- a line longer than ``stdout_lines.MAX_LINE_BYTES`` (512 MiB) is dropped as it arrives, and a line that is
  not a message the SDK can read is handed on as the exception it raised (as the SDK does);
  when either is the answer to a request, that request fails now with a parse error naming what
  was wrong (the SDK's HTTP transports do the same for a body they cannot read);
- progress notifications read in one chunk keep only the latest of each request: progress is a
  state, and a server that writes 100,000 of them costs what it costs to draw a few.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TextIO, TypeAlias

import pydantic_core
from pydantic import ValidationError
from pydantic_core import InitErrorDetails

from mcp_chat_tui.servers.noise import MessageTooLong, noise_line, outline, unreadable_message
from mcp_chat_tui.servers.stdout_lines import MessageLines, OverlongLine

if TYPE_CHECKING:
    import mcp_types
    from mcp import StdioServerParameters
    from mcp.shared.message import SessionMessage

    from mcp_chat_tui.servers.sdk_private import (
        TransportStreams,
    )

log = logging.getLogger(__name__)

READ_BYTES = 1024 * 1024  # the most one read of stdout takes (the pipe holds less)
# Messages handed on ahead of the session (the SDK's reader hands on one at a time): a burst of
# small ones then costs one wake-up of the session each, not two (100,000 log messages: 6 s of CPU,
# 7-8 s without). What it holds stays small: the client's session never waits in its read loop (it
# has no inline methods), and a large message takes many reads to arrive, each letting it run.
READ_AHEAD = 64
WRITER_FLUSH_SECONDS = 0.5  # for messages already accepted, before stdin closes (the SDK's figure)

Item: TypeAlias = "SessionMessage | Exception"
MESSAGE_TITLE = "union[JSONRPCRequest,JSONRPCNotification,JSONRPCResponse,JSONRPCError]"  # as the SDK's errors say


def read_line(line: str | OverlongLine) -> list[Item]:
    """What one line of stdout is for the session: a message; or the exception that says why it is
    not one, followed by a parse error for the request it answered, when it is an answer."""
    from mcp.shared.message import SessionMessage
    from mcp_types import PARSE_ERROR, ErrorData, JSONRPCError

    if isinstance(line, OverlongLine):
        problem: Exception = MessageTooLong(line)
    else:
        try:
            return [SessionMessage(parse_message(line))]
        except ValueError as exc:  # pydantic's ValidationError, whatever the line holds
            log.debug("a line on a server's stdout is not a JSON-RPC message: %s", exc)
            problem = exc
    shape = outline(noise_line(problem))
    request_id = shape.answer_id if shape is not None else None
    if request_id is None:
        return [problem]
    error = ErrorData(code=PARSE_ERROR, message=unreadable_message(problem))
    return [problem, SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))]


def parse_message(line: str) -> mcp_types.JSONRPCMessage:
    """The SDK's JSON-RPC message for ``line``, or the SDK's error for it (pydantic's ValidationError).

    pydantic's JSON parser, then the SDK's validation of what it read: the same message, and the
    same error, as the SDK's ``validate_json``, in a quarter of the time for a large message (which
    holds the event loop while it is read: 200 MB took 3 s)."""
    import mcp_types

    adapter = mcp_types.jsonrpc_message_adapter
    try:
        data = pydantic_core.from_json(line, allow_inf_nan=True)
    except ValueError as exc:  # the error validate_json gives, without reading the line again
        error = InitErrorDetails(type="json_invalid", loc=(), input=line, ctx={"error": str(exc)})
        raise ValidationError.from_exception_data(MESSAGE_TITLE, [error]) from None
    return adapter.validate_python(data, by_name=False)


def latest_progress_only(items: list[Item]) -> list[Item]:
    """``items`` without the progress notifications that a later one of the same request replaces."""
    last: dict[object, int] = {}
    for index, item in enumerate(items):
        if (token := _progress_token(item)) is not None:
            last[token] = index
    if len(last) == sum(_progress_token(item) is not None for item in items):
        return items
    return [item for index, item in enumerate(items) if last.get(_progress_token(item), index) == index]


def _progress_token(item: Item) -> object:
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCNotification

    message = item.message if isinstance(item, SessionMessage) else None
    if isinstance(message, JSONRPCNotification) and message.method == "notifications/progress":
        token = (message.params or {}).get("progressToken")
        return token if isinstance(token, str | int) and not isinstance(token, bool) else None
    return None


@asynccontextmanager
async def stdio_streams(
    server: StdioServerParameters,
    errlog: TextIO,
    on_spawn: Callable[[Any], None],
    max_line_bytes: int | None = None,
) -> AsyncIterator[TransportStreams]:
    """Start the server as the SDK does (``on_spawn`` hears of its process at once) and exchange
    messages with it; on leaving, stop it as the SDK does (stdin closed, then SIGTERM, SIGKILL)."""
    import anyio.lowlevel
    from mcp.client import stdio as sdk_stdio

    from mcp_chat_tui.servers.sdk_private import executable_command, spawn_server

    command = await executable_command(server.command)
    process = await spawn_server(
        command=command,
        args=server.args,
        env=sdk_stdio.get_default_environment() | (server.env or {}),
        errlog=errlog,
        cwd=server.cwd,
    )
    on_spawn(process)
    # No await from the spawn until the task group holds the process: a cancellation in the gap
    # would leave it running.
    pipes = _Pipes(process, server.encoding_error_handler, max_line_bytes)
    async with anyio.create_task_group() as group:
        group.start_soon(pipes.read_stdout)
        group.start_soon(pipes.write_stdin)
        try:
            yield pipes.read_stream, pipes.write_stream
        finally:
            pipes.shutting_down = True
            with anyio.CancelScope(shield=True):  # every wait in it is bounded
                await pipes.shut_down()
            group.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()


class _Pipes:
    """The server's stdin and stdout, and the session's streams they feed and drain."""

    def __init__(self, process: Any, encoding_errors: str, max_line_bytes: int | None) -> None:
        import anyio.lowlevel
        from mcp.shared.message import SessionMessage

        self.process = process
        self.encoding_errors = encoding_errors
        self.lines = MessageLines(max_line_bytes)
        self.read_writer, self.read_stream = anyio.create_memory_object_stream[Item](READ_AHEAD)
        self.write_stream, self.write_reader = anyio.create_memory_object_stream[SessionMessage](0)
        self.writer_done = anyio.Event()
        self.shutting_down = False

    async def read_stdout(self) -> None:
        import anyio.lowlevel

        from mcp_chat_tui.servers.sdk_private import drain_stdout

        try:
            async with self.read_writer:
                try:
                    await self._deliver()
                finally:
                    await drain_stdout(self.process)
        except anyio.ClosedResourceError:
            pass  # the shutdown closed stdout under the read
        except (anyio.BrokenResourceError, ConnectionError):
            if not self.shutting_down:
                log.exception("reading a server's stdout failed mid-session")

    async def _deliver(self) -> None:
        """Read stdout to its end, handing each message on; returns early when the session is gone
        or the transport is closing (what comes then is drained unread)."""
        import anyio.lowlevel

        while True:
            try:
                chunk = await self.process.stdout.receive(READ_BYTES)
            except anyio.EndOfStream:
                return
            if self.shutting_down or not await self._hand_on(chunk):
                return

    async def _hand_on(self, chunk: bytes) -> bool:
        """Hand on the messages that ``chunk`` ends; False when the session is gone. A function of
        its own so that nothing of them stays bound while the reader waits for the next chunk (the
        last message, a result of 80 MB, was kept until the server wrote again)."""
        import anyio.lowlevel

        items = [item for line in self.lines.feed(chunk) for item in read_line(line)]
        for item in latest_progress_only(items):
            try:
                try:
                    self.read_writer.send_nowait(item)
                except anyio.WouldBlock:
                    await self.read_writer.send(item)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return False
        return True

    async def write_stdin(self) -> None:
        import anyio.lowlevel

        try:
            async with self.write_reader:
                async for session_message in self.write_reader:
                    text = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await self.process.stdin.send((text + "\n").encode("utf-8", self.encoding_errors))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await self.read_writer.aclose()  # the session sees the connection end, not a request that never returns
        finally:
            self.writer_done.set()

    async def shut_down(self) -> None:
        import anyio.lowlevel

        from mcp_chat_tui.servers.sdk_private import stop_server

        self.read_stream.close()  # the reader drains stdout, so a server blocked writing can read its stdin
        self.write_stream.close()
        with anyio.move_on_after(WRITER_FLUSH_SECONDS):
            await self.writer_done.wait()
        await stop_server(self.process)
        for stream in (self.read_stream, self.write_stream, self.read_writer, self.write_reader):
            await stream.aclose()
        await anyio.lowlevel.checkpoint()
