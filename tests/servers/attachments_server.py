"""An MCP server whose prompts and resources carry images, audio and other binary contents, written
with the SDK's MCPServer: a small image (16×8, inline in a transcript), a large one (kept in the
transcript's media folder), a WAV sound and bytes of no media type, each as a resource; prompts that
embed an image, an image resource, a sound, and an image meant for the user only. ``--legacy-only`` speaks 2025-11-25 only."""

from __future__ import annotations

import argparse

from mcp.server import runner
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp_types import Annotations, AudioContent, BlobResourceContents, EmbeddedResource, ImageContent
from results_server import b64, noisy_png, short_wav, small_png

BLOB = bytes(range(256))  # bytes that are neither an image nor audio


def build(name: str) -> MCPServer:
    server = MCPServer(name=name, version="1.0", log_level="WARNING")

    @server.resource("images://flag", name="flag", description="A red and blue flag", mime_type="image/png")
    def flag() -> bytes:
        return small_png()

    @server.resource("images://noise", name="noise", description="Coloured noise, 128×128", mime_type="image/png")
    def noise() -> bytes:
        return noisy_png()

    @server.resource("sounds://beep", name="beep", description="Half a second of silence", mime_type="audio/wav")
    def beep() -> bytes:
        return short_wav()

    @server.resource("files://blob", name="blob", description="Bytes", mime_type="application/octet-stream")
    def blob() -> bytes:
        return BLOB

    @server.prompt(description="Describe a flag, with its picture")
    def describe_flag() -> list[Message]:
        picture = ImageContent(type="image", data=b64(small_png()), mime_type="image/png")
        return [UserMessage("Describe this flag."), UserMessage(picture)]

    @server.prompt(description="Look at noise, embedded as a resource")
    def look_at_noise() -> list[Message]:
        noise = BlobResourceContents(uri="images://noise", mime_type="image/png", blob=b64(noisy_png()))
        return [UserMessage("What do you see?"), UserMessage(EmbeddedResource(type="resource", resource=noise))]

    @server.prompt(description="A picture for you, not for the model")
    def for_you() -> list[Message]:
        only_you = Annotations(audience=["user"])
        picture = ImageContent(type="image", data=b64(small_png()), mime_type="image/png", annotations=only_you)
        return [UserMessage("Say hello."), UserMessage(picture)]

    @server.prompt(description="Listen to a sound")
    def listen() -> list[Message]:
        sound = AudioContent(type="audio", data=b64(short_wav()), mime_type="audio/wav")
        return [UserMessage("What does this sound like?"), UserMessage(sound)]

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--label", default="pictures")
    parser.add_argument("--legacy-only", action="store_true", help="speak 2025-11-25 only, as older servers do")
    args = parser.parse_args()
    if args.legacy_only:
        runner._has_modern_envelope = lambda params: False  # noqa: SLF001
    build(args.label).run("stdio")


if __name__ == "__main__":
    main()
