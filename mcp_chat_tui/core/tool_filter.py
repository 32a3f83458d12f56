"""Which of a server's tools are offered to the model at all: ``includeTools`` / ``excludeTools``
beside the server's entry in mcp.json, and ``[server_tools.NAME]`` ``include`` / ``exclude`` in
config.toml. Entries are tool names or globs (``*``, ``?``, ``[abc]``, case-sensitive); a tool is
offered when every filter offers it: named by ``include`` (when one is given) and by no ``exclude``.
A tool left out is listed in the server's panel as "not offered (config)" and never reaches the model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TypeVar

NOT_OFFERED = "not offered (config)"

T = TypeVar("T")


@dataclass(frozen=True)
class ToolFilter:
    """One source's include and exclude lists (``include`` None: every tool)."""

    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()

    @classmethod
    def of(cls, include: Iterable[str] | None, exclude: Iterable[str] = ()) -> ToolFilter:
        return cls(tuple(include) if include is not None else None, tuple(exclude))

    def offers(self, tool: str) -> bool:
        if self.include is not None and not any(fnmatchcase(tool, pattern) for pattern in self.include):
            return False
        return not any(fnmatchcase(tool, pattern) for pattern in self.exclude)


def split_offered(
    tools: Sequence[T], name_of: Callable[[T], str], filters: Iterable[ToolFilter]
) -> tuple[list[T], list[T]]:
    """``tools`` parted into those every filter offers and those one leaves out, each in order."""
    kept = list(filters)
    offered = [tool for tool in tools if all(f.offers(name_of(tool)) for f in kept)]
    left_out = [tool for tool in tools if not all(f.offers(name_of(tool)) for f in kept)]
    return offered, left_out
