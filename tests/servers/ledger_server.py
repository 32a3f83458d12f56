"""An MCP server (the SDK's MCPServer) whose one tool has an effect a test can count, and can be
held mid-call: ``append`` adds a line to a file, then waits until a gate file exists; ``read``
returns a file as the call finds it on disk.

A test holds the call open (no gate yet) to kill the app or press Esc while it runs; when the
client cancels the call (``notifications/cancelled``) the tool writes ``PATH.cancelled``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="ledger", version="1.0", log_level="WARNING")


@server.tool(structured_output=False)
async def append(path: str, line: str, gate: str = "") -> str:
    """Append a line to a file, then wait until the gate file exists (if one is given)."""
    with open(path, "a", encoding="utf-8") as file:
        file.write(line + "\n")
    try:
        while gate and not Path(gate).exists():
            await asyncio.sleep(0.02)  # the test opens the gate when it wants the call to finish
    except asyncio.CancelledError:
        Path(path + ".cancelled").write_text("cancelled by the client\n", encoding="utf-8")
        raise
    return f"appended {line!r}"


@server.tool(structured_output=False)
def read(path: str) -> str:
    """Return a file's text as it is on disk when the call arrives."""
    return Path(path).read_text(encoding="utf-8") if Path(path).exists() else "(no file)"


if __name__ == "__main__":
    if len(sys.argv) > 1:
        print(f"ledger server {sys.argv[1]}", file=sys.stderr, flush=True)  # a marker for the process table
    server.run("stdio")
