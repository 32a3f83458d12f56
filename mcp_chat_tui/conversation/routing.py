"""What a line typed at the prompt asks for: leave, ``/roots``, ``/compact``, ``/retry``, ``/call``,
``/model``, a server's prompt, or a turn.

Both front ends route a line here, in the same order, and only show the outcome.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from mcp_chat_tui.agent.memory_window import is_compact_command
from mcp_chat_tui.conversation.models import is_model_command
from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.servers.commands import is_command
from mcp_chat_tui.servers.user_calls import is_call_command

EXIT_WORDS = frozenset({"bye", "quit"})
RETRY_COMMAND = "/retry"


class Route(enum.Enum):
    """What a line asks for."""

    NOTHING = "nothing"  # an empty line (or only a secret's marker's surroundings): nothing to do
    LEAVE = "leave"  # ``bye`` or ``quit``
    ROOTS = "roots"  # ``/roots ...``: answered already (``Routed.said``)
    COMPACT = "compact"  # ``/compact``
    RETRY = "retry"  # ``/retry``: the last reply discarded and asked again (agent/retrying.py)
    CALL = "call"  # ``/call server:tool key=value``: the user calls a tool (servers/user_calls.py)
    MODEL = "model"  # ``/model [NAME]``: list the models, or switch to one (conversation/models.py)
    COMMAND = "command"  # ``/server:prompt ...``: a server's prompt makes the turn
    PROMPT = "prompt"  # a turn for the model


@dataclass(frozen=True)
class Routed:
    """A line's route and its text as the conversation keeps it (secrets redacted); ``said`` is the
    answer of a ``/roots`` command."""

    route: Route
    text: str
    said: str = ""


RootsCommand = Callable[[str], Awaitable[str | None]]


async def route_line(
    line: str, redactor: Redactor, roots_command: RootsCommand | None = None, *, typed: bool = True
) -> Routed:
    """Route ``line``. A ``typed`` line (at a prompt) may leave or change the roots; a line that is
    not typed (``-p``'s prompt) is taken as it is, as a turn, ``/compact`` or a server's prompt."""
    text = redactor.text(line.strip()) if typed else line
    if typed:
        if not text:
            return Routed(Route.NOTHING, text)
        if text.lower() in EXIT_WORDS:
            return Routed(Route.LEAVE, text)
        said = await roots_command(text) if roots_command is not None else None
        if said is not None:
            return Routed(Route.ROOTS, text, said)
        if is_model_command(text):
            return Routed(Route.MODEL, text)
    if is_compact_command(text):
        return Routed(Route.COMPACT, text)
    if text.strip().lower() == RETRY_COMMAND:
        return Routed(Route.RETRY, text)
    if is_call_command(text):
        return Routed(Route.CALL, text)
    if is_command(text):
        return Routed(Route.COMMAND, text)
    return Routed(Route.PROMPT, text)
