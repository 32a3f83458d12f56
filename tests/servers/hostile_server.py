"""An MCP server that lies, written with the SDK: it sends what a client should refuse or clean.

The SDK's own server checks every result it sends, so the lies are told by a middleware
that edits the ``tools/list`` result after that check, as a server in another language
could send it. Flags choose the lie.
"""

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

# The SDK is imported in build(): what a server writes first must come before its slow import. (No
# `from __future__ import annotations`: the SDK reads the tools' annotations, Context among them.)
if TYPE_CHECKING:
    from mcp.server.mcpserver import Context, MCPServer

# Tools the SDK's client refuses as a whole result: each is (raw tool, what is wrong with it).
BAD_TOOLS: list[dict[str, Any]] = [
    {"name": "string_schema", "description": "input schema of type string", "inputSchema": {"type": "string"}},
    {"name": "list_schema", "description": "input schema that is a list", "inputSchema": ["not", "an", "object"]},
    {"description": "a tool without a name", "inputSchema": {"type": "object"}},
    {"name": "[bold]no_schema[/]", "description": "no inputSchema at all"},
]

# Names a model API refuses; the tools themselves are valid MCP.
ODD_NAMES = [
    "[bold]x[/]",
    "my tool",
    "my.tool",
    "héllo",
    "t" * 70,
    "!!!",
    "my_tool",
    "\x1b[2J\x1b[31mred",
]

LISTINGS_SERVED = [0]  # tools/list readings from the first page answered so far

MARKUP_DESCRIPTION = "[red]red[/red] \x1b[31mansi\x1b[0m [link=http://evil]click[/link]"


def lying_tools(extra: list[dict[str, Any]], page_size: int, envelope: dict[str, Any] | None = None):
    """A middleware that adds ``extra`` raw tools after the real ones in every ``tools/list``
    result, and serves the list in pages of ``page_size`` (0: one page), with ``envelope``'s keys beside them."""

    async def middleware(ctx, call_next):
        result = await call_next(ctx)
        if ctx.method != "tools/list" or not isinstance(result, dict):
            return result
        if not (ctx.params or {}).get("cursor"):
            LISTINGS_SERVED[0] += 1
        tools = [*result.get("tools", []), *extra]
        result = {key: value for key, value in result.items() if key not in ("tools", "nextCursor")} | (envelope or {})
        if not page_size:
            return {**result, "tools": tools}
        start = int((ctx.params or {}).get("cursor") or 0)
        end = start + page_size
        more = {"nextCursor": str(end)} if end < len(tools) else {}
        return {**result, "tools": tools[start:end], **more}

    return middleware


async def _tell_tools_changed(ctx: "Context") -> None:
    try:  # 2026-07-28 connections hear it through subscriptions/listen
        await ctx.notify_tools_changed()
    except Exception:  # noqa: BLE001
        pass
    try:  # earlier protocol versions hear the notification itself
        await ctx.session.send_tool_list_changed()
    except Exception:  # noqa: BLE001
        pass


def build(args: argparse.Namespace) -> "MCPServer":
    from mcp.server.mcpserver import Context, MCPServer

    extra: list[dict[str, Any]] = list(BAD_TOOLS) if args.bad_tools else []
    server = MCPServer(
        name="hostile",
        version="1.0",
        log_level="WARNING",
        middleware=[lying_tools(extra, args.page_size, {"ttlMs": args.ttl_ms} if args.ttl_ms is not None else None)],
    )

    @server.tool(structured_output=False)
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool(structured_output=False, description=MARKUP_DESCRIPTION if args.markup else "Which tool answered.")
    def whoami() -> str:
        return "hostile"

    @server.tool(structured_output=False)
    async def flood_changes(count: int, ctx: Context) -> str:
        """Send `count` tool-list-changed notifications at once."""
        for _ in range(count):
            await _tell_tools_changed(ctx)
        return f"sent {count}"

    @server.tool(structured_output=False)
    def listings_served() -> str:
        """How many times this server has been asked for its tool list (its first page)."""
        return str(LISTINGS_SERVED[0])

    @server.tool(structured_output=False)
    async def grow(name: str, ctx: Context) -> str:
        """Register a new tool and tell the client the list changed."""
        server.add_tool(lambda: f"I am {name}", name=name, description=f"added at run time: {name}")
        await _tell_tools_changed(ctx)
        return f"added {name}"

    if args.odd_names:
        for name in ODD_NAMES:
            server.add_tool(lambda name=name: f"I am {name}", name=name, description=f"odd name {name!r}")
    for index in range(args.extra_tools):
        server.add_tool(lambda index=index: str(index), name=f"extra_{index}", description=f"extra tool {index}")
    return server


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bad-tools", action="store_true")
    parser.add_argument("--odd-names", action="store_true")
    parser.add_argument("--markup", action="store_true", help="markup and escape sequences in a description")
    parser.add_argument("--extra-tools", type=int, default=0)
    parser.add_argument("--page-size", type=int, default=0, help="serve tools/list in pages of this many tools")
    parser.add_argument("--ttl-ms", type=int, default=None, help="a ttlMs in every tools/list result (a cache hint)")
    parser.add_argument("--banner", default="", help="write this to stdout before serving")
    parser.add_argument("--garbage", action="store_true", help="write bytes that are not UTF-8 to stdout first")
    parser.add_argument("--then-hang", action="store_true", help="after the banner or garbage, never answer")
    parser.add_argument("--marker", default="")
    parser.add_argument("--http", type=int, default=0, help="serve streamable HTTP on 127.0.0.1:PORT")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    if args.garbage:
        os.write(1, b"\x89PNG\r\n\x1a\n\x00\xff\xfe binary\n")
    if args.banner:
        sys.stdout.write(args.banner.encode().decode("unicode_escape"))
        sys.stdout.flush()
    if args.then_hang:
        for _line in sys.stdin:
            pass
        return
    if args.http:
        build(args).run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        build(args).run("stdio")


if __name__ == "__main__":
    main()
