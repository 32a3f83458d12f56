"""An MCP server, written with the SDK's MCPServer, whose ``register`` tool asks the user a one-field
form during its call and answers with what came back, as JSON. On 2026-07-28 the form is embedded
in an ``InputRequiredResult``; with ``--legacy`` (a process speaking only the 2025-11-25
handshake) it is a request to the client, and ``--impatient PATH`` gives up on it once a file is at
PATH (the test says when, having typed into the form; the server's SDK then tells the client it
took the request back)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
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


async def ask_until(ctx: Context, give_up_when: Path) -> t.ElicitResult | None:
    """The form's answer, or None: the server took its request back once ``give_up_when`` appeared."""
    answer: t.ElicitResult | None = None
    async with anyio.create_task_group() as tasks:

        async def ask() -> None:
            nonlocal answer
            answer = await ctx.session.send_request(FORM, t.ElicitResult)
            tasks.cancel_scope.cancel()

        tasks.start_soon(ask)
        while not give_up_when.exists():
            await anyio.sleep(0.02)
        tasks.cancel_scope.cancel()  # abandoning the request: the SDK sends notifications/cancelled
    return answer


def build(impatient: Path | None = None) -> MCPServer:
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
            if impatient is None:
                answer = await ctx.session.send_request(FORM, t.ElicitResult)
            else:
                taken = await ask_until(ctx, impatient)
                if taken is None:  # the server gave up waiting: its call says so
                    return "gave up waiting for the form: taken back"
                answer = taken
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
    impatient = Path(sys.argv[sys.argv.index("--impatient") + 1]) if "--impatient" in sys.argv else None
    if "--legacy" in sys.argv:
        import anyio

        anyio.run(serve_legacy, build(impatient))
    else:
        build(impatient).run()
