"""A scripted engine for agent and UI tests: replies are given up front, prompts are recorded.

It implements the real ``Engine`` interface; only the model is scripted.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator

from mcp_chat_tui.engine.events import Done, Stats, TextDelta, ToolCallMalformed, ToolCallProposed


def call(name: str, arguments: dict, call_id: str = "call_1") -> ToolCallProposed:
    return ToolCallProposed(call_id, name, arguments)


class ScriptedEngine:
    """Each ``stream`` plays the next scripted reply: a list of events or a plain string."""

    def __init__(self, replies: list, *, supports_tools: bool = True, delay: float = 0.0) -> None:
        self.model_name = "scripted"
        self.supports_tools = supports_tools
        self.replies = list(replies)
        self.delay = delay
        self.prompts: list[list[dict]] = []
        self.tools_sent: list[list[dict] | None] = []
        self.closed_streams = 0

    async def load(self, on_progress=None) -> None:
        return None

    async def close(self) -> None:
        return None

    async def stream(self, messages, tools=None, *, known_tools=None) -> AsyncIterator:
        self.prompts.append(copy.deepcopy(messages))
        self.tools_sent.append(tools)
        reply = self.replies.pop(0) if self.replies else "(no more script)"
        events = [TextDelta(piece) for piece in _words(reply)] if isinstance(reply, str) else list(reply)
        calls = 0
        try:
            for event in events:
                if self.delay:
                    await asyncio.sleep(self.delay)
                if isinstance(event, ToolCallProposed) and known_tools is not None and event.name not in known_tools:
                    event = ToolCallMalformed(event.id, event.name, f"unknown tool {event.name!r}")
                calls += isinstance(event, ToolCallProposed)
                yield event
            yield Stats(10, 10, len(events), 0.01, 100.0, 0.0)
            yield Done("tool_calls" if calls else "stop")
        finally:
            self.closed_streams += 1


def _words(text: str) -> list[str]:
    pieces = text.split(" ")
    return [piece + (" " if index < len(pieces) - 1 else "") for index, piece in enumerate(pieces)]
