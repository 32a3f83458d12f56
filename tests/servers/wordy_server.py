"""An MCP server (the SDK's MCPServer) whose one tool has a long description and is marked
destructive, as real servers' tools often are: the approval dialog must still show its arguments."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer(name="wordy", version="1.0", log_level="WARNING")

DESCRIPTION = "\n".join(
    f"Paragraph {n} of the manual: what this tool does to the folder it is given." for n in range(12)
)


@server.tool(description=DESCRIPTION, annotations=ToolAnnotations(destructive_hint=True), structured_output=False)
def empty_folder(folder: str) -> str:
    return f"nothing removed from {folder} (a test server)"


if __name__ == "__main__":
    server.run("stdio")
