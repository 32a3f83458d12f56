"""An SDK server for the progress benchmark: ``tick`` reports progress ``count`` times, each message
holding the wall-clock time (``time.time_ns()``) it was sent at, ``--gap`` seconds apart."""

from __future__ import annotations

import asyncio
import sys
import time

from mcp.server.mcpserver import Context, MCPServer

GAP = float(sys.argv[sys.argv.index("--gap") + 1]) if "--gap" in sys.argv else 0.1
server = MCPServer(name="progress-bench", log_level="WARNING")


@server.tool(structured_output=False)
async def tick(count: int, ctx: Context) -> str:
    """Report progress ``count`` times, each message the time it left."""
    for step in range(1, count + 1):
        await ctx.report_progress(step, count, f"sent {time.time_ns()}")
        await asyncio.sleep(GAP)
    return f"ticked {count}"


if __name__ == "__main__":
    server.run("stdio")
