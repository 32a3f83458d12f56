"""What a tool is and what calling it gave, shared by the hub, the agent, the UI and transcripts.

A tool is addressed as (server, tool). ``exposed_name`` is the name the model sees:
the tool's own name, ``server__tool`` when two servers expose the same name, or a
cleaned name with a short hash when the tool's own name is one model APIs refuse.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import Enum
from typing import Any

from mcp_chat_tui.core.content import ContentPart
from mcp_chat_tui.core.progress import ToolProgress
from mcp_chat_tui.core.tasks import TaskState

# The server name the app's own tools (the built-in resource tools) appear under. mcp.json
# cannot name a server so: config/mcp_json.py refuses it.
BUILTIN_SERVER = "(app)"

_MODEL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_NAME_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True)
class CutForModel:
    """How a result was cut for the model: its first ``kept_chars`` characters (``kept_tokens``
    tokens) of ``total_tokens``, then a note (agent/budget.py); the transcript keeps these figures so
    a resumed conversation sends the model the same text again."""

    kept_chars: int
    kept_tokens: int
    total_tokens: int

    def to_json(self) -> dict[str, int]:
        return {"kept_chars": self.kept_chars, "kept_tokens": self.kept_tokens, "total_tokens": self.total_tokens}

    @classmethod
    def from_json(cls, value: object, content_chars: int) -> CutForModel | None:
        """The figures a file holds for a result of ``content_chars`` characters; None when they are
        missing or make no sense (the budget then decides again)."""
        if not isinstance(value, dict):
            return None
        figures = [value.get(key) for key in ("kept_chars", "kept_tokens", "total_tokens")]
        counts = [f for f in figures if isinstance(f, int) and not isinstance(f, bool) and f >= 0]
        if len(counts) != len(figures):
            return None
        kept_chars, kept_tokens, total_tokens = counts
        if kept_chars > content_chars or kept_tokens > total_tokens:
            return None
        return cls(kept_chars, kept_tokens, total_tokens)


@dataclass(frozen=True)
class ToolSpec:
    """One tool of one server, as listed by ``tools/list``."""

    server: str
    name: str
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    annotations: dict[str, Any] = field(default_factory=dict)
    title: str | None = None
    exposed_name: str = ""
    task_support: str = ""  # "required" or "optional" when its server runs it as a task (servers/tasks.py)

    @property
    def model_name(self) -> str:
        """The name the model calls this tool by."""
        return self.exposed_name or self.name

    @property
    def shown_title(self) -> str:
        """The title a person reads for the tool ("" when it has none, or it is only the name again)."""
        title = self.title or ""
        return title if title.casefold() != self.name.casefold() else ""

    @property
    def read_only(self) -> bool:
        return bool(self.annotations.get("readOnlyHint", False))

    @property
    def destructive(self) -> bool:
        # The MCP default for destructiveHint is true, but only for tools that are not read-only
        # and that state nothing: we show the warning only when the server says so.
        return bool(self.annotations.get("destructiveHint", False)) and not self.read_only

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI chat-completions function-tool format (also what chat templates take)."""
        return {
            "type": "function",
            "function": {
                "name": self.model_name,
                "description": self.description,
                "parameters": self.input_schema,
            },
        }


def unique_model_names(specs: list[ToolSpec]) -> list[ToolSpec]:
    """Give every tool a name model APIs accept (``^[a-zA-Z0-9_-]{1,64}$``) that no other tool has.

    A valid name only one server exposes stays as it is; a valid name two or more
    servers expose becomes ``server__tool`` for each of them. Any other name (markup,
    spaces, dots, non-ASCII, too long, nothing left after cleaning) becomes its cleaned
    form plus a short hash of (server, tool): the same tools get the same names in every
    run, whatever their order, and a cleaned name never stands for another tool after
    the tool set changes (a resumed conversation maps back or finds nothing).
    """
    counts: dict[str, int] = {}
    for spec in specs:
        counts[spec.name] = counts.get(spec.name, 0) + 1
    kept_as_is = {spec.name for spec in specs if counts[spec.name] == 1 and _MODEL_NAME.fullmatch(spec.name)}
    taken: set[str] = set(kept_as_is)
    renamed: list[ToolSpec] = []
    for spec in specs:
        if spec.name in kept_as_is:
            exposed = spec.name
        else:
            exposed = _prefixed_or_hashed(spec, taken)
            n = 2
            while exposed in taken:  # only if a hash collides: never in practice, still never a duplicate
                exposed = f"{exposed[:60]}_{n}"
                n += 1
            taken.add(exposed)
        renamed.append(replace(spec, exposed_name=exposed))
    return renamed


def _prefixed_or_hashed(spec: ToolSpec, taken: set[str]) -> str:
    """``server__tool`` for a valid name several servers share (when that is valid and free),
    else the cleaned name with a hash of (server, tool)."""
    if _MODEL_NAME.fullmatch(spec.name):
        prefixed = f"{spec.server}__{spec.name}"
        if _MODEL_NAME.fullmatch(prefixed) and prefixed not in taken:
            return prefixed
        base = f"{spec.server}__{spec.name}"
    else:
        base = spec.name
    digest = hashlib.sha256(f"{spec.server}\0{spec.name}".encode()).hexdigest()[:8]
    cleaned = _clean_name(base)[: 64 - len(digest) - 1] or "tool"
    return f"{cleaned}_{digest}"


def _clean_name(name: str) -> str:
    """Letters without accents, digits, ``_`` and ``-``; every other run of characters becomes one ``_``."""
    decomposed = unicodedata.normalize("NFKD", name)
    ascii_only = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _NAME_UNSAFE_RUN.sub("_", ascii_only).strip("_")


class FailureKind(str, Enum):
    """Why a call produced no result from the tool itself."""

    TIMEOUT = "timeout"
    CRASHED = "crashed"
    NOT_READY = "not_ready"
    PROTOCOL_ERROR = "protocol_error"
    REFUSED = "refused"  # the call ended because the client (the user, or a policy) refused what its server asked
    UNKNOWN_TOOL = "unknown_tool"
    TASK_LOST = "task_lost"  # a resumed call's task is no longer known to its server (or the server is not running)
    NEEDS_SIGN_IN = "needs_sign_in"  # its server needs a person to sign in (again, or with more access)


@dataclass(frozen=True)
class ToolFailure:
    kind: FailureKind
    message: str


@dataclass
class ToolCallResult:
    """The outcome of one tool call: the tool's own result, or a failure that kept it from giving one.

    ``text`` joins the text of every content block meant for the model (non-text blocks
    are described in one line); it is cut at the hub's result limit and ``truncated`` says so,
    with ``full_size`` the size in characters before the cut. ``parts`` keeps every block for
    the screen (annotations, images and audio, text meant only for the user).
    """

    server: str
    tool: str
    arguments: dict[str, Any]
    started_at: datetime
    duration: float
    text: str = ""
    structured: dict[str, Any] | None = None
    is_error: bool = False
    failure: ToolFailure | None = None
    truncated: bool = False
    full_size: int = 0
    parts: list[ContentPart] = field(default_factory=list)
    progress: ToolProgress | None = None  # the last progress the server reported for the call
    task: TaskState | None = None  # the task it ran as, when it ran as one

    @property
    def ok(self) -> bool:
        return self.failure is None and not self.is_error

    def for_model(self) -> str:
        """What the model is told in the ``tool`` message."""
        if self.failure is not None:
            return f"Error ({self.failure.kind.value}): {self.failure.message}"
        body = self.text
        if not body and self.structured is not None:
            body = json.dumps(self.structured, ensure_ascii=False)
        if self.truncated:
            body += f"\n[result cut: {self.full_size} characters in all]"
        return f"Error: {body}" if self.is_error else body
