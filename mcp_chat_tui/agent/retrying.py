"""``/retry``: the last reply leaves the conversation and the model is asked its prompt again.

What the discarded reply did to the world stays done (calls that ran are not undone); what it did to
the context goes: its text, its calls and their results leave the messages the model is sent, and the
"always" the user gave in its dialogs (this session's, not one saved in config.toml) is taken back,
so a call of the new reply asks again. A sampled reply is asked again with another seed.
"""

from __future__ import annotations

from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from mcp_chat_tui.agent.approval import ApprovalPolicy
from mcp_chat_tui.agent.events import AgentSink, Notice, TurnEnd, TurnStarted
from mcp_chat_tui.agent.turn import TurnState
from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.core.tools import ToolSpec
from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.engine.generation import ReplyOverrides, retry_seed

NOTHING_TO_RETRY = "nothing to retry: the model has not replied yet"
RETRY_LINE = "↻ the last reply is discarded (calls that ran are not undone); asking the model again"
GREEDY_RETRY = (
    "temperature 0 (greedy): the same prompt likely gives the same reply; set temperature in [model] "
    "(or --temp) to sample another"
)
RETRY_BUSY = "/retry asks again once the reply under way has ended (Esc stops it)"


class Retrying:
    """The agent's part that discards the last reply and asks again (uses its turns and ``_supervise``)."""

    engine: Engine
    policy: ApprovalPolicy
    redactor: Redactor
    turns: list[list[dict[str, Any]]]
    turn_grants: list[ToolSpec]
    reply_overrides: ReplyOverrides | None
    retries = 0  # replies asked again in this run: each retry's seed is another

    if TYPE_CHECKING:

        @property
        def busy(self) -> bool: ...

        @property
        def summarising(self) -> bool: ...

        async def _supervise(
            self, state: TurnState, sink: AgentSink, work: Coroutine[Any, Any, TurnEnd]
        ) -> TurnEnd: ...  # loop.py

        async def _turn(self, state: TurnState, sink: AgentSink, *, resume: bool = False) -> TurnEnd: ...

    def retry_problem(self) -> str | None:
        """Why ``/retry`` cannot run now (None: it can)."""
        if self.busy or self.summarising:
            return RETRY_BUSY
        if not self.turns or not self.turns[-1] or self.turns[-1][0].get("role") != "user":
            return NOTHING_TO_RETRY
        return None

    async def retry_turn(self, sink: AgentSink, prompt: str, attachments: Sequence[Attachment] = ()) -> TurnEnd:
        """Discard the last turn's reply and run the turn again from its prompt (``prompt`` and
        ``attachments``: how it was shown, for the sink); check ``retry_problem`` first."""
        question = self.turns[-1][0]
        self.turns[-1] = [question]
        for spec in self.turn_grants:
            self.policy.withdraw(spec)
        self.retries += 1
        seed = retry_seed(self.engine.generation, self.retries)
        self.reply_overrides = ReplyOverrides(seed=seed) if seed is not None else None
        sink(TurnStarted(self.redactor.text(prompt), tuple(attachments), retried=True, seed=seed))
        if seed is None and self.engine.generation is not None:
            sink(Notice(GREEDY_RETRY))
        state = TurnState(self.redactor, self.turns[-1])
        try:
            return await self._supervise(state, sink, self._turn(state, sink))
        finally:
            self.reply_overrides = None
