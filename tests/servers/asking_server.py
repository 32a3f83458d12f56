"""An MCP server whose tools ask the client: a sample of its model (with and without tools) and the
user's answers (a form, a URL). Written with the SDK's MCPServer; it speaks 2026-07-28 (the requests
embedded in an ``InputRequiredResult``) or, with ``--legacy``, only the 2025-11-25 handshake (the
requests sent to the client as JSON-RPC requests). Each tool answers with what came back, as JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, Literal

import mcp_types as t
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

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
# Every kind of field the 2025-11-25 elicitation schema has (``PrimitiveSchemaDefinition``).
EVERY_FIELD_SCHEMA = {
    "type": "object",
    "properties": {
        "nick": {"type": "string", "title": "Nickname", "minLength": 2, "maxLength": 8},
        "email": {"type": "string", "format": "email"},
        "site": {"type": "string", "format": "uri"},
        "born": {"type": "string", "format": "date"},
        "meeting": {"type": "string", "format": "date-time"},
        "motto": {"type": "string", "default": "It was a dark and stormy night."},
        "age": {"type": "integer", "minimum": 1, "maximum": 120, "default": 42},
        "ratio": {"type": "number", "minimum": 0, "maximum": 10},
        "agree": {"type": "boolean", "description": "no default: left out unless answered"},
        "news": {"type": "boolean", "default": True},
        "friend": {"type": "string", "enum": ["Monica", "Rachel", "Joey"], "default": "Monica"},
        "hero": {
            "type": "string",
            "title": "Hero",
            "oneOf": [{"const": "hero-1", "title": "Superman"}, {"const": "hero-2", "title": "Wonder Woman"}],
        },
        "pet": {"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"]},
        "instruments": {
            "type": "array",
            "title": "Instruments",
            "minItems": 1,
            "maxItems": 2,
            "items": {"type": "string", "enum": ["Guitar", "Piano", "Violin"]},
            "default": ["Guitar"],
        },
        "fish": {
            "type": "array",
            "title": "Fish",
            "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"}, {"const": "fish-2", "title": "Salmon"}]},
        },
    },
    "required": ["nick", "instruments"],
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
async def every_field(ctx: Context) -> Any:
    """Ask the user a form with every kind of field the elicitation schema has."""
    request = t.ElicitRequest(
        params=t.ElicitRequestFormParams(message="Every kind of field", requested_schema=EVERY_FIELD_SCHEMA)
    )
    return described(await ask(ctx, request, t.ElicitResult))


class Band(BaseModel):
    """What ``join_band`` asks, checked by the SDK's own ``ctx.elicit`` against this model."""

    name: str = Field(min_length=2, description="what we call you")
    plays: list[Literal["Guitar", "Piano", "Drums"]] = Field(min_length=1, max_length=2)
    loud: bool = Field(description="may we play loud?")
    years: int = Field(default=1, ge=0, le=80)


@server.tool(structured_output=False)
async def join_band(ctx: Context) -> Any:
    """Ask with the SDK's ``ctx.elicit`` (2025-11-25 only): the server checks the answer against ``Band``."""
    answer = await ctx.elicit("Join the band", Band)
    if answer.action != "accept":
        return json.dumps({"action": answer.action})
    return json.dumps({"action": "accept", "content": answer.data.model_dump()}, sort_keys=True)


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


PAGES_ASKED: dict[str, int] = {}  # guarded's "visit a page first" answers so far, by ``what``
LATER: set[asyncio.Task] = set()


@server.tool(structured_output=False)
async def guarded(what: str, ctx: Context, times: int = 1, pages: int = 1, tell_done: bool = False) -> str:
    """Answer "URL elicitation required" (-32042) naming ``pages`` pages for the first ``times`` calls
    about ``what``; with ``tell_done``, say each page is done (notifications/elicitation/complete)."""
    asked = PAGES_ASKED.get(what, 0)
    if asked >= times:
        return f"{what}: done after {asked} visit(s)"
    PAGES_ASKED[what] = asked + 1
    needed = [
        t.ElicitRequestURLParams(
            message=f"Authorize {what} ({number})",
            url=f"https://auth.example/{what}/{number}",
            elicitation_id=f"{what}-{asked}-{number}",
        )
        for number in range(1, pages + 1)
    ]
    if tell_done:
        session = ctx.session

        async def say_done() -> None:
            await asyncio.sleep(0.2)
            for page in needed:
                await session.send_elicit_complete(page.elicitation_id)

        task = asyncio.get_running_loop().create_task(say_done())
        LATER.add(task)
        task.add_done_callback(LATER.discard)
    raise UrlElicitationRequiredError(needed, f"{what} needs authorization")


async def serve_legacy() -> None:
    """Only the 2025-11-25 handshake (no server/discover), on stdio."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await serve_legacy_on(read, write)


async def serve_legacy_on(read: Any, write: Any) -> None:
    """Only the 2025-11-25 handshake on a pair of streams (stdio's, or the tests' in-memory ones)."""
    from mcp.server.runner import serve_loop

    low = server._lowlevel_server
    async with low.lifespan(low) as state:
        await serve_loop(low, read, write, lifespan_state=state, init_options=low.create_initialization_options())


if __name__ == "__main__":
    if "--legacy" in sys.argv:
        import anyio

        anyio.run(serve_legacy)
    else:
        server.run()
