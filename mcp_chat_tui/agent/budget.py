"""The context budget: how much of the model's context a tool result may take, and the cut when it is more.

A result may take half of the context still free when it is added: the context length less the
prompt and reply the engine last reported and the results added since. It never gets less than
``RESULT_FLOOR`` tokens (a result cut to nothing helps nobody; a prompt that then cannot fit is
refused by the engine with the figures). Tokens are counted with the engine's tokenizer where it
has one (``count_tokens``), else estimated (``engine/context.py``: characters / 4). Only the
model's copy is cut: the transcript, the card and the detail screen keep the whole result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp_chat_tui.agent.events import AgentSink, GenerationStats, PlannedCall, ResultCut
from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.engine.context import estimate_tokens
from mcp_chat_tui.engine.events import Stats

RESULT_FLOOR = 256  # tokens a result may always take, however full the context is
NEAR_LIMIT = 0.8  # the share of the context used from which the status bar warns
LINE_BREAK_SLACK = 0.25  # a cut moves back to the last line break when that keeps 3/4 of the text
_FIT_ROUNDS = 8  # tries at finding the longest start of a text that fits (each counts it once)

Count = Callable[[str], int]


@dataclass(frozen=True)
class Cut:
    """A result cut for the model: ``text`` (its start and the note) and the figures."""

    text: str
    kept_tokens: int
    total_tokens: int


def cut_label(kept_tokens: int, total_tokens: int) -> str:
    """What the card and the detail screen say: ``cut for the model: 1.2k of 50k tokens``."""
    return f"cut for the model: {short_count(kept_tokens)} of {short_count(total_tokens)} tokens"


def result_share(context_length: int, used: int) -> int:
    """The most tokens the next result may take: half of what is free, at least ``RESULT_FLOOR``."""
    return max(RESULT_FLOOR, (context_length - used) // 2)


def cut_to_share(text: str, share: int, count: Count) -> Cut | None:
    """``text`` cut to ``share`` tokens, note included; None when it fits whole."""
    total = count(text)
    if total <= share:
        return None
    room = max(share - count(cut_note(len(text), total, len(text), total)), 0)
    kept = _longest_start(text, total, room, count)
    kept_tokens = count(kept)
    return Cut(kept + cut_note(len(kept), kept_tokens, len(text), total), kept_tokens, total)


def cut_note(kept_chars: int, kept_tokens: int, total_chars: int, total_tokens: int) -> str:
    """The note after a cut result: how much the model sees, how much was left out, and how to get the rest."""
    return (
        f"\n\n[cut to fit the model's context: this is the first {kept_tokens:,} of {total_tokens:,} tokens "
        f"({kept_chars:,} of {total_chars:,} characters); {total_tokens - kept_tokens:,} tokens were left out. "
        "To read the rest, call the tool again for a smaller part: its own paging or range arguments "
        "(offset, page, cursor, lines) if it has them, else narrower arguments.]"
    )


def _longest_start(text: str, total: int, room: int, count: Count) -> str:
    """About the longest start of ``text`` that is at most ``room`` tokens (ending at a line break when
    one is near)."""
    end = len(text) * room // total
    for _ in range(_FIT_ROUNDS):
        tokens = count(text[:end])
        if tokens <= room or end == 0:
            break
        end = min(end - 1, end * room // tokens)
    else:
        end = len(text) * room // (total * 2)  # still over: half the proportion, which fits any sane tokenizer
    kept = text[:end]
    line_break = kept.rfind("\n")
    if line_break >= end * (1 - LINE_BREAK_SLACK):
        kept = kept[:line_break]
    return kept


def short_count(tokens: int) -> str:
    """A token count in a few characters: 950, 1.2k, 12k, 1.5M."""
    if tokens < 1000:
        return str(tokens)
    for size, unit in ((1_000_000, "M"), (1000, "k")):
        if tokens >= size:
            value = tokens / size
            return f"{value:.1f}".removesuffix(".0") + unit if value < 10 else f"{value:.0f}{unit}"
    return str(tokens)


def usage_label(used: int, context_length: int | None) -> str:
    """``1.2k/4.1k tokens`` (``1.2k tokens`` when the context length is not known)."""
    if context_length is None:
        return f"{short_count(used)} tokens"
    return f"{short_count(used)}/{short_count(context_length)} tokens"


def near_limit(used: int, context_length: int | None) -> bool:
    return context_length is not None and used >= context_length * NEAR_LIMIT


class ContextBudget:
    """The agent's part that keeps tool results within the context (uses its ``engine`` and ``prompt_messages``)."""

    engine: Engine
    _context_used: int | None  # the prompt's tokens so far: the last reply's figures, then results

    def prompt_messages(self) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _report_stats(self, stats: Stats, sink: AgentSink) -> None:
        """A reply's figures, with the context length; they tell the budget how full the context is."""
        report = GenerationStats(stats, getattr(self.engine, "context_length", None))
        self._context_used = report.context_used
        sink(report)

    def _within_budget(self, call: PlannedCall, content: str, sink: AgentSink) -> str:
        """``content`` as the model gets it: cut to its share of the context (``agent/budget.py``) when
        longer, with a note, reported as ``ResultCut``; whole when the context length is not known."""
        context_length = getattr(self.engine, "context_length", None)
        if context_length is None:
            return content
        count = getattr(self.engine, "count_tokens", estimate_tokens)
        if self._context_used is None:  # no reply yet in this run (a resumed turn): count the prompt
            self._context_used = sum(count(str(message.get("content") or "")) for message in self.prompt_messages())
        cut = cut_to_share(content, result_share(context_length, self._context_used), count)
        if cut is not None:
            sink(ResultCut(call, cut.kept_tokens, cut.total_tokens))
            content = cut.text
        self._context_used += count(content)
        return content
