"""An MCP server, written with the SDK's MCPServer, whose ``register`` tool asks the user a one-field
form during its call and answers with what came back, as JSON. On 2026-07-28 the form is embedded
in an ``InputRequiredResult``; with ``--legacy`` (a process speaking only the 2025-11-25
handshake) it is a request to the client, and ``--impatient S`` gives up on it after S seconds (the
server's SDK then tells the client it took the request back)."""

from __future__ import annotations

import json
import sys
from typing import Any

import mcp_types as t
from mcp.server.mcpserver import Context, MCPServer
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

FORM = t.ElicitRequest(
    params=t.ElicitRequestFormParams(
        message="Who should be registered? This message stays in view while you type.",
        requested_schema={
            "type": "object",
            "properties": {"name": {"type": "string", "title": "Your name", "minLength": 2}},
            "required": ["name"],
        },
    )
)


def build(impatient: float | None = None) -> MCPServer:
    server = MCPServer(name="forms", version="1.0", log_level="WARNING")

    @server.tool(structured_output=False)
    async def register(ctx: Context) -> Any:
        """Register someone: asks their name in a form."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            responses = ctx.input_responses or {}
            if "form" not in responses:
                return t.InputRequiredResult(input_requests={"form": FORM})
            answer = responses["form"]
        else:
            try:
                answer = await ctx.session.send_request(FORM, t.ElicitResult, request_read_timeout_seconds=impatient)
            except Exception as exc:  # noqa: BLE001 - the server gave up waiting: its call says so
                return f"gave up waiting for the form: {exc}"
        return json.dumps(answer.model_dump(by_alias=True, mode="json", exclude_none=True), sort_keys=True)

    return server


async def serve_legacy(server: MCPServer) -> None:
    """Only the 2025-11-25 handshake (no server/discover), on stdio."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await serve_legacy_on(server, read, write)


async def serve_legacy_on(server: MCPServer, read: Any, write: Any) -> None:
    """Only the 2025-11-25 handshake on a pair of streams (stdio's, or the tests' in-memory ones)."""
    from mcp.server.runner import serve_loop

    low = server._lowlevel_server
    async with low.lifespan(low) as state:
        await serve_loop(low, read, write, lifespan_state=state, init_options=low.create_initialization_options())


if __name__ == "__main__":
    impatient = float(sys.argv[sys.argv.index("--impatient") + 1]) if "--impatient" in sys.argv else None
    if "--legacy" in sys.argv:
        import anyio

        anyio.run(serve_legacy, build(impatient))
    else:
        build(impatient).run()
