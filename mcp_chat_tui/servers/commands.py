"""``/server:prompt key=value …``: a server's prompt typed as a command, in every front end.

``/prompt`` alone is enough when only one server has a prompt by that name. Values with
spaces are quoted (``topic="the whole thing"``). A command that names no prompt gets a
message listing the nearest names.
"""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.servers.catalog_items import PromptInfo

if TYPE_CHECKING:
    from mcp_chat_tui.servers.hub import ServerHub

# Asks a person for one argument of a command (None or "": not given).
AskArgument = Callable[["PromptCommand", str], Awaitable[str | None]]


class CommandError(UserFacingError):
    """A command that cannot run: unknown, ambiguous, badly written, or missing a required argument;
    the message says what to do."""

    exit_code = 2


@dataclass
class PromptCommand:
    prompt: PromptInfo
    arguments: dict[str, str] = field(default_factory=dict)

    @property
    def missing(self) -> list[str]:
        """Required arguments not given (or given empty)."""
        return [arg.name for arg in self.prompt.arguments if arg.required and not self.arguments.get(arg.name)]


def is_command(text: str) -> bool:
    """Whether a prompt is a command: ``/`` then a name (a path such as ``/tmp/x`` is not)."""
    head = text.strip().split(None, 1)[0] if text.strip() else ""
    return head.startswith("/") and len(head) > 1 and "/" not in head[1:]


def parse_command(text: str, prompts: list[PromptInfo]) -> PromptCommand:
    """The prompt and arguments a command names; raises ``CommandError``."""
    try:
        words = shlex.split(text.strip())
    except ValueError as exc:
        raise CommandError(f"cannot read the command: {exc} (close the quotes)") from None
    prompt = find_prompt(words[0][1:], prompts)
    known = {arg.name for arg in prompt.arguments}
    arguments: dict[str, str] = {}
    for word in words[1:]:
        key, equals, value = word.partition("=")
        if not equals or not key:
            raise CommandError(f"{word!r} is not key=value: give arguments as name=value ({_names(known)})")
        if known and key not in known:
            raise CommandError(f"{prompt.command} has no argument {key!r}; its arguments: {_names(known)}")
        arguments[key] = value
    return PromptCommand(prompt, arguments)


def find_prompt(name: str, prompts: list[PromptInfo]) -> PromptInfo:
    """``server:prompt`` or a unique ``prompt``; raises ``CommandError`` listing near names."""
    server, colon, prompt_name = name.rpartition(":")
    if colon:
        matches = [p for p in prompts if p.server == server and p.name == prompt_name]
    else:
        matches = [p for p in prompts if p.name == name]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise CommandError(
            f"/{name} is a prompt of several servers: say which, " + ", ".join(p.command for p in matches)
        )
    commands = [p.command[1:] for p in prompts] + [p.name for p in prompts]
    near = difflib.get_close_matches(name, commands, n=5, cutoff=0.5)
    if not prompts:
        raise CommandError(f"/{name}: no server offers prompts, so there are no / commands")
    hint = (
        "did you mean " + ", ".join(f"/{n}" for n in dict.fromkeys(near))
        if near
        else "prompts: " + ", ".join(p.command for p in prompts[:10])
    )
    raise CommandError(f"unknown command /{name}; {hint}?" if near else f"unknown command /{name}; {hint}")


def command_text(prompt: PromptInfo, arguments: dict[str, str]) -> str:
    """The command as it would be typed."""
    given = " ".join(shlex.quote(f"{key}={value}") if value else f"{key}=" for key, value in arguments.items())
    return prompt.command + (f" {given}" if given else "")


def _names(known: set[str]) -> str:
    return ", ".join(sorted(known)) or "it takes none"


async def run_command(hub: ServerHub, text: str, ask: AskArgument | None) -> tuple[str, list[Attachment]]:
    """The user turn a typed command makes: its prompt got from its server with the arguments given,
    each missing required one asked for with ``ask`` (None: nobody to ask, so it is an error)."""
    command = parse_command(text, hub.prompts())
    for name in command.missing:
        if ask is None:
            raise CommandError(
                f"{command.prompt.command} needs the argument {name!r}: add {name}=VALUE "
                f'(quote a value with spaces: {name}="two words")'
            )
        value = await ask(command, name)
        if not value:
            raise CommandError(f"{command.prompt.command} needs {name!r}; nothing was sent")
        command.arguments[name] = value
    return await hub.get_prompt(command.prompt, command.arguments)
