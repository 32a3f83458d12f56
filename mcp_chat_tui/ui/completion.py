"""What the prompt box offers as you type: server prompts (and the app's own commands) after ``/``,
resources and files from the disk after ``@`` (core/local_files.py).

Plain logic over the hub's catalog (no widgets): ``candidates`` says what to list for the
text and cursor, and ``Candidate.apply`` what the text becomes when one is chosen.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from mcp_chat_tui.agent.memory_window import COMPACT_COMMAND
from mcp_chat_tui.core.attachments import size_text
from mcp_chat_tui.core.local_files import LocalFile
from mcp_chat_tui.servers import PromptInfo, ResourceInfo

MAX_CANDIDATES = 50
_AT_TOKEN = re.compile(r"(?:^|(?<=\s))@(\S*)$")


@dataclass(frozen=True)
class AppCommand:
    """A command of the app itself, not a server's prompt (``/compact``, ``/roots``)."""

    command: str
    description: str
    server: str = "app"  # what the list shows where a prompt shows its server


APP_COMMANDS = (  # every command the app itself answers (ui/turns.py ``TurnQueue.send``)
    AppCommand(COMPACT_COMMAND, "summarise every exchange but the last now"),
    AppCommand("/retry", "discard the last reply and ask the model again (Ctrl+R); calls that ran are not undone"),
    AppCommand(
        "/call",
        "call a tool yourself: /call server:tool key=value (no approval; the result goes with your next message)",
    ),
    AppCommand("/model", "switch the model: /model lists the models this machine has, /model NAME switches to one"),
    AppCommand("/roots", "list the folders servers may work in; /roots add PATH, /roots remove PATH"),
)


@dataclass(frozen=True)
class Candidate:
    """One entry of the completion list: a prompt or a resource, and the text it replaces."""

    item: PromptInfo | ResourceInfo | AppCommand | LocalFile
    start: int  # where the replaced text begins in the prompt box (its ``/`` or ``@``)
    end: int

    @property
    def name(self) -> str:
        if isinstance(self.item, (PromptInfo, AppCommand)):
            return self.item.command
        if isinstance(self.item, LocalFile):
            return "@" + self.item.shown
        return "@" + self.item.name

    @property
    def source(self) -> str:
        """Where it comes from: its server, "app" for the app's commands, "disk" for a file."""
        return "disk" if isinstance(self.item, LocalFile) else self.item.server

    @property
    def detail(self) -> str:
        item = self.item
        if isinstance(item, AppCommand):
            return item.description
        if isinstance(item, PromptInfo):
            return item.description or item.title
        if isinstance(item, LocalFile):
            return "folder" if item.folder else f"file · {size_text(item.size)}"
        where = item.template or item.uri
        return " · ".join(part for part in (where, item.mime_type, item.description) if part)

    def is_typed_in_full(self, text: str) -> bool:
        """Whether ``text`` already holds this candidate whole and choosing it would add nothing: an
        app command, or a prompt that takes no arguments (one that does opens its form when chosen)."""
        item = self.item
        needs_nothing = isinstance(item, AppCommand) or (isinstance(item, PromptInfo) and not item.arguments)
        return needs_nothing and text[self.start : self.end] == self.name

    def apply(self, text: str) -> tuple[str, int]:
        """The prompt box's text with this candidate chosen, and where the cursor goes (a folder: on
        into it, no space after)."""
        inserted = self.name + ("" if isinstance(self.item, LocalFile) and self.item.folder else " ")
        return text[: self.start] + inserted + text[self.end :], self.start + len(inserted)


def candidates(
    text: str,
    cursor: int,
    prompts: list[PromptInfo],
    resources: list[ResourceInfo],
    files: Callable[[str], list[LocalFile]] | None = None,
) -> list[Candidate]:
    """The prompts matching a ``/`` command being typed (the whole box, before its first space), then
    the app's own commands, the one typed whole first; or the resources and templates matching the
    ``@`` word at the cursor, then the files and folders (``files(typed)``) it may be a path of."""
    before = text[:cursor]
    if before.startswith("/") and " " not in before:
        typed = before[1:].lower()
        matching = [p for p in prompts if typed in p.command[1:].lower()]
        matching.sort(key=lambda p: not p.command[1:].lower().startswith(typed) and not p.name.startswith(typed))
        commands = [c for c in APP_COMMANDS if typed in c.command[1:]]
        end = _word_end(text, 0)
        both: list[PromptInfo | AppCommand] = [*matching, *commands]
        listed = sorted(both, key=lambda item: item.command != text[:end])  # Enter sends it
        return [Candidate(item, 0, end) for item in listed[:MAX_CANDIDATES]]
    match = _AT_TOKEN.search(before)
    if match is None:
        return []
    typed = match.group(1).lower()
    start = match.start(0) if not before[match.start(0)].isspace() else match.start(0) + 1
    found: list[ResourceInfo | LocalFile] = [
        r for r in resources if typed in r.name.lower() or typed in (r.uri or r.template).lower()
    ]
    if files is not None:
        found += files(match.group(1))
    return [Candidate(item, start, _word_end(text, start)) for item in found[:MAX_CANDIDATES]]


def starts_at_word(text: str, cursor: int) -> bool:
    """Whether an ``@`` word was just begun at the cursor (the ``@`` alone, at the start or after a space)."""
    match = _AT_TOKEN.search(text[:cursor])
    return match is not None and match.group(1) == ""


def _word_end(text: str, start: int) -> int:
    space = text.find(" ", start)
    return len(text) if space < 0 else space
