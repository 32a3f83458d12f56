"""An MCP server written with the SDK that sends a lot: a result of many megabytes, a stream of
progress or log notifications, progress that goes on past the client's timeout; with
``--no-result-type`` its results leave out ``resultType``.

``burst`` writes its notifications to stdout itself, as fast as a server in a faster language
would (the SDK's own server spends about 0.15 ms on each), then answers through the SDK.
``trickle`` writes its answer itself, a piece at a time over some seconds (the SDK's own answer
that follows is for a request already answered: the client drops it).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.stdio import _claims as stdio_claims


async def without_result_type(ctx, call_next):
    """With ``--no-result-type``: results leave out ``resultType``, as a server written against an
    earlier version of the spec sends them (the client adds it: another message than the one read)."""
    result = await call_next(ctx)
    return {key: value for key, value in result.items() if key != "resultType"} if isinstance(result, dict) else result


server = MCPServer(
    name="flood",
    version="1.0",
    log_level="WARNING",
    middleware=[without_result_type] if "--no-result-type" in sys.argv else None,
)
PATTERN = "0123456789abcdef"


@server.tool(structured_output=False)
async def big(megabytes: float, ctx: Context, progress_first: bool = False) -> str:
    """A text of `megabytes` million characters (ASCII, one line), after a progress notification
    when `progress_first` (over streamable HTTP the answer then comes as an event stream)."""
    if progress_first:
        await ctx.report_progress(0, 1, "starting")
    size = int(megabytes * 1_000_000)
    return (PATTERN * (size // len(PATTERN) + 1))[:size]


@server.tool(structured_output=False)
async def ticks(count: int, ctx: Context) -> str:
    """Report progress `count` times, as fast as the server can write, then answer."""
    for step in range(1, count + 1):
        await ctx.report_progress(step, count, f"tick {step}")
    return f"ticked {count}"


@server.tool(structured_output=False)
async def logs(count: int, ctx: Context, level: str = "warning") -> str:
    """Send `count` log messages at `level`, as fast as the server can write, then answer."""
    for index in range(1, count + 1):
        await ctx.log(level, f"log {index}", logger_name="flood")  # type: ignore[arg-type]
    return f"logged {count}"


def write_all(data: bytes) -> None:
    """Write to the wire: the SDK moved it off fd 1 (which it points at stderr) to a descriptor of its own."""
    claim = stdio_claims.get(1)
    wire = claim.private_fd if claim is not None and claim.private_fd is not None else sys.stdout.fileno()
    view = memoryview(data)
    while view:
        view = view[os.write(wire, view) :]


@server.tool(structured_output=False)
async def burst(count: int, ctx: Context, kind: str = "progress") -> str:
    """Write `count` progress (or log) notifications to stdout at once, then answer."""
    token = (ctx.request_context.meta or {}).get("progress_token")
    lines = []
    for step in range(1, count + 1):
        if kind == "progress":
            params = {"progressToken": token, "progress": step, "total": count, "message": f"tick {step}"}
            lines.append({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
        else:
            params = {"level": "warning", "logger": "flood", "data": f"log {step}"}
            lines.append({"jsonrpc": "2.0", "method": "notifications/message", "params": params})
    await asyncio.sleep(0.2)  # what the SDK was writing is out; the write below holds the loop, so nothing starts
    write_all("".join(json.dumps(line) + "\n" for line in lines).encode())
    return f"sent {count} {kind} notifications"


@server.tool(structured_output=False)
async def trickle(megabytes: float, seconds: float, ctx: Context) -> str:
    """Answer with a text of `megabytes` million characters, written over `seconds` seconds; the
    bytes written so far are in ``trickled.txt`` in the working folder."""
    size = int(megabytes * 1_000_000)
    text = (PATTERN * (size // len(PATTERN) + 1))[:size]
    result = {"content": [{"type": "text", "text": text}], "isError": False, "resultType": "complete"}
    line = json.dumps({"jsonrpc": "2.0", "id": ctx.request_context.request_id, "result": result}) + "\n"
    data, pieces = line.encode(), max(1, int(seconds * 20))
    await asyncio.sleep(0.2)  # what the SDK was writing is out (see burst)
    for index in range(pieces):
        end = len(data) * (index + 1) // pieces
        write_all(data[len(data) * index // pieces : end])
        Path("trickled.txt").write_text(str(end))
        await asyncio.sleep(seconds / pieces)
    return "answered already"


@server.tool(structured_output=False)
async def keep_busy(seconds: float, every: float, ctx: Context, by: str = "progress") -> str:
    """Work for `seconds`, saying so every `every` seconds: by progress, or by log messages."""
    loop = asyncio.get_running_loop()
    ends = loop.time() + seconds
    step = 0
    while loop.time() < ends:
        step += 1
        if by == "progress":
            await ctx.report_progress(step, None, f"still working ({step})")
        else:
            await ctx.log("warning", f"still working ({step})", logger_name="flood")
        await asyncio.sleep(every)
    return f"worked {seconds:g} s"


if __name__ == "__main__":
    if "--http" in sys.argv:  # --http PORT: streamable HTTP on 127.0.0.1:PORT (burst and trickle are stdio only)
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[sys.argv.index("--http") + 1]))
    elif "--sse" in sys.argv:  # --sse PORT: the 2024-11-05 SSE transport on 127.0.0.1:PORT
        server.run("sse", host="127.0.0.1", port=int(sys.argv[sys.argv.index("--sse") + 1]))
    else:
        server.run("stdio")
