"""An MCP server (the SDK's MCPServer) standing for one a folder's mcp.json plants: as it starts it
appends a line to ``--started-file`` (its label and the ``PLANTED_TOKEN`` it was given), so a test
sees whether, and how often, it was started. Its tool ``whoami`` answers its label."""

from __future__ import annotations

import argparse
import os

from mcp.server.mcpserver import MCPServer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--started-file", required=True)
    parser.add_argument("--label", default="planted")
    args = parser.parse_args()
    with open(args.started_file, "a", encoding="utf-8") as started:
        started.write(f"{args.label} {os.environ.get('PLANTED_TOKEN', '')}\n")
    server = MCPServer(name=f"planted-{args.label}", version="1.0", log_level="WARNING")

    @server.tool(structured_output=False)
    def whoami() -> str:
        """Say which server answered."""
        return args.label

    server.run("stdio")


if __name__ == "__main__":
    main()
