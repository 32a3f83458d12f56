"""Asking on the terminal whether a folder's ``mcp.json`` may start its servers (``--plain``, ``-p``,
``--check-servers``, ``--sign-in``); the full-screen app asks in a dialog (ui/folder_trust.py).

Without a terminal nobody can be asked: the run stops with exit 2, saying to pass ``--trust-folder``
(or ``--yes``). The answer is read on a thread of its own, so Ctrl+C and SIGTERM end the wait at once.
"""

from __future__ import annotations

import sys

from rich.console import Console
from rich.text import Text

from mcp_chat_tui.cli.typed_lines import is_yes_or_no, terminal_lines
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
    """Show what the file would run and ask; a yes is remembered for this version of the file. The
    answer is a line typed after the question was put (cli/typed_lines.py): a line typed ahead, as the
    program started, answers nothing."""
    if not sys.stdin.isatty():
        raise refusal(folder)
    for line in folder.describe():
        console.print(Text(line), soft_wrap=True)
    console.print(Text(WARNING, style="yellow"), soft_wrap=True)
    async with terminal_lines().question(console) as question:
        answer = await question.ask(
            lambda: console.print(Text("Trust this file and start these servers? [y/N] "), end=""), is_yes_or_no
        )
    if answer is None or answer.strip().lower() not in ("y", "yes"):
        console.print(Text(folder.not_trusted_note(), style="yellow"), soft_wrap=True)
        return False
    try:
        TrustStore().remember(folder.fingerprint)
    except UserFacingError as exc:
        console.print(Text(f"trusted for this run only: {exc}", style="yellow"), soft_wrap=True)
    return True
