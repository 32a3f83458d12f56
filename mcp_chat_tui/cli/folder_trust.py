"""Asking on the terminal whether a folder's ``mcp.json`` may start its servers (``--plain``, ``-p``,
``--check-servers``, ``--sign-in``); the full-screen app asks in a dialog (ui/folder_trust.py).

Without a terminal nobody can be asked: the run stops with exit 2, saying to pass ``--trust-folder``
(or ``--yes``). The answer is read on a thread of its own, so Ctrl+C and SIGTERM end the wait at once.
"""

from __future__ import annotations

import asyncio
import sys
import threading

from rich.console import Console
from rich.text import Text

from mcp_chat_tui.config.folder_trust import FolderFile, TrustStore
from mcp_chat_tui.core.errors import UserFacingError

WARNING = "Someone else may have written this file: the programs it names run as you."


class FolderNotTrusted(UserFacingError):
    """A folder's mcp.json would start servers, is not trusted, and there is no terminal to ask."""

    exit_code = 2


def refusal(folder: FolderFile) -> FolderNotTrusted:
    names = ", ".join(server.name for server in folder.servers)
    return FolderNotTrusted(
        f"{folder.source} ({folder.fingerprint.path}) would start servers ({names}) and is not trusted yet, "
        "and there is no terminal to ask: pass --trust-folder to trust it for this run "
        "(or --yes, which also runs every tool call without asking)"
    )


async def ask_trust_on_terminal(folder: FolderFile, console: Console) -> bool:
    """Show what the file would run and ask; a yes is remembered for this version of the file."""
    if not sys.stdin.isatty():
        raise refusal(folder)
    for line in folder.describe():
        console.print(Text(line), soft_wrap=True)
    console.print(Text(WARNING, style="yellow"), soft_wrap=True)
    console.print(Text("Trust this file and start these servers? [y/N] "), end="")
    answer = await read_line()
    if answer.strip().lower() not in ("y", "yes"):
        console.print(Text(folder.not_trusted_note(), style="yellow"), soft_wrap=True)
        return False
    try:
        TrustStore().remember(folder.fingerprint)
    except UserFacingError as exc:
        console.print(Text(f"trusted for this run only: {exc}", style="yellow"), soft_wrap=True)
    return True


async def read_line() -> str:
    """One line of stdin ("" at its end), read on a daemon thread: the event loop, and with it the
    signals that end the app, keeps running while the person thinks."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str] = loop.create_future()

    def deliver(line: str) -> None:
        if not answer.done():
            answer.set_result(line)

    def read() -> None:
        try:
            line = sys.stdin.readline()
        except (OSError, ValueError):
            line = ""
        try:
            loop.call_soon_threadsafe(deliver, line)
        except RuntimeError:  # the loop closed: the app ended while asking
            pass

    threading.Thread(target=read, name="trust-question", daemon=True).start()
    return await answer
