"""An MCP server with prompts, resources and resource templates, written with the SDK.

Prompts take arguments (one required) with completions; resources are text, Markdown,
JSON and a PNG image; a template has a variable. Tools change the catalog at run time
and tell the client (``notifications/*/list_changed``, ``resources/updated``, or the
2026-07-28 ``subscriptions/listen`` events). Flags: ``--legacy`` refuses ``server/discover``
serves the 2025-11-25 handshake only; ``--broken-prompts`` fails
``prompts/list``; ``--no-resources`` offers prompts only; ``--page-size N`` pages ``resources/list``.
"""

import argparse
import base64
import json
import sys

import anyio.lowlevel
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp_types import (
    Completion,
    EmbeddedResource,
    ImageContent,
    PromptReference,
    ResourceTemplateReference,
    TextResourceContents,
)

# A 1x1 PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
LANGUAGES = ["python", "perl", "php", "rust", "ruby"]
NOTES: dict[str, str] = {"notes://today": "buy milk"}  # resource text a tool may change


def build(args: argparse.Namespace) -> MCPServer:
    middleware = [fail_prompt_list] if args.broken_prompts else []
    if args.page_size:
        middleware.append(paged_resources(args.page_size))
    server = MCPServer(name="catalog", version="1.0", log_level="WARNING", middleware=middleware)
    add_prompts(server)
    if not args.no_resources:
        add_resources(server)
    add_tools(server)
    if args.legacy:
        allow_subscribe(server)
    return server


def add_prompts(server: MCPServer) -> None:
    @server.prompt(description="Review a piece of code")
    def review(language: str, focus: str = "bugs") -> str:
        return f"Please review this {language} code, looking for {focus}."

    @server.prompt(description="Greet someone by name")
    def greet(name: str) -> list[Message]:
        return [UserMessage(f"Say hello to {name}.")]

    @server.prompt(description="Summarise the notes, with the notes attached")
    def summarise() -> list[Message]:
        notes = EmbeddedResource(
            type="resource",
            resource=TextResourceContents(uri="notes://today", mime_type="text/plain", text=NOTES["notes://today"]),
        )
        pixel = ImageContent(type="image", data=base64.b64encode(PIXEL).decode(), mime_type="image/png")
        return [UserMessage("Summarise these notes."), UserMessage(notes), UserMessage(pixel)]

    @server.completion()
    async def complete(ref, argument, context):
        if isinstance(ref, PromptReference) and argument.name == "language":
            return Completion(values=[lang for lang in LANGUAGES if lang.startswith(argument.value)])
        if isinstance(ref, ResourceTemplateReference) and argument.name == "city":
            return Completion(values=[c for c in ("paris", "perth", "prague") if c.startswith(argument.value)])
        return None


def add_resources(server: MCPServer) -> None:
    @server.resource("notes://today", name="today", description="Today's notes", mime_type="text/plain")
    def today() -> str:
        return NOTES["notes://today"]

    @server.resource("docs://readme", name="readme", description="The read-me", mime_type="text/markdown")
    def readme() -> str:
        return "# Catalog\n\nA server with **prompts** and resources."

    @server.resource("data://config", name="config", description="Settings as JSON", mime_type="application/json")
    def config() -> str:
        return json.dumps({"theme": "dark", "size": 3})

    @server.resource("images://pixel", name="pixel", description="One pixel", mime_type="image/png")
    def pixel() -> bytes:
        return PIXEL

    @server.resource("weather://{city}", name="weather", description="The weather in a city", mime_type="text/plain")
    def weather(city: str) -> str:
        return f"sunny in {city}"


def add_tools(server: MCPServer) -> None:
    @server.tool(structured_output=False)
    async def add_note(uri: str, text: str, ctx: Context) -> str:
        """Add a text resource and tell the client the resource list changed."""
        NOTES[uri] = text
        server.resource(uri, name=uri.rsplit("/", 1)[-1], mime_type="text/plain")(lambda: NOTES[uri])
        await _tell(ctx, "resources_changed")
        return f"added {uri}"

    @server.tool(structured_output=False)
    async def add_prompt(name: str, ctx: Context) -> str:
        """Add a prompt and tell the client the prompt list changed."""
        server.prompt(name=name, description=f"added at run time: {name}")(lambda: f"I am {name}")
        await _tell(ctx, "prompts_changed")
        return f"added prompt {name}"

    @server.tool(structured_output=False)
    async def edit_note(text: str, ctx: Context) -> str:
        """Change today's notes and tell subscribers the resource was updated."""
        NOTES["notes://today"] = text
        await _tell(ctx, "resource_updated", "notes://today")
        return "edited"


async def _tell(ctx: Context, what: str, uri: str = "") -> None:
    """Say what changed the way the connection's protocol version hears it."""
    modern = {
        "resources_changed": ctx.notify_resources_changed,
        "prompts_changed": ctx.notify_prompts_changed,
    }
    legacy = {
        "resources_changed": ctx.session.send_resource_list_changed,
        "prompts_changed": ctx.session.send_prompt_list_changed,
    }
    try:
        if what == "resource_updated":
            await ctx.notify_resource_updated(uri)
        else:
            await modern[what]()
        for _ in range(20):  # let the listen stream send the event before this answer, as a handshake-era
            await anyio.lowlevel.checkpoint()  # notification goes before it: a client cannot see what has not come
    except Exception:  # noqa: BLE001 - not a 2026-07-28 connection
        pass
    try:
        if what == "resource_updated":
            await ctx.session.send_resource_updated(uri)
        else:
            await legacy[what]()
    except Exception:  # noqa: BLE001 - not a handshake-era connection
        pass


def run_legacy(server: MCPServer) -> None:
    """Serve the handshake era only (``server/discover`` is then an unknown method), as a server
    written before 2026-07-28 does."""
    import anyio
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server  # noqa: SLF001

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream), lowlevel.lifespan(lowlevel) as state:
            await serve_loop(
                lowlevel,
                read_stream,
                write_stream,
                lifespan_state=state,
                init_options=lowlevel.create_initialization_options(),
            )

    anyio.run(serve)


async def fail_prompt_list(ctx, call_next):
    from mcp.shared.exceptions import MCPError

    if ctx.method == "prompts/list":
        raise MCPError(code=-32603, message="the prompt store is down")
    return await call_next(ctx)


def paged_resources(page_size: int):
    """Serve ``resources/list`` in pages of ``page_size`` (the cursor is the next index)."""

    async def middleware(ctx, call_next):
        result = await call_next(ctx)
        if ctx.method != "resources/list" or not isinstance(result, dict):
            return result
        start = int((ctx.params or {}).get("cursor") or 0)
        items = result.get("resources", [])
        more = {"nextCursor": str(start + page_size)} if start + page_size < len(items) else {}
        rest = {key: value for key, value in result.items() if key not in ("resources", "nextCursor")}
        return {**rest, "resources": items[start : start + page_size], **more}

    return middleware


def allow_subscribe(server: MCPServer) -> None:
    """``resources/subscribe`` for handshake-era clients (the SDK's MCPServer has no decorator for it)."""
    from mcp_types import EmptyResult, SubscribeRequestParams, UnsubscribeRequestParams

    async def subscribe(ctx, params) -> EmptyResult:
        print(f"catalog: subscribed to {params.uri}", file=sys.stderr, flush=True)
        return EmptyResult()

    async def unsubscribe(ctx, params) -> EmptyResult:
        print(f"catalog: unsubscribed from {params.uri}", file=sys.stderr, flush=True)
        return EmptyResult()

    lowlevel = server._lowlevel_server  # noqa: SLF001
    lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--legacy", action="store_true")
    parser.add_argument("--broken-prompts", action="store_true")
    parser.add_argument("--no-resources", action="store_true")
    parser.add_argument("--page-size", type=int, default=0, help="serve resources/list in pages of this size")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    server = build(args)
    if args.legacy:
        run_legacy(server)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
