"""One vocabulary for where a tool call stands: the agent's outcomes, the transcript's statuses, the
screens' states, their words and symbols, all from one table.

A value is the word written into transcripts and ``--json`` (``timeout``); ``label`` is what a
person reads (``timed out``); ``glyph`` and ``style`` (a Rich style) are how both front ends mark it.
"""

from __future__ import annotations

from enum import Enum


class CallState(str, Enum):
    PROPOSED = "proposed"  # the model proposed it; not yet asked about
    AWAITING = "awaiting approval"  # waiting for the user's yes or no
    RUNNING = "running"
    DONE = "done"
    ERROR = "error"
    TIMEOUT = "timeout"
    DENIED = "denied"
    MALFORMED = "malformed"  # the model's call could not be read; what it was told is its result
    CANCELLED = "cancelled"  # stopped by the user, or not run because the turn reached max_tool_rounds
    INTERRUPTED = "interrupted"  # started in an earlier run that ended before its result: it may or may not have run
    REPEATED = "repeated"  # not run: the same call (tool and arguments) already ran in this turn

    @property
    def finished(self) -> bool:
        """An outcome: the call has a result (or a reason it has none) and will not change again."""
        return self not in (CallState.PROPOSED, CallState.AWAITING, CallState.RUNNING)

    @property
    def label(self) -> str:
        """The words a person reads for it."""
        return _LABEL.get(self, self.value)

    @property
    def glyph(self) -> str:
        return _GLYPH_STYLE[self][0]

    @property
    def style(self) -> str:
        return _GLYPH_STYLE[self][1]


_LABEL = {CallState.TIMEOUT: "timed out"}
_GLYPH_STYLE = {
    CallState.PROPOSED: ("·", "dim"),
    CallState.AWAITING: ("?", "bold yellow"),
    CallState.RUNNING: ("▶", "cyan"),
    CallState.DONE: ("✓", "green"),
    CallState.ERROR: ("✗", "red"),
    CallState.TIMEOUT: ("⏱", "red"),
    CallState.DENIED: ("⊘", "yellow"),
    CallState.MALFORMED: ("!", "red"),
    CallState.CANCELLED: ("■", "yellow"),
    CallState.INTERRUPTED: ("↯", "bold red"),
    CallState.REPEATED: ("↻", "yellow"),
}

OUTCOMES = tuple(state for state in CallState if state.finished)  # how a call can end; a transcript's statuses
OUTCOME_WORDS = tuple(state.value for state in OUTCOMES)  # the words transcripts have always written
