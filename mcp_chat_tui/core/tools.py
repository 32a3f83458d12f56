"""What a tool is and what calling it gave, shared by the hub, the agent, the UI and transcripts.

A tool is addressed as (server, tool). ``exposed_name`` is the name the model sees:
the tool's own name, or ``server__tool`` when two servers expose the same name.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any

_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


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

    @property
    def model_name(self) -> str:
        """The name the model calls this tool by."""
        return self.exposed_name or self.name

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

    def to_anthropic(self) -> dict[str, Any]:
        """The Anthropic Messages tool format."""
        return {"name": self.model_name, "description": self.description, "input_schema": self.input_schema}


def unique_model_names(specs: list[ToolSpec]) -> list[ToolSpec]:
    """Give every tool a model-facing name that no other tool has.

    A name only one server exposes stays as it is; a name two or more servers
    expose becomes ``server__tool`` (characters OpenAI rejects become ``_``)
    for each of them, so the mapping back to (server, tool) is unambiguous.
    """
    counts: dict[str, int] = {}
    for spec in specs:
        counts[spec.name] = counts.get(spec.name, 0) + 1
    taken: set[str] = set()
    renamed: list[ToolSpec] = []
    for spec in specs:
        if counts[spec.name] == 1:
            exposed = spec.name
        else:
            exposed = _NAME_UNSAFE.sub("_", f"{spec.server}__{spec.name}")[:64]
        base, n = exposed, 2
        while exposed in taken:
            exposed = f"{base[:60]}_{n}"
            n += 1
        taken.add(exposed)
        renamed.append(_replace_exposed(spec, exposed))
    return renamed


def _replace_exposed(spec: ToolSpec, exposed: str) -> ToolSpec:
    from dataclasses import replace

    return replace(spec, exposed_name=exposed)


class FailureKind(str, Enum):
    """Why a call produced no result from the tool itself."""

    TIMEOUT = "timeout"
    CRASHED = "crashed"
    NOT_READY = "not_ready"
    PROTOCOL_ERROR = "protocol_error"
    UNKNOWN_TOOL = "unknown_tool"


@dataclass(frozen=True)
class ToolFailure:
    kind: FailureKind
    message: str


@dataclass
class ToolCallResult:
    """The outcome of one tool call: the tool's own result, or a failure that kept it from giving one.

    ``text`` joins the text of every content block (non-text blocks are described
    in one line); it is cut at the hub's result limit and ``truncated`` says so,
    with ``full_size`` the size in characters before the cut.
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
