"""Servers' warnings on stderr in ``--plain`` and ``-p``, at a rate a person can read.

A server may send 100,000 log messages in a few seconds; printed one by one they would cost a
minute and scroll away everything else. Each server may print a burst of ``BURST_LINES``
warnings, then ``LINES_PER_SECOND``; those past it are counted, and the count is printed before
the next warning that is, and when the server stops (at the latest when the run ends).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rich.console import Console
from rich.text import Text

from mcp_chat_tui.core.text import visible_controls
from mcp_chat_tui.servers.hub import ServerHub
from mcp_chat_tui.servers.notifications import LogEntry
from mcp_chat_tui.servers.state import ServerStatus

BURST_LINES = 50
LINES_PER_SECOND = 20


@dataclass
class _Allowance:
    lines: float = BURST_LINES
    at: float = 0.0
    held_back: int = 0


def print_warnings(hub: ServerHub, stderr: Console) -> LogPrinter:
    """Print the hub's servers' warnings on ``stderr`` from now on."""
    printer = LogPrinter(stderr)
    hub.add_log_listener(printer)
    hub.add_observer(printer.server_changed)
    return printer


class LogPrinter:
    """A hub log listener that prints each warning (or worse) on ``stderr``, after its server's
    name, within each server's allowance; what was held back is counted when the server stops."""

    def __init__(self, stderr: Console) -> None:
        self.stderr = stderr
        self._allowances: dict[str, _Allowance] = {}

    def __call__(self, server: str, entry: LogEntry) -> None:
        if not entry.at_least_warning:
            return
        allowance = self._allowances.setdefault(server, _Allowance(at=time.monotonic()))
        now = time.monotonic()
        allowance.lines = min(BURST_LINES, allowance.lines + (now - allowance.at) * LINES_PER_SECOND)
        allowance.at = now
        if allowance.lines < 1:
            allowance.held_back += 1
            return
        allowance.lines -= 1
        self._print_held_back(server, allowance)
        logger = f" [{entry.logger}]" if entry.logger else ""
        self._print(f"{server}: {entry.level}{logger}: {entry.text}")

    def server_changed(self, status: ServerStatus) -> None:
        """A hub observer: a server that stopped (or crashed) has its held-back count printed."""
        allowance = self._allowances.get(status.name)
        if allowance is not None and not status.state.usable:
            self._print_held_back(status.name, allowance)

    def _print_held_back(self, server: str, allowance: _Allowance) -> None:
        if allowance.held_back:
            self._print(
                f"{server}: {allowance.held_back:,} more {'warning' if allowance.held_back == 1 else 'warnings'} not printed (more than {LINES_PER_SECOND} a second)"
            )
            allowance.held_back = 0

    def _print(self, line: str) -> None:
        self.stderr.print(Text(visible_controls(line), style="yellow"), soft_wrap=True)
