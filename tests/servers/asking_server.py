"""An MCP server whose tools ask the client: a sample of its model (with and without tools) and the
user's answers (a form, a URL). Written with the SDK's MCPServer; it speaks 2026-07-28 (the requests
embedded in an ``InputRequiredResult``) or, with ``--legacy``, only the 2025-11-25 handshake (the
requests sent to the client as JSON-RPC requests). Each tool answers with what came back, as JSON.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import mcp_types as t
from mcp.server.mcpserver import Context, MCPServer
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

server = MCPServer(name="asking", version="1.0", log_level="WARNING")

SIGN_UP_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "minLength": 2, "maxLength": 20},
        "email": {"type": "string", "format": "email", "description": "where we write"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "plan": {
            "type": "string",
            "oneOf": [{"const": "free", "title": "Free"}, {"const": "pro", "title": "Pro"}],
            "default": "free",
        },
        "newsletter": {"type": "boolean", "default": False},
        "api_token": {"type": "string", "description": "kept secret"},
    },
    "required": ["name", "email"],
}
LOOKUP_TOOL = t.Tool(
    name="lookup",
    description="Look a word up in the server's dictionary.",
    input_schema={"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]},
)


def modern(ctx: Context) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


async def ask(ctx: Context, request: Any, result_type: type) -> Any:
    """The client's answer to ``request``; on 2026-07-28 an ``InputRequiredResult`` the first time."""
    if modern(ctx):
        responses = ctx.input_responses or {}
        if "ask" not in responses:
            return t.InputRequiredResult(input_requests={"ask": request})
        return responses["ask"]
    return await ctx.session.send_request(request, result_type)


def described(result: Any) -> str:
    if isinstance(result, t.InputRequiredResult):
        return result  # type: ignore[return-value]
    return json.dumps(result.model_dump(by_alias=True, mode="json", exclude_none=True), sort_keys=True)


@server.tool(structured_output=False)
async def summarize(text: str, ctx: Context) -> Any:
    """Ask the client's model to summarize a text."""
    request = t.CreateMessageRequest(
        params=t.CreateMessageRequestParams(
            messages=[t.SamplingMessage(role="user", content=t.TextContent(text=f"Summarize: {text}"))],
            system_prompt="You summarize in one line.",
            max_tokens=40,
        )
    )
    return described(await ask(ctx, request, t.CreateMessageResult))


@server.tool(structured_output=False)
async def define(word: str, ctx: Context) -> Any:
    """Ask the client's model, which may call the server's lookup tool."""
    request = t.CreateMessageRequest(
        params=t.CreateMessageRequestParams(
            messages=[t.SamplingMessage(role="user", content=t.TextContent(text=f"Define {word}"))],
            max_tokens=60,
            tools=[LOOKUP_TOOL],
        )
    )
    return described(await ask(ctx, request, t.CreateMessageResultWithTools))


@server.tool(structured_output=False)
async def sign_up(ctx: Context) -> Any:
    """Ask the user for sign-up details in a form."""
    request = t.ElicitRequest(
        params=t.ElicitRequestFormParams(message="Sign up for the newsletter", requested_schema=SIGN_UP_SCHEMA)
    )
    return described(await ask(ctx, request, t.ElicitResult))


@server.tool(structured_output=False)
async def open_page(ctx: Context) -> Any:
    """Ask the user to open a page; on 2025-11-25 say it is complete once they accept."""
    params = t.ElicitRequestURLParams(
        message="Sign in at the bank", url="https://bank.example/authorize?state=xyz", elicitation_id="e-1"
    )
    if modern(ctx):
        params = params.model_copy(update={"elicitation_id": None})
    answer = await ask(ctx, t.ElicitRequest(params=params), t.ElicitResult)
    if not modern(ctx) and getattr(answer, "action", "") == "accept":
        await ctx.session.send_elicit_complete("e-1")
    return described(answer)


@server.tool(structured_output=False)
async def open_url(url: str, ctx: Context) -> Any:
    """Ask the user to open the page at ``url``, whatever it is (a hostile server's choice)."""
    params = t.ElicitRequestURLParams(message="Open this page", url=url, elicitation_id="e-2")
    if modern(ctx):
        params = params.model_copy(update={"elicitation_id": None})
    return described(await ask(ctx, t.ElicitRequest(params=params), t.ElicitResult))


async def serve_legacy() -> None:
    """Only the 2025-11-25 handshake (no server/discover), on stdio."""
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    low = server._lowlevel_server
    async with stdio_server() as (read, write):
        async with low.lifespan(low) as state:
            await serve_loop(low, read, write, lifespan_state=state, init_options=low.create_initialization_options())


if __name__ == "__main__":
    if "--legacy" in sys.argv:
        import anyio

        anyio.run(serve_legacy)
    else:
        server.run()
