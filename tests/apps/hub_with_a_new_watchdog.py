"""Run a hub whose first watchdog died, to be killed with SIGKILL by a test.

``python tests/apps/hub_with_a_new_watchdog.py MARKER``: starts a stubborn server, kills the
watchdog that its start started, starts a second stubborn server (the hub must start a new
watchdog and tell it about both), prints ``ready OLD_WATCHDOG NEW_WATCHDOG`` and waits.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp_chat_tui.config import ServerConfig  # noqa: E402
from mcp_chat_tui.servers import ServerHub  # noqa: E402
from mcp_chat_tui.servers.watchdog import server_watchdog  # noqa: E402

PROCESS_SERVER = str(Path(__file__).resolve().parents[1] / "servers" / "process_server.py")


def stubborn(name: str, marker: str) -> ServerConfig:
    return ServerConfig(
        name=name,
        type="stdio",
        command=sys.executable,
        args=[PROCESS_SERVER, "--marker", marker, "--stubborn", "--child", "stubborn"],
    )


async def main(marker: str) -> None:
    hub = ServerHub([stubborn("first", marker), stubborn("second", marker)])
    await hub.restart("first")
    old = server_watchdog().pid
    os.kill(old, signal.SIGKILL)
    os.waitpid(old, 0)
    await hub.restart("second")
    print("ready", old, server_watchdog().pid, flush=True)
    await asyncio.sleep(600)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
