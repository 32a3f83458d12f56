"""One-line summaries of the exchanges that left the memory window (Parley's ``📝:`` line).

``Memory`` says which turns the prompt sends in full and which as their summary; ``write_summary``
asks the engine for one summary, as a request of its own (no tools, never part of a user's turn).
Where the summaries go in the prompt, and why: docs/architecture.md ("Memory and summaries").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_chat_tui.core.feedback import is_app_message
from mcp_chat_tui.core.text import one_line
from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.engine.events import Done, TextDelta

SUMMARY_INSTRUCTION = (
    "Summarise the exchange the user gives you in one short line: what was asked, what tools "
    "were used and what the answer was. Write the line alone, nothing else."
)
SUMMARIES_HEADING = "Earlier in this conversation (one line per exchange, oldest first; their full text is not shown):"
COMPACT_COMMAND = "/compact"  # typed at the prompt: summarise every exchange but the last now
MAX_SUMMARY_CHARS = 240  # a summary is cut here (the model is stopped once it has written this much)
MAX_EXCHANGE_CHARS = 6000  # of an exchange's text sent to be summarised (its start and its end)
MAX_MESSAGE_CHARS = 1500  # of one message in that text


class SummaryError(Exception):
    """The model gave no usable summary; the message says what it gave."""


@dataclass
class Memory:
    """Which turns go into the prompt in full and which as their summary.

    The last ``max_turns`` turns are the window; a turn with a summary, and every turn before
    it, are outside it too (``/compact``, or a summary written by hand in the file), but the last
    turn is always sent in full. Outside the window, the leading turns that have a summary are
    sent as it; from the first one without (its summary failed or is not written yet) on, turns
    are sent in full, so the prompt stays in order and nothing is lost.
    """

    max_turns: int
    summaries: list[str | None] = field(default_factory=list)

    def fit(self, count: int) -> None:
        """One summary slot per turn (``count`` turns now)."""
        del self.summaries[count:]
        self.summaries += [None] * (count - len(self.summaries))

    def window_start(self, count: int) -> int:
        """The first turn of ``count`` sent in full, were nothing missing."""
        last = max((i for i, s in enumerate(self.summaries[:count]) if s is not None), default=-1)
        return max(0, min(max(count - self.max_turns, last + 1), count - 1))

    def summarised(self, count: int) -> int:
        """How many leading turns of ``count`` are sent as their summary."""
        start = self.window_start(count)
        return next((i for i in range(start) if self.summaries[i] is None), start)

    def due(self, count: int) -> list[int]:
        """Turns without a summary that a prompt of ``count`` turns has outside its window."""
        start = self.window_start(count)
        return [i for i in range(min(start, len(self.summaries))) if self.summaries[i] is None]

    def due_compacting(self, count: int, keep: int = 1) -> list[int]:
        """``/compact``: every turn of ``count`` but the last ``keep`` that has no summary."""
        return [i for i in range(max(0, count - keep)) if self.summaries[i] is None]


def is_compact_command(text: str) -> bool:
    return text.strip().lower() == COMPACT_COMMAND


def summaries_text(summaries: Sequence[str]) -> str:
    """The one compact text that stands for the summarised turns, oldest first."""
    return "\n".join([SUMMARIES_HEADING, *(f"- {summary}" for summary in summaries)])


def exchange_text(turn: Sequence[dict[str, Any]]) -> str:
    """A turn's messages as plain lines for the model to summarise (long messages cut in the middle)."""
    lines = []
    for message in turn:
        role = message.get("role")
        content = _text(message.get("content"))
        if role == "user":
            who = "The app" if is_app_message(message) else "User"  # what the app told the model of a bad call
            lines.append(f"{who}: {_cut(content, MAX_MESSAGE_CHARS)}")
        elif role == "assistant":
            calls = [str(call.get("function", {}).get("name", "")) for call in message.get("tool_calls") or []]
            if content:
                lines.append(f"Assistant: {_cut(content, MAX_MESSAGE_CHARS)}")
            if calls:
                lines.append(f"Assistant called: {', '.join(calls)}")
        elif role == "tool":
            lines.append(f"Result of {message.get('name', 'a tool')}: {_cut(content, MAX_MESSAGE_CHARS)}")
    return _cut("\n".join(lines), MAX_EXCHANGE_CHARS)


def summary_request(turn: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages of the engine request that summarises one turn."""
    return [
        {"role": "system", "content": SUMMARY_INSTRUCTION},
        {"role": "user", "content": exchange_text(turn)},
    ]


async def write_summary(engine: Engine, turn: Sequence[dict[str, Any]]) -> str:
    """The model's one-line summary of ``turn``: its first line, folded and cut to ``MAX_SUMMARY_CHARS``.

    Raises ``SummaryError`` when the model wrote no text, and whatever the engine raises
    (``EngineError``) when it fails.
    """
    stream = engine.stream(summary_request(turn), None, known_tools=set(), aside=True)
    written = ""
    try:
        async for event in stream:
            if isinstance(event, TextDelta):
                written += event.text
                if "\n" in written.strip() or len(written) > MAX_SUMMARY_CHARS:
                    break  # one line is all it takes: the model is stopped here
            elif isinstance(event, Done):
                break
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    first_line = written.strip().split("\n", 1)[0] if written.strip() else ""
    summary = one_line(first_line, MAX_SUMMARY_CHARS)
    if not summary:
        raise SummaryError("the model wrote no summary text")
    return summary


def _text(content: object) -> str:
    """A message's text, whether it is a string or a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]} […] {text[-half:]}"
