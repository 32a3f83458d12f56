"""An MCP server written with the SDK that sends what the spec allows a client to be lenient about.

- ``--no-result-type``: every result leaves out ``resultType``, which a 2026-07-28 client must read as
  "complete" (a middleware edits the results after the SDK's own checks, as a server written against
  an earlier version of the spec would send them).
- Its resource ``files://notes.txt`` is a blob declared ``text/plain``: text, sent base64-encoded;
  ``files://latin1.txt`` is one declared ``text/plain`` that is not UTF-8 (Latin-1 bytes), and its
  tool ``notes_inline`` answers with ``files://notes.txt`` embedded as such a blob.
- Its tool ``broken`` answers with a malformed result (a text block without text, ``isError`` a string),
  and so does reading ``files://broken.txt`` (contents with neither text nor blob).
- Its tool ``lookup`` is listed with an invalid ``x-mcp-header`` (``"bad header"``, not an RFC 9110
  token) on its ``region`` argument, which a 2026-07-28 client must not call.
- Its tool ``get_weather`` has a title, ``Weather report``, for a person to read.
- ``--http PORT``: streamable HTTP on 127.0.0.1:PORT instead of stdio.
"""

import argparse
import base64

from mcp.server.mcpserver import MCPServer
from mcp_types import BlobResourceContents, EmbeddedResource, ReadResourceResult

NOTES = "Buy milk.\nCall Ada about the engine.\n"
LATIN1 = "Café au lait.\n".encode("latin-1")


def without_result_type(enabled: bool):
    async def middleware(ctx, call_next):
        result = await call_next(ctx)
        if enabled and isinstance(result, dict):
            result = {key: value for key, value in result.items() if key != "resultType"}
        return result

    return middleware


def text_blob(uri: str, data: bytes) -> BlobResourceContents:
    return BlobResourceContents(uri=uri, mime_type="text/plain", blob=base64.b64encode(data).decode())


async def notes_as_blob(ctx, call_next):
    """``files://notes.txt`` and ``files://latin1.txt`` read as blobs (base64) though their type is text."""
    result = await call_next(ctx)
    uri = (ctx.params or {}).get("uri")
    if ctx.method == "resources/read" and uri in ("files://notes.txt", "files://latin1.txt"):
        data = NOTES.encode() if uri == "files://notes.txt" else LATIN1
        blob = text_blob(uri, data)
        dumped = ReadResourceResult(contents=[blob]).model_dump(by_alias=True, mode="json", exclude_none=True)
        result = {**(result if isinstance(result, dict) else {}), "contents": dumped["contents"]}
    return result


async def broken_result(ctx, call_next):
    result = await call_next(ctx)
    if ctx.method == "tools/call" and (ctx.params or {}).get("name") == "broken" and isinstance(result, dict):
        result = {**result, "content": [{"type": "text"}], "isError": "maybe"}
    if ctx.method == "resources/read" and (ctx.params or {}).get("uri") == "files://broken.txt":
        result = {**(result if isinstance(result, dict) else {}), "contents": [{"uri": "files://broken.txt"}]}
    return result


async def bad_header(ctx, call_next):
    """``lookup``'s ``region`` listed with an ``x-mcp-header`` that is not a token (the SDK's server
    refuses to register one, so it is added on the way out)."""
    result = await call_next(ctx)
    if ctx.method == "tools/list" and isinstance(result, dict):
        for tool in result.get("tools", []):
            if tool.get("name") == "lookup":
                tool["inputSchema"]["properties"]["region"]["x-mcp-header"] = "bad header"
    return result


def build(args: argparse.Namespace) -> MCPServer:
    middleware = [
        without_result_type(args.no_result_type),
        notes_as_blob,
        broken_result,
        bad_header,
    ]
    server = MCPServer(name="lenient", version="1.0", log_level="WARNING", middleware=middleware)

    @server.tool(title="Weather report", structured_output=False)
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    @server.tool(structured_output=False)
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool(structured_output=False)
    def broken() -> str:
        """Answers with a malformed result."""
        return "fine here, broken on the wire"

    @server.tool(structured_output=False)
    def notes_inline() -> list[EmbeddedResource]:
        """The notes, embedded in the result as a text/plain blob."""
        return [EmbeddedResource(type="resource", resource=text_blob("files://notes.txt", NOTES.encode()))]

    @server.tool(structured_output=False)
    def lookup(region: str) -> str:
        """Look a region up (listed with an invalid x-mcp-header)."""
        return f"found {region}"

    @server.resource("files://notes.txt", name="notes", mime_type="text/plain")
    def notes() -> str:
        return NOTES

    @server.resource("files://latin1.txt", name="latin1", mime_type="text/plain")
    def latin1() -> str:
        return "read as a blob of Latin-1 bytes"

    @server.resource("files://broken.txt", name="broken", mime_type="text/plain")
    def broken_file() -> str:
        return "fine here, broken on the wire"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-result-type", action="store_true")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT")
    args = parser.parse_args()
    if args.http is not None:
        build(args).run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        build(args).run("stdio")


if __name__ == "__main__":
    main()
