"""An MCP server that gives away the token it was started with, everywhere it can.

It gets the token in ``$SECRET_TOKEN`` and as ``--token``, and echoes it back: in its
instructions and a tool's description, in tool results (text and structured), in a tool
error, and on stderr (at start and on every call). ``--fail-at-start`` writes the token to
stderr and exits before answering ``initialize``. Tests check none of it gets through.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError


def build(token: str) -> MCPServer:
    server = MCPServer(
        name="secret-echo", version="1.0", log_level="WARNING", instructions=f"Connected with token {token}."
    )

    @server.tool(structured_output=False)
    def reveal() -> str:
        """Say which token the server was started with."""
        print(f"reveal called; token is {token}", file=sys.stderr, flush=True)
        return f"env token: {os.environ.get('SECRET_TOKEN', '')}; argument token: {token}"

    @server.tool(structured_output=True)
    def reveal_structured() -> dict[str, Any]:
        """The token as structured content."""
        return {"token": token, "nested": [{"again": f"Bearer {token}"}]}

    @server.tool(structured_output=False)
    def fail_with_token() -> str:
        """Fail with an error message that holds the token."""
        raise ToolError(f"token {token} was refused")  # a ToolError's message reaches the client

    @server.tool(structured_output=False)
    def refuse_with_token() -> str:
        """Answer with a protocol error (not a tool error) whose message holds the token."""
        raise MCPError(-32603, f"session for {token} expired")

    @server.tool(structured_output=False)
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    def status() -> str:
        return "ok"

    server.add_tool(status, name="status", description=f"Status of the connection made with {token}.")
    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--token", required=True)
    parser.add_argument("--fail-at-start", action="store_true")
    args = parser.parse_args()
    print(f"secret-echo starting with token {args.token}", file=sys.stderr, flush=True)
    if args.fail_at_start:
        print(f"cannot log in with {os.environ.get('SECRET_TOKEN', '')}", file=sys.stderr, flush=True)
        sys.exit(3)
    build(args.token).run()


if __name__ == "__main__":
    main()
