"""Run the plain console mode with a scripted model against the demo server, recording a transcript.

Used by tests that need a real app process (e.g. to SIGKILL it mid-turn):
``python tests/apps/scripted_plain.py TRANSCRIPT PROMPT [--slow-reply]``. The scripted model
writes a sentence, then calls the demo server's ``sleep`` tool for 60 s; with ``--slow-reply`` it
streams one long reply slowly instead (to be killed while the reply is still coming).
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
from mcp_chat_tui.engine.events import TextDelta  # noqa: E402
from mcp_chat_tui.servers import ServerHub  # noqa: E402
from tests.fakes import ScriptedEngine, call  # noqa: E402
from tests.helpers import demo_config  # noqa: E402

LONG_REPLY = " ".join(f"word{index}" for index in range(400))


def scripted_engine(slow_reply: bool) -> ScriptedEngine:
    if slow_reply:
        return ScriptedEngine([LONG_REPLY], delay=0.05)
    words = [TextDelta(f"{word} ") for word in "Let me wait as you asked, one moment please.".split()]
    return ScriptedEngine([words + [call("sleep", {"seconds": 60})], "Done."], delay=0.05)


async def main(transcript: Path, prompt: str, slow_reply: bool = False) -> int:
    engine = scripted_engine(slow_reply)
    hub = ServerHub([demo_config()])
    async with hub:
        await hub.start_all()
        agent = Agent(engine, hub, ApprovalPolicy("auto"))
        return await run_plain(
            Conversation(agent, "scripted", path=transcript), Console(), one_prompt=prompt, model_label="scripted"
        )


if __name__ == "__main__":
    sys.exit(asyncio.run(main(Path(sys.argv[1]), sys.argv[2], "--slow-reply" in sys.argv[3:])))
