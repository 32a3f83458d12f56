"""The engine layer: chat messages and tool schemas in, a stream of typed events out.

``MlxEngine`` runs a local model with mlx-lm; ``OpenAIEngine`` talks to an
OpenAI-compatible server. Both follow ``Engine`` and yield the events in ``events``.
The engines are imported on first use, so importing this package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.engine.events import (
    Done,
    EngineError,
    EngineEvent,
    LoadProgress,
    Stats,
    TextDelta,
    ThinkingDelta,
    ToolCallMalformed,
    ToolCallProposed,
)
from mcp_chat_tui.engine.generation import DEFAULT as DEFAULT_SOURCE
from mcp_chat_tui.engine.generation import GenerationSettings
from mcp_chat_tui.engine.toolcalls import ParsedReply, ToolCallStream, parse_tool_calls

if TYPE_CHECKING:
    from mcp_chat_tui.engine.mlx_engine import MlxEngine
    from mcp_chat_tui.engine.remote import OpenAIEngine

__all__ = [
    "DEFAULT_SOURCE",
    "Done",
    "Engine",
    "EngineError",
    "EngineEvent",
    "GenerationSettings",
    "LoadProgress",
    "MlxEngine",
    "OpenAIEngine",
    "ParsedReply",
    "Stats",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallMalformed",
    "ToolCallProposed",
    "ToolCallStream",
    "parse_tool_calls",
]


def __getattr__(name: str) -> Any:
    if name == "MlxEngine":
        from mcp_chat_tui.engine.mlx_engine import MlxEngine

        return MlxEngine
    if name == "OpenAIEngine":
        from mcp_chat_tui.engine.remote import OpenAIEngine

        return OpenAIEngine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
