"""Run the plain console mode with a scripted model whose one reply streams slowly, recording a
transcript: ``python tests/apps/slow_reply_plain.py TRANSCRIPT PROMPT``. For tests that SIGKILL
the app while the reply is still coming."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rich.console import Console  # noqa: E402

from mcp_chat_tui.agent import Agent, ApprovalPolicy  # noqa: E402
from mcp_chat_tui.cli.plain import run_plain  # noqa: E402
from mcp_chat_tui.servers import ServerHub  # noqa: E402
from mcp_chat_tui.transcript import TranscriptRecorder  # noqa: E402
from tests.fakes import ScriptedEngine  # noqa: E402
from tests.helpers import demo_config  # noqa: E402

LONG_REPLY = " ".join(f"word{index}" for index in range(400))


async def main(transcript: Path, prompt: str) -> int:
    engine = ScriptedEngine([LONG_REPLY], delay=0.05)
    hub = ServerHub([demo_config()])
    async with hub:
        await hub.start_all()
        agent = Agent(engine, hub, ApprovalPolicy("auto"))
        return await run_plain(
            agent,
            Console(),
            one_prompt=prompt,
            recorder=TranscriptRecorder(),
            transcript_file=transcript,
            model_label="scripted",
        )


if __name__ == "__main__":
    sys.exit(asyncio.run(main(Path(sys.argv[1]), sys.argv[2])))
