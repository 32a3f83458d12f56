"""Globs on a tool call's string arguments, for approval rules that speak about arguments.

``read_file = { always = { path = "~/notes/**" } }`` in ``[approvals.SERVER]``: a call whose
``path`` matches runs without asking. A pattern is a glob: ``*`` and ``?`` stay inside one path
segment, ``**`` crosses segments, ``[abc]`` is a set. A pattern that starts with ``/`` or ``~`` is a
path pattern: the argument is taken as a path before it is matched (``~`` expanded, made absolute
from the working directory, ``..`` and symbolic links resolved), so ``~/notes/../.ssh/id_rsa`` or a
link under ``~/notes`` pointing elsewhere does not match ``~/notes/**``. Every key a rule names must
match (a list of patterns for one key: any of them); an argument that is missing or not a string
does not match.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    """The glob ``pattern`` as an anchored regular expression."""
    out, index = [], 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**", index):
            index += 2
            if pattern.startswith("/", index):  # "a/**/b" also matches "a/b"
                out.append("(?:.*/)?")
                index += 1
            else:
                out.append(".*")
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := pattern.find("]", index + 2)) > 0:
            body = pattern[index + 1 : end]
            out.append("[" + ("^" + re.escape(body[1:]) if body.startswith("!") else re.escape(body)) + "]")
            index = end
        else:
            out.append(re.escape(char))
        index += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def is_path_pattern(pattern: str) -> bool:
    return pattern.startswith(("/", "~"))


def normal_path(text: str) -> str:
    """``text`` as an absolute path with ``~``, ``..`` and symbolic links resolved."""
    return os.path.realpath(os.path.expanduser(text))


def _pattern_path(pattern: str) -> str:
    """A path pattern's fixed part resolved as a path (``~``, ``..``, links), its glob part kept."""
    expanded = os.path.expanduser(pattern)
    parts = expanded.split("/")
    fixed = next((i for i, part in enumerate(parts) if any(c in part for c in "*?[")), len(parts))
    head = os.path.realpath("/".join(parts[:fixed]) or "/")
    rest = "/".join(parts[fixed:])
    return head if not rest else head.rstrip("/") + "/" + rest


def matches(pattern: str, value: Any) -> bool:
    """Whether one argument ``value`` matches one glob ``pattern``."""
    if not isinstance(value, str) or "\x00" in value:
        return False
    if is_path_pattern(pattern):
        return bool(_regex(_pattern_path(pattern)).match(normal_path(value)))
    return bool(_regex(pattern).match(value))


@dataclass(frozen=True)
class ArgumentRule:
    """Patterns by argument name: a call matches when each named argument matches one of its patterns."""

    patterns: tuple[tuple[str, tuple[str, ...]], ...]

    @classmethod
    def of(cls, table: Mapping[str, str | list[str]]) -> ArgumentRule:
        return cls(tuple((key, (value,) if isinstance(value, str) else tuple(value)) for key, value in table.items()))

    def matched_by(self, arguments: Mapping[str, Any]) -> bool:
        return all(any(matches(p, arguments.get(key)) for p in options) for key, options in self.patterns)

    def describe(self) -> str:
        """The rule in the words shown beside a call: ``path ~/notes/**``."""
        return ", ".join(f"{key} {' or '.join(options)}" for key, options in self.patterns)
