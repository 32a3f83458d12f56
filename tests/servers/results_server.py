"""An MCP server whose tools answer the way results can be sent: images (good and bad), audio,
structured content with and without a matching output schema, annotated content, and tools that
can only run as tasks. Written with the SDK's MCPServer; ``--legacy-only`` refuses 2026-07-28's
``server/discover`` so the client falls back to the 2025-11-25 handshake."""

from __future__ import annotations

import argparse
import base64
import io
import random
import struct
import wave
import zlib

import mcp_types
from mcp.server import runner
from mcp.server.mcpserver import MCPServer
from mcp_types import Annotations, AudioContent, CallToolResult, ImageContent, TextContent, ToolExecution
from PIL import Image

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
    "required": ["city", "celsius"],
}
TASK_TOOLS = {"render_movie": "required", "maybe_task": "optional"}


def small_png() -> bytes:
    """A 16×8 picture: red on the left, blue on the right."""
    image = Image.new("RGB", (16, 8), (220, 30, 30))
    image.paste((30, 60, 220), (8, 0, 16, 8))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def noisy_png(side: int = 128) -> bytes:
    """A picture of coloured noise (the same every time): too large to go into a transcript inline."""
    image = Image.frombytes("RGB", (side, side), random.Random(7).randbytes(side * side * 3))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def png_claiming(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width``×``height`` pixels (its data is one row)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 4)) + chunk(b"IEND", b"")
    )


def short_wav(seconds: float = 0.5, rate: int = 8000) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(rate)
        out.writeframes(b"\x80" * int(seconds * rate))
    return buffer.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class ResultsServer(MCPServer):
    """Lists a hand-made output schema for ``bad_weather`` and task support for the task tools."""

    async def list_tools(self) -> list[mcp_types.Tool]:
        tools = await super().list_tools()
        for tool in tools:
            if tool.name == "bad_weather":
                tool.output_schema = SCHEMA
            if tool.name in TASK_TOOLS:
                tool.execution = ToolExecution(task_support=TASK_TOOLS[tool.name])  # type: ignore[arg-type]
        return tools


def build() -> MCPServer:
    server = ResultsServer(name="results", version="1.0", log_level="WARNING")

    @server.tool(structured_output=False)
    def picture() -> CallToolResult:
        """A small picture and a caption."""
        return CallToolResult(
            content=[
                TextContent(text="a red and blue flag"),
                ImageContent(data=b64(small_png()), mime_type="image/png"),
            ]
        )

    @server.tool(structured_output=False)
    def photo() -> CallToolResult:
        """A 128×128 picture of noise."""
        return CallToolResult(content=[ImageContent(data=b64(noisy_png()), mime_type="image/png")])

    @server.tool(structured_output=False)
    def bad_image(kind: str) -> CallToolResult:
        """An image that cannot be shown: not_image, truncated, huge, not_base64 or big (50 MB)."""
        if kind == "not_image":
            data = b64(b"this is plain text, not a picture")
        elif kind == "truncated":
            data = b64(small_png()[:-30])  # the header reads, the pixels are cut short
        elif kind == "huge":
            data = b64(png_claiming(60000, 60000))
        elif kind == "big":
            data = b64(b"\0" * (50 * 1024 * 1024))
        else:
            data = "this is *not* base64!"
        return CallToolResult(
            content=[TextContent(text=f"bad image: {kind}"), ImageContent(data=data, mime_type="image/png")]
        )

    @server.tool(structured_output=False)
    def sound() -> CallToolResult:
        """Half a second of silence as WAV."""
        return CallToolResult(content=[AudioContent(data=b64(short_wav()), mime_type="audio/wav")])

    @server.tool()
    def weather(city: str) -> dict[str, object]:
        """Structured weather that matches its output schema."""
        return {"city": city, "celsius": 21.5}

    @server.tool(structured_output=False)
    def bad_weather(city: str) -> CallToolResult:
        """Structured weather that breaks the output schema it lists."""
        return CallToolResult(
            content=[TextContent(text=f"weather in {city}")], structured_content={"city": city, "celsius": "warm"}
        )

    @server.tool(structured_output=False)
    def annotated() -> CallToolResult:
        """One block for the model, one for the user only, one for both with a priority."""
        return CallToolResult(
            content=[
                TextContent(text="for the model: 42", annotations=Annotations(audience=["assistant"])),
                TextContent(text="for the user only: SECRET-NOTE", annotations=Annotations(audience=["user"])),
                TextContent(text="for both", annotations=Annotations(audience=["user", "assistant"], priority=0.9)),
            ]
        )

    @server.tool(structured_output=False)
    def render_movie() -> str:
        """A tool that can only run as a task."""
        return "rendered"

    @server.tool(structured_output=False)
    def maybe_task() -> str:
        """A tool that may run as a task or not."""
        return "done without a task"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--label", default="results")
    parser.add_argument("--legacy-only", action="store_true", help="speak 2025-11-25 only, as older servers do")
    args = parser.parse_args()
    if args.legacy_only:
        # Every connection opens in the 2025-11-25 era: the client's server/discover probe is
        # refused there, and the client falls back to the initialize handshake.
        runner._has_modern_envelope = lambda params: False  # noqa: SLF001
    build().run("stdio")


if __name__ == "__main__":
    main()
