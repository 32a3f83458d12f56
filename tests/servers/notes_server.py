"""An MCP server (the SDK's MCPServer) with one tool that reads a file for real: ``read_file(path)``,
for the approval rules that speak about arguments. Each read is appended to ``--read-log``, so a
test sees which reads ran."""

from __future__ import annotations

import argparse
from pathlib import Path

from mcp.server.mcpserver import MCPServer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--read-log", required=True)
    args = parser.parse_args()
    server = MCPServer(name="notes", version="1.0", log_level="WARNING")

    @server.tool(structured_output=False)
    def read_file(path: str) -> str:
        """Read a text file."""
        with open(args.read_log, "a", encoding="utf-8") as log:
            log.write(path + "\n")
        return Path(path).expanduser().read_text(encoding="utf-8")

    server.run("stdio")


if __name__ == "__main__":
    main()
