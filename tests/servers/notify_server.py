"""An MCP server written with the SDK that talks back while it works: progress, log messages,
instructions, roots, and a tool list that grows.

``--legacy`` makes it speak only the 2025-11-25 protocol (it answers ``server/discover`` with
"method not found", so the client falls back to ``initialize``); without it the SDK client
negotiates 2026-07-28. ``--instructions TEXT`` sets its instructions.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Annotated

import anyio
import mcp_types
from mcp.server.mcpserver import Context, ListRoots, MCPServer, Resolve
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


async def roots_of_client() -> ListRoots:
    """Ask the client for its roots (a request mid-call, or an input request on 2026-07-28)."""
    return ListRoots()


def build(args: argparse.Namespace) -> MCPServer:
    server = MCPServer(name="notify", version="1.0", instructions=args.instructions or None, log_level="WARNING")
    state = {"level": "debug", "roots_changed": 0}

    async def log(ctx: Context, level: str, text: str) -> None:
        """Send a log message; a 2025-11-25 server keeps to the level the client set."""
        if ctx.protocol_version not in ("2026-07-28",) and LEVELS.index(level) < LEVELS.index(state["level"]):
            return
        await ctx.log(level, text, logger_name="notify.work")  # type: ignore[arg-type]

    @server.tool(structured_output=False)
    async def count(steps: int, ctx: Context) -> str:
        """Count to `steps`, reporting progress and logging each step."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
            await log(ctx, "info", f"counted {step}")
        await log(ctx, "warning", "counting is done")
        return f"counted to {steps}"

    @server.tool(structured_output=False)
    async def count_without_total(steps: int, ctx: Context) -> str:
        """Report progress with no total."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, None, f"item {step}")
        return f"saw {steps} items"

    @server.tool(structured_output=False)
    async def wait_for_file(path: str, ctx: Context) -> str:
        """Report progress 1/3 "waiting", then wait until the file at `path` exists."""
        await ctx.report_progress(1, 3, "waiting for the file")
        while not Path(path).exists():
            await asyncio.sleep(0.02)
        await ctx.report_progress(3, 3, "found it")
        return "the file is there"

    @server.tool(structured_output=False)
    async def flood(messages: int, ctx: Context) -> str:
        """Send `messages` log messages."""
        for index in range(messages):
            await log(ctx, "warning" if index % 2 else "info", f"flood {index} " + "x" * 100)
        return f"sent {messages}"

    @server.tool(structured_output=False)
    async def list_roots(roots: Annotated[mcp_types.ListRootsResult, Resolve(roots_of_client)]) -> str:
        """The client's roots, one URI a line."""
        return "\n".join(str(root.uri) for root in roots.roots)

    @server.tool(structured_output=False)
    def roots_changes() -> str:
        """How many roots/list_changed notifications came."""
        return str(state["roots_changed"])

    @server.tool(structured_output=False)
    def log_level() -> str:
        """The level the client set with logging/setLevel."""
        return state["level"]

    @server.tool(structured_output=False)
    async def add_tool(name: str, ctx: Context) -> str:
        """Register a new tool and tell the client the list changed."""

        def extra() -> str:
            return f"I am {name}"

        server.add_tool(extra, name=name, description=f"added at run time: {name}")
        if ctx.protocol_version == "2026-07-28":
            await ctx.notify_tools_changed()
        else:
            await ctx.session.send_tool_list_changed()
        return f"added {name}"

    async def set_level(_ctx, params: mcp_types.SetLevelRequestParams) -> mcp_types.EmptyResult:
        state["level"] = params.level
        return mcp_types.EmptyResult()

    async def roots_list_changed(_ctx, _params) -> None:
        state["roots_changed"] += 1

    lowlevel = server._lowlevel_server
    lowlevel.add_request_handler("logging/setLevel", mcp_types.SetLevelRequestParams, set_level)
    lowlevel.add_notification_handler(
        "notifications/roots/list_changed", mcp_types.NotificationParams, roots_list_changed
    )
    return server


async def serve_legacy_only(server: MCPServer) -> None:
    """stdio, answering ``server/discover`` with "method not found" before the server sees it."""
    async with stdio_server() as (read_stream, write_stream):
        await serve_legacy_on(server, read_stream, write_stream)


async def serve_legacy_on(server: MCPServer, read_stream, write_stream) -> None:
    """The 2025-11-25-only server on a pair of streams (stdio's, or the tests' in-memory ones)."""
    lowlevel = server._lowlevel_server
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](100)

    async def without_discover() -> None:
        async with send:
            async for item in read_stream:
                message = getattr(item, "message", None)
                if isinstance(message, mcp_types.JSONRPCRequest) and message.method == "server/discover":
                    error = mcp_types.ErrorData(code=mcp_types.METHOD_NOT_FOUND, message="Method not found")
                    await write_stream.send(
                        SessionMessage(mcp_types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error))
                    )
                    continue
                await send.send(item)

    async with anyio.create_task_group() as group:
        group.start_soon(without_discover)
        await lowlevel.run(receive, write_stream, lowlevel.create_initialization_options())
        group.cancel_scope.cancel()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--legacy", action="store_true")
    parser.add_argument("--instructions", default="")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    server = build(args)
    if args.legacy:
        anyio.run(serve_legacy_only, server)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
