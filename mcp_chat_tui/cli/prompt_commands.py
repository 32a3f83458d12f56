"""``/server:prompt key=value`` at the ``prompt ->`` line and in ``-p``: missing arguments asked on the
terminal (with the server's suggestions), attachments listed under the prompt."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from rich.console import Console
from rich.text import Text

from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.core.media_info import media_line
from mcp_chat_tui.core.text import visible_controls
from mcp_chat_tui.servers.commands import PromptCommand, run_command

if TYPE_CHECKING:
    from mcp_chat_tui.servers.hub import ServerHub


class LineReader(Protocol):
    """Lines typed on the terminal (``cli/plain.py``'s reader)."""

    async def read(self) -> str | None: ...


async def command_turn(
    hub: ServerHub, console: Console, reader: LineReader | None, text: str
) -> tuple[str, list[Attachment]]:
    """The turn a command makes; ``reader`` None (``-p``): a missing required argument is an error."""

    async def ask(command: PromptCommand, name: str) -> str | None:
        assert reader is not None
        argument = next(arg for arg in command.prompt.arguments if arg.name == name)
        hints = await hub.complete_argument(command.prompt.server, command.prompt, name, "", command.arguments)
        about = f" ({argument.description})" if argument.description else ""
        offer = f" [{', '.join(hints[:8])}]" if hints else ""
        console.print(Text(visible_controls(f"  {name}{about}, required{offer}: "), style="bold"), end="")
        return (await reader.read() or "").strip()

    prompt, attachments = await run_command(hub, text, ask if reader is not None else None)
    print_attachments(console, attachments)
    return prompt, attachments


def print_attachments(console: Console, attachments: Sequence[Attachment]) -> None:
    """One line per attachment; an image or audio adds a line about it, as a result's does."""
    for attachment in attachments:
        console.print(Text(visible_controls(f"  📎 {attachment.label()}"), style="dim"))
        if attachment.media is not None:
            console.print(Text(visible_controls(f"     {media_line(attachment.media)}"), style="dim"))
