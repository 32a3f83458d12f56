"""The context budget: how much of the model's context a tool result may take, and the cut when it is more.

A result may take half of the context still free when it is added: the context length less the
prompt and reply the engine last reported and the results added since. It never gets less than
``RESULT_FLOOR`` tokens (a result cut to nothing helps nobody; a prompt that then cannot fit is
refused by the engine with the figures). Tokens are counted with the engine's tokenizer where it
has one (``count_tokens``), else estimated (``engine/context.py``: characters / 4). Only the
model's copy is cut: the transcript, the card and the detail screen keep the whole result.

A resumed conversation's results follow the same rule. One the file says was cut (``CutForModel``,
recorded with each cut) is cut so again, to the character, so the model gets the text it got before
and the KV cache kept beside the file still matches the prompt. Before the model is next sent them
(``fit_loaded_results``: as soon as the context length is known), the loaded results the prompt
sends in full (the memory window, and turns whose summary is missing) are fitted in prompt order,
each to half of what the messages before it leave free (their text counted, as for the first result
of a resumed turn): a recorded cut that still fits stands, anything longer is cut now, reported and
recorded. Turns sent as their summary are left whole: the model is not sent them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp_chat_tui.agent.events import AgentSink, GenerationStats, PlannedCall, ResultCut
from mcp_chat_tui.core.tools import CutForModel
from mcp_chat_tui.engine.base import Engine
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
    kept_chars: int


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
    return Cut(kept + cut_note(len(kept), kept_tokens, len(text), total), kept_tokens, total, len(kept))


def recut(text: str, cut: CutForModel) -> str:
    """``text`` as a recorded cut gave it to the model: the same start and the same note."""
    return text[: cut.kept_chars] + cut_note(cut.kept_chars, cut.kept_tokens, len(text), cut.total_tokens)


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
    tools: Any  # the agent's ToolProvider (agent/tool_provider.py)
    turns: list[list[dict[str, Any]]]
    _context_used: int | None  # the prompt's tokens so far: the last reply's figures, then results
    _loaded_results: dict[int, tuple[dict[str, Any], str]]  # loaded tool messages not fitted yet, and their whole text

    def prompt_messages(self) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _load_results(self, cuts: Mapping[str, CutForModel]) -> None:
        """Note every loaded tool message for ``fit_loaded_results``; one ``cuts`` names is cut so again."""
        self._loaded_results = {}
        for message in (message for turn in self.turns for message in turn if message.get("role") == "tool"):
            whole = message.get("content")
            if not isinstance(whole, str):
                continue
            cut = cuts.get(str(message.get("tool_call_id", "")))
            if cut is not None and cut.kept_chars < len(whole):
                message["content"] = recut(whole, cut)
            self._loaded_results[id(message)] = (message, whole)

    def fit_loaded_results(self, sink: AgentSink) -> None:
        """Fit the loaded results the prompt sends to their share of the context (see the module's
        docstring), once the context length is known; each one cut now is reported as ``ResultCut``."""
        context_length = self.engine.context_length
        if not self._loaded_results or context_length is None:
            return
        count = self.engine.count_tokens
        loaded, self._loaded_results = self._loaded_results, {}
        used = 0
        for message in self.prompt_messages():
            if (entry := loaded.get(id(message))) is not None:
                message["content"] = self._fit_loaded(
                    message, entry[1], result_share(context_length, used), count, sink
                )
            used += count(str(message.get("content") or ""))

    def _fit_loaded(self, message: dict[str, Any], whole: str, share: int, count: Count, sink: AgentSink) -> str:
        """One loaded result as the model gets it: its recorded cut while that fits ``share``, else cut to it."""
        sent = str(message.get("content") or "")
        if sent != whole and count(sent) <= share:
            return sent
        cut = cut_to_share(whole, share, count)
        if cut is None:
            return whole
        name = str(message.get("name", ""))
        call = PlannedCall(str(message.get("tool_call_id", "")), name, {}, self.tools.find_tool(name))
        sink(ResultCut(call, cut.kept_tokens, cut.total_tokens, cut.kept_chars))
        return cut.text

    def _report_stats(self, stats: Stats, sink: AgentSink) -> None:
        """A reply's figures, with the context length; they tell the budget how full the context is."""
        report = GenerationStats(stats, self.engine.context_length)
        self._context_used = report.context_used
        sink(report)

    def _within_budget(self, call: PlannedCall, content: str, sink: AgentSink) -> str:
        """``content`` as the model gets it: cut to its share of the context (``agent/budget.py``) when
        longer, with a note, reported as ``ResultCut``; whole when the context length is not known."""
        context_length = self.engine.context_length
        if context_length is None:
            return content
        count = self.engine.count_tokens
        if self._context_used is None:  # no reply yet in this run (a resumed turn): count the prompt
            self._context_used = sum(count(str(message.get("content") or "")) for message in self.prompt_messages())
        cut = cut_to_share(content, result_share(context_length, self._context_used), count)
        if cut is not None:
            sink(ResultCut(call, cut.kept_tokens, cut.total_tokens, cut.kept_chars))
            content = cut.text
        self._context_used += count(content)
        return content
