"""An MCP server written with the SDK whose one resource is slow to read: ``wait://gate`` answers
only once the file named by ``--gate`` exists, so a test decides when the read ends (and whether
it fails: a gate file that says ``fail``)."""

import argparse
import asyncio
from pathlib import Path

from mcp.server.mcpserver import MCPServer


def build(gate: Path) -> MCPServer:
    server = MCPServer(name="slow-resource", version="1.0", log_level="WARNING")

    @server.resource("wait://gate", name="gate", description="Read once the gate file exists", mime_type="text/plain")
    async def gated() -> str:
        while not gate.exists():
            await asyncio.sleep(0.02)
        if gate.read_text() == "fail":
            raise ValueError("the gate says no")
        return "the gated contents"

    return server


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--gate", required=True)
    build(Path(parser.parse_args().gate)).run("stdio")
