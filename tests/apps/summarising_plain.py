"""The plain console mode on a conversation file, with a scripted model and no servers.

``python tests/apps/summarising_plain.py TRANSCRIPT REPLY...``: resumes TRANSCRIPT, reads prompts
from stdin, and the scripted model answers with the REPLY arguments in order (summaries included).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rich.console import Console  # noqa: E402

from mcp_chat_tui.agent import Agent, ApprovalPolicy  # noqa: E402
from mcp_chat_tui.cli.plain import run_plain  # noqa: E402
from mcp_chat_tui.conversation import Conversation  # noqa: E402
from mcp_chat_tui.servers import ServerHub  # noqa: E402
from mcp_chat_tui.transcript import parse, read_transcript_text  # noqa: E402
from tests.fakes import ScriptedEngine  # noqa: E402


async def main(transcript: Path, replies: list[str]) -> int:
    hub = ServerHub([])
    async with hub:
        agent = Agent(ScriptedEngine(replies), hub, ApprovalPolicy("auto"))
        loaded = parse(read_transcript_text(transcript), transcript)
        conversation = Conversation(agent, "scripted", transcript=loaded, path=transcript)
        return await run_plain(conversation, Console(width=200), model_label="scripted")


if __name__ == "__main__":
    sys.exit(asyncio.run(main(Path(sys.argv[1]), sys.argv[2:])))
