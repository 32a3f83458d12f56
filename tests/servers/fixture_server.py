"""An MCP server for the hub's tests, written with the SDK; flags choose how it misbehaves.

Every flag is a fault or feature a test needs: crashing, hanging, noisy stdout,
huge results, slow tools, a changing tool list. ``--marker`` only tags the
process so tests can find it in the process table.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

from mcp.server.mcpserver import Context, MCPServer


def build(args: argparse.Namespace) -> MCPServer:
    server = MCPServer(name=f"fixture-{args.label}", version="1.0", log_level="WARNING")

    @server.tool(structured_output=False)
    def whoami() -> str:
        """Say which fixture server answered."""
        return args.label

    @server.tool(structured_output=False)
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool(structured_output=False)
    def crash() -> str:
        """Exit the server process at once, mid-call."""
        print("fixture: crashing on purpose", file=sys.stderr, flush=True)
        os._exit(7)

    @server.tool(structured_output=False)
    async def slow(seconds: float) -> str:
        """Sleep, then answer (saying on stderr that it started, for tests that act mid-call)."""
        print(f"fixture {args.label}: slow call started", file=sys.stderr, flush=True)
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool(structured_output=False)
    def big(size: int) -> str:
        """Return a string of `size` characters."""
        return "x" * size

    @server.tool(structured_output=False)
    def shout_to_stderr(text: str) -> str:
        """Write a line to stderr and answer."""
        print(f"stderr says: {text}", file=sys.stderr, flush=True)
        return "ok"

    @server.tool(structured_output=False)
    async def add_tool(name: str, ctx: Context) -> str:
        """Register a new tool and tell the client the list changed."""

        def extra() -> str:
            return f"I am {name}"

        server.add_tool(extra, name=name, description=f"added at run time: {name}")
        try:  # 2026-07-28 connections hear it through subscriptions/listen
            await ctx.notify_tools_changed()
        except Exception:  # noqa: BLE001
            pass
        try:  # earlier protocol versions hear the notification itself
            await ctx.session.send_tool_list_changed()
        except Exception:  # noqa: BLE001
            pass
        return f"added {name}"

    for index in range(args.extra_tools):
        server.add_tool(lambda index=index: str(index), name=f"extra_{index}", description=f"extra tool {index}")
    if args.long_tool_name:
        name = "long_" + "n" * (args.long_tool_name - 5)
        server.add_tool(lambda text="": f"long: {text}", name=name, description="a tool whose name is long")
    if args.say_ready:
        say_when_listed(server, args.label)
    return server


def say_when_listed(server: MCPServer, label: str) -> None:
    """Print ``fixture LABEL ready`` on stderr when the client lists the tools: the handshake is over."""
    list_tools = server.list_tools

    async def list_tools_and_say_so():
        tools = await list_tools()
        print(f"fixture {label} ready", file=sys.stderr, flush=True)
        return tools

    server.list_tools = list_tools_and_say_so


def serve_with_token(server: MCPServer, port: int, token: str) -> None:
    """Streamable HTTP behind a bearer-token check, to test that configured headers are sent."""
    import uvicorn
    from starlette.responses import PlainTextResponse

    app = server.streamable_http_app()

    async def guarded(scope, receive, send):
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await PlainTextResponse("missing or wrong bearer token", status_code=401)(scope, receive, send)
                return
        await app(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning", lifespan="on")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--label", default="A")
    parser.add_argument("--marker", default="")
    parser.add_argument("--startup-delay", type=float, default=0.0)
    parser.add_argument("--exit-during-init", action="store_true")
    parser.add_argument("--never-answer", action="store_true")
    parser.add_argument("--stdout-noise", action="store_true")
    parser.add_argument(
        "--say-ready", action="store_true", help="print 'fixture LABEL ready' once the tools are listed"
    )
    parser.add_argument("--extra-tools", type=int, default=0)
    parser.add_argument(
        "--long-tool-name", type=int, default=0, help="offer a tool whose name has this many characters"
    )
    parser.add_argument("--http", type=int, default=0)
    parser.add_argument(
        "--require-token", default="", help="with --http: answer 401 unless 'Authorization: Bearer TOKEN'"
    )
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    print(f"fixture {args.label} starting", file=sys.stderr, flush=True)
    if args.startup_delay:
        time.sleep(args.startup_delay)
    if args.exit_during_init:
        sys.stdin.readline()
        print("fixture: giving up during initialize", file=sys.stderr, flush=True)
        sys.exit(3)
    if args.never_answer:
        for _line in sys.stdin:
            pass
        return
    if args.stdout_noise:
        print("this line is not JSON-RPC", flush=True)
        print('{"neither": "is this"}', flush=True)
    server = build(args)
    if args.http and args.require_token:
        serve_with_token(server, args.http, args.require_token)
    elif args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
