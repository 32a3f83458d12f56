"""What an engine reports while it loads a model and while it generates a reply.

Every event is a frozen dataclass so the agent and the UI can pass them around
and compare them without copying. ``EngineEvent`` is what ``Engine.stream``
yields; ``LoadProgress`` only goes to the ``on_progress`` callback of ``load``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcp_chat_tui.core.errors import UserFacingError

STAGE_WORDS = {"download": "downloading", "convert": "converting GGUF", "load": "loading", "ready": "ready"}


@dataclass(frozen=True)
class TextDelta:
    """A piece of the visible reply."""

    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    """A piece of the model's reasoning (text between ``<think>`` and ``</think>``)."""

    text: str


@dataclass(frozen=True)
class ToolCallProposed:
    """The model asks to call tool ``name``; ``arguments`` is always a JSON object."""

    id: str
    name: str
    arguments: dict[str, Any] = field(hash=False)


@dataclass(frozen=True)
class ToolCallMalformed:
    """Text the model meant as a tool call but that is not a valid one; ``raw`` is that text. For a
    call of a tool that is not offered, ``nearest`` holds the offered names nearest to the one written."""

    id: str
    raw: str
    reason: str
    nearest: tuple[str, ...] = ()


@dataclass(frozen=True)
class Stats:
    """Figures for one reply; ``prefilled_tokens`` is the part of the prompt that was actually computed;
    ``drafted_tokens`` the generated tokens a draft model proposed and the model accepted.

    ``prefill_time``: seconds from the start of the reply's computation to its first token (the
    prompt's prefill); ``decode_time``: seconds from the first token to the last, in which the other
    ``generated_tokens - 1`` were decoded (0 for a reply of one token: no rate can be read from it).
    """

    prompt_tokens: int
    prefilled_tokens: int
    generated_tokens: int
    time_to_first_token: float
    tokens_per_second: float
    peak_memory_gb: float
    drafted_tokens: int = 0
    prefill_time: float = 0.0
    decode_time: float = 0.0


@dataclass(frozen=True)
class Throughput:
    """While a reply is generated (about once a second): tokens so far and the current rate."""

    generated_tokens: int
    tokens_per_second: float


@dataclass(frozen=True)
class Done:
    """The reply is over: "stop", "length", "tool_calls", "cancelled" or "stop_sequence" (a stop
    sequence the request gave ended it)."""

    finish_reason: str


@dataclass(frozen=True)
class LoadProgress:
    """Loading a model: stage "download" (bytes), "convert" (a GGUF file's bytes read into an MLX
    folder), "load" (into memory) or "ready"."""

    stage: str
    bytes_done: int
    bytes_total: int | None
    message: str = ""

    @property
    def doing(self) -> str:
        """The stage as the status bar says it: ``downloading``, ``converting GGUF``, ``loading``."""
        return STAGE_WORDS.get(self.stage, self.stage)


EngineEvent = TextDelta | ThinkingDelta | ToolCallProposed | ToolCallMalformed | Throughput | Stats | Done


class EngineError(UserFacingError):
    """The engine cannot do what was asked; the message names the model or endpoint and the reason."""
