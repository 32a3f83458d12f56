"""An MCP server whose tool asks the client's model for a reply with its own settings, through the
SDK's ``ctx.session.create_message`` (temperature, maxTokens, stopSequences), and answers with what
came back as JSON. Written with the SDK's MCPServer; it speaks only the 2025-11-25 handshake, where a
server sends its sampling request to the client as a JSON-RPC request.
"""

from __future__ import annotations

import json
import warnings

import anyio
import mcp_types as t
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer(name="sampler", version="1.0", log_level="WARNING")


@server.tool(structured_output=False)
async def ask_model(
    prompt: str, ctx: Context, max_tokens: int = 5, temperature: float = 0.0, stop: list[str] | None = None
) -> str:
    """Ask the client's model to answer ``prompt`` with these settings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sampling is deprecated as of 2026-07-28; this server speaks 2025-11-25
        result = await ctx.session.create_message(
            [t.SamplingMessage(role="user", content=t.TextContent(text=prompt))],
            max_tokens=max_tokens,
            temperature=temperature,
            stop_sequences=stop,
        )
    return json.dumps(result.model_dump(by_alias=True, mode="json", exclude_none=True), sort_keys=True)


@server.tool(structured_output=False)
async def ask_model_or_say_why(prompt: str, ctx: Context) -> str:
    """Ask the client's model to answer ``prompt``; when the client refuses, say why (the tool ends well)."""
    try:
        return await ask_model(prompt, ctx)
    except Exception as exc:  # noqa: BLE001 - the refusal is this tool's answer
        return f"no sample: {exc}"


async def serve() -> None:
    """Only the 2025-11-25 handshake (no server/discover), on stdio."""
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    low = server._lowlevel_server
    async with stdio_server() as (read, write):
        async with low.lifespan(low) as state:
            await serve_loop(low, read, write, lifespan_state=state, init_options=low.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve)
