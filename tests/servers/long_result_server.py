"""An MCP server whose tool answers with a result far longer than a small model's context: a log
of numbered lines, read from ``offset`` (its own paging). Written with the SDK's MCPServer."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="long-result", version="1.0", log_level="WARNING")


@server.tool(structured_output=False)
def read_log(lines: int = 2000, offset: int = 0) -> str:
    """Read `lines` lines of the build log, starting after line `offset`."""
    first = offset + 1
    return "\n".join(f"line {n}: compiled module_{n}.py without warnings" for n in range(first, first + lines))


if __name__ == "__main__":
    server.run()
