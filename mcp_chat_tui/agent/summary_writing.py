"""How the agent has the model write the summaries of the turns that leave the window, between turns.

Mixed into ``Agent`` (``agent/loop.py``); which turns are due and how one summary is asked for:
``agent/memory_window.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_chat_tui.agent.events import AgentSink, SummariesEnded, SummaryFailed, SummaryStarted, SummaryWritten
from mcp_chat_tui.agent.memory_window import Memory, SummaryError, write_summary
from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.engine.events import EngineError


class Summarising:
    """The agent's part that writes summaries (uses its ``engine``, ``turns``, ``memory`` and ``redactor``)."""

    engine: Engine
    turns: list[list[dict[str, Any]]]
    memory: Memory
    redactor: Redactor
    _summarising: asyncio.Task[None] | None

    @property
    def busy(self) -> bool:
        """A turn is running (the agent's own answer)."""
        raise NotImplementedError

    @property
    def max_turns(self) -> int:
        return self.memory.max_turns

    @max_turns.setter
    def max_turns(self, value: int) -> None:
        self.memory.max_turns = value

    @property
    def summarised_count(self) -> int:
        """How many of the oldest turns the prompt sends as their summary."""
        self.memory.fit(len(self.turns))
        return self.memory.summarised(len(self.turns))

    @property
    def summaries_in_use(self) -> int:
        """How many of the oldest turns the next prompt sends as their summary (for the status bar)."""
        self.memory.fit(len(self.turns))
        return self.memory.summarised(len(self.turns) + 1)

    @property
    def summaries_due(self) -> bool:
        """Whether a turn leaves the window, at the next prompt, without a summary (``write_summaries``)."""
        self.memory.fit(len(self.turns))
        return bool(self.memory.due(len(self.turns) + 1))

    @property
    def summarising(self) -> bool:
        return self._summarising is not None and not self._summarising.done()

    async def write_summaries(self, sink: AgentSink, *, compact: bool = False) -> None:
        """Have the model summarise, oldest first, each turn without a summary that leaves the window
        when the next prompt is added (``compact``: every turn but the last). Between turns only;
        ``stop()`` ends it; the first failure ends it too (that turn stays in full)."""
        if self.busy or self.summarising:
            return
        count = len(self.turns)
        self.memory.fit(count)
        due = self.memory.due_compacting(count) if compact else self.memory.due(count + 1)
        if not due:
            return
        task = self._summarising = asyncio.ensure_future(self._summarise(due, sink))
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if not task.cancelled():
                task.cancel()  # our caller was cancelled: stop the work too
                await asyncio.wait({task})
                sink(SummariesEnded(self.summaries_in_use, stopped=True))
                raise
            sink(SummariesEnded(self.summaries_in_use, stopped=True))
        else:
            sink(SummariesEnded(self.summaries_in_use))
        finally:
            self._summarising = None

    async def _summarise(self, due: list[int], sink: AgentSink) -> None:
        turns = self.turns
        for number, index in enumerate(due, 1):
            sink(SummaryStarted(index, number, len(due)))
            try:
                summary = self.redactor.text(await write_summary(self.engine, turns[index]))
            except (EngineError, SummaryError) as exc:
                sink(SummaryFailed(index, self.redactor.text(str(exc) or type(exc).__name__)))
                return
            summaries = self.memory.summaries
            if self.turns is not turns or index >= len(summaries) or summaries[index] is not None:
                return  # the conversation was replaced meanwhile
            summaries[index] = summary
            sink(SummaryWritten(index, summary))
