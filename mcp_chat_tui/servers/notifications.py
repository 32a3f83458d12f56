"""What a server tells the client while it runs: log messages and instructions (a call's progress: core/progress.py).

Plain data kept on each ``ServerStatus`` (and on each call's result), redacted by the hub before it
is stored; nothing here imports the SDK's client or the UI.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
LOG_LEVELS: tuple[LogLevel, ...] = get_args(LogLevel)
DEFAULT_LOG_LEVEL: LogLevel = "info"
WARNING_RANK = LOG_LEVELS.index("warning")
LOG_LINES_KEPT = 500  # per server: a flooding server replaces its oldest lines, memory stays bounded
LOG_TEXT_CHARS = 2_000  # one message's text is cut to this
INSTRUCTIONS_CHARS = 2_000  # each server's instructions in the system prompt are cut to this


def level_rank(level: str) -> int:
    """Where ``level`` stands among the syslog levels (an unknown level counts as ``info``)."""
    return LOG_LEVELS.index(level) if level in LOG_LEVELS else LOG_LEVELS.index(DEFAULT_LOG_LEVEL)


def known_level(level: str) -> LogLevel:
    """``level`` if it is one of the syslog levels, else ``info``."""
    return LOG_LEVELS[level_rank(level)]


def next_level(level: str, step: int) -> LogLevel:
    """The level ``step`` places above (positive) or below ``level``, kept within the list."""
    return LOG_LEVELS[max(0, min(len(LOG_LEVELS) - 1, level_rank(level) + step))]


@dataclass(frozen=True)
class LogEntry:
    """One ``notifications/message``: when it came, its level, its logger and its text."""

    time: datetime
    level: str
    logger: str
    text: str

    @property
    def at_least_warning(self) -> bool:
        return level_rank(self.level) >= WARNING_RANK

    def line(self, time: str | None = None) -> str:
        """``12:00:01 warning [logger] text`` (``time`` written by the caller's clock, when given)."""
        logger = f" [{self.logger}]" if self.logger else ""
        return f"{time or f'{self.time:%H:%M:%S}'} {self.level}{logger} {self.text}"


def log_text(data: Any) -> str:
    """A log message's ``data`` (any JSON value) as one text, cut to ``LOG_TEXT_CHARS``."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    return text if len(text) <= LOG_TEXT_CHARS else text[:LOG_TEXT_CHARS] + "…"


@dataclass
class ServerLog:
    """A server's log messages: the last ``LOG_LINES_KEPT`` kept, every one counted by level."""

    entries: deque[LogEntry] = field(default_factory=lambda: deque(maxlen=LOG_LINES_KEPT))
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, entry: LogEntry) -> None:
        self.entries.append(entry)
        self.counts[entry.level] = self.counts.get(entry.level, 0) + 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def problems(self) -> int:
        """How many messages were warnings or worse."""
        return sum(count for level, count in self.counts.items() if level_rank(level) >= WARNING_RANK)

    def summary(self) -> str:
        """``3 log · 1 warning+`` for the server panel ("" before any message)."""
        if not self.total:
            return ""
        problems = f" · {self.problems}⚠" if self.problems else ""
        return f"{self.total} log{problems}"


def instructions_prompt(instructions: list[tuple[str, str]]) -> str:
    """The system prompt's part for the servers' instructions: each under its server's name, each
    cut to ``INSTRUCTIONS_CHARS`` ("" when no server gave any)."""
    parts = []
    for server, text in instructions:
        text = text.strip()
        if not text:
            continue
        if len(text) > INSTRUCTIONS_CHARS:
            text = text[:INSTRUCTIONS_CHARS] + f"… [cut at {INSTRUCTIONS_CHARS} characters]"
        parts.append(f"## {server}\n{text}")
    if not parts:
        return ""
    return "Instructions from the MCP servers whose tools you can call:\n\n" + "\n\n".join(parts)
