"""What the hub knows about each server, as plain data observers can read without touching the hub."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from pathlib import Path

from mcp_chat_tui.core.text import counted
from mcp_chat_tui.core.tools import ToolSpec
from mcp_chat_tui.servers.catalog_items import PromptInfo, ResourceInfo
from mcp_chat_tui.servers.listing import RefusedTool
from mcp_chat_tui.servers.notifications import DEFAULT_LOG_LEVEL, ServerLog

STDERR_TAIL_LINES = 200
PROTOCOL_PROBLEMS_KEPT = 20


class ServerState(str, Enum):
    STARTING = "starting"
    READY = "ready"
    BUSY = "busy"
    FAILED = "failed"
    CRASHED = "crashed"
    STOPPED = "stopped"
    DISABLED = "disabled"
    NEEDS_SIGN_IN = "needs sign-in"  # an HTTP server whose OAuth sign-in waits for the user

    @property
    def usable(self) -> bool:
        """Whether tools of a server in this state can be called."""
        return self in (ServerState.READY, ServerState.BUSY)


@dataclass
class ToolUsage:
    """How often one tool was called and how long the calls took (document 004's usage analytics)."""

    calls: int = 0
    errors: int = 0
    total_seconds: float = 0.0

    @property
    def mean_seconds(self) -> float | None:
        return self.total_seconds / self.calls if self.calls else None


@dataclass
class ServerStatus:
    """One server's state and history, kept by the hub and handed to observers."""

    name: str
    transport: str
    state: ServerState = ServerState.STARTING
    reason: str = ""
    server_name: str = ""
    server_version: str = ""
    protocol_version: str = ""
    capabilities: list[str] = field(default_factory=list)
    instructions: str = ""
    tools: list[ToolSpec] = field(default_factory=list)
    not_offered_tools: list[ToolSpec] = field(default_factory=list)  # left out by mcp.json or config.toml
    refused_tools: list[RefusedTool] = field(default_factory=list)
    unsupported_tools: list[RefusedTool] = field(default_factory=list)  # valid, but this client cannot call them
    protocol_problems: deque[str] = field(default_factory=lambda: deque(maxlen=PROTOCOL_PROBLEMS_KEPT))
    protocol_problem_count: int = 0  # what the server broke of the protocol in calls (the last few are kept)
    tool_pages_read: int = 0
    tool_pages_unread: bool = False  # the list had more pages than the hub reads
    stderr_tail: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_TAIL_LINES))
    log_path: Path | None = None
    started_at: datetime | None = None
    start_seconds: float | None = None
    calls_in_flight: int = 0
    call_count: int = 0
    last_latency: float | None = None
    total_latency: float = 0.0
    usage: dict[str, ToolUsage] = field(default_factory=dict)
    restarts: int = 0
    prompts: list[PromptInfo] = field(default_factory=list)
    resources: list[ResourceInfo] = field(default_factory=list)
    resource_templates: list[ResourceInfo] = field(default_factory=list)
    catalog_problems: list[str] = field(default_factory=list)  # lists that failed, like refused tools
    subscribed: dict[str, int] = field(default_factory=dict)  # resource URIs whose updates it hears: holders
    resource_updates: dict[str, int] = field(default_factory=dict)  # URI -> updates heard
    samples_asked: int = 0  # sampling requests of this server, those over the rate limit included
    samples_refused: int = 0  # refused for the rate limit
    sampling_per_minute: int = 10  # the rate limit (config.toml ``sampling_per_minute``)

    def sampling_note(self) -> str:
        """The server's sampling so far, for the server panel ("" when it never asked)."""
        if not self.samples_asked:
            return ""
        refused = f", {self.samples_refused} over the limit" if self.samples_refused else ""
        return f"sampled {self.samples_asked}× (limit {self.sampling_per_minute}/min{refused})"

    def starting_for(self) -> float:
        """Seconds since its start began (0 before any start)."""
        return (datetime.now() - self.started_at).total_seconds() if self.started_at is not None else 0.0

    def last_stderr_line(self) -> str:
        """What it last printed on stderr ("" for nothing): npm's progress, an import, an error."""
        return next((line for line in reversed(self.stderr_tail) if line.strip()), "")

    log: ServerLog = field(default_factory=ServerLog)  # its notifications/message, bounded
    log_level: str = DEFAULT_LOG_LEVEL  # the least level it is asked to send

    def summary(self) -> str:
        """One line for logs and plain output: state and, when it failed, why."""
        text = f"{self.name}: {self.state.value}"
        return f"{text} ({self.reason})" if self.reason else text


def tool_list_notes(status: ServerStatus) -> str:
    """What was wrong with a server's tool list: each refused tool with why, and whether the
    list was cut short, in one paragraph ("" when nothing was)."""
    notes = []
    if status.refused_tools:
        reasons = "; ".join(refused.describe() for refused in status.refused_tools)
        notes.append(f"refused {counted(len(status.refused_tools), 'invalid tool')}: {reasons}")
    if status.unsupported_tools:
        reasons = "; ".join(tool.describe() for tool in status.unsupported_tools)
        notes.append(f"{counted(len(status.unsupported_tools), 'tool')} not supported: {reasons}")
    if status.tool_pages_unread:
        notes.append(f"its tool list has more than {status.tool_pages_read} pages: only those were read")
    notes += status.catalog_problems  # its prompt and resource lists, reported the same way
    return "\n".join(notes)


def protocol_notes(status: ServerStatus) -> str:
    """How often the server broke the protocol in a call, and the last time how ("" when never)."""
    if not status.protocol_problem_count:
        return ""
    last = status.protocol_problems[-1] if status.protocol_problems else ""
    return f"{counted(status.protocol_problem_count, 'protocol problem')} in calls; the last: {last}"
