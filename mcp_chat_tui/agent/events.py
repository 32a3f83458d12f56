"""What the agent reports while it runs a turn: typed events for the UI, the console and transcripts.

The agent hands each event to a sink (a plain callable). Approval is the one
event that waits for an answer: ``ApprovalNeeded.decision`` is a future the
sink's owner resolves with an ``ApprovalDecision``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any

from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.core.progress import ToolProgress
from mcp_chat_tui.core.tasks import TaskState
from mcp_chat_tui.core.tools import ToolCallResult, ToolSpec
from mcp_chat_tui.engine.events import Stats


class ApprovalChoice(str, Enum):
    """The user's answer to a tool-call proposal; values are the transcript's choice markers (document 000)."""

    ALLOW_ONCE = "yo"  # this call
    ALLOW_PENDING = "ya"  # this call and every other one waiting in this reply
    ALWAYS_TOOL = "yO"  # this call, and never ask again for this tool
    ALWAYS_ALL = "yA"  # every waiting call, and never ask again for their tools
    DENY = "n"  # not this call
    DENY_ALL = "nA"  # none of the waiting calls, and stop the turn
    AUTO = "auto"  # no question was asked: the policy or an earlier "always" allowed it

    @property
    def allows(self) -> bool:
        return self not in (ApprovalChoice.DENY, ApprovalChoice.DENY_ALL)


@dataclass(frozen=True)
class ApprovalDecision:
    """A typed answer from the approval dialog; ``save`` keeps an "always" in config.toml."""

    choice: ApprovalChoice
    save: bool = False
    arguments: dict[str, Any] | None = None  # the arguments as the user edited them (None: as the model wrote them)


@dataclass(frozen=True)
class PlannedCall:
    """One tool call the model proposed, resolved to the server and tool behind its name."""

    id: str
    model_name: str
    arguments: dict[str, Any] = field(hash=False)
    spec: ToolSpec | None = field(default=None, hash=False)
    given_id: str = field(default="", compare=False)  # the model's own id, when it had to be made unique

    @property
    def server(self) -> str:
        return self.spec.server if self.spec else ""

    @property
    def tool(self) -> str:
        return self.spec.name if self.spec else self.model_name

    @property
    def title(self) -> str:
        """The tool's title for a person to read ("" when it has none, or it is only the name again)."""
        return self.spec.shown_title if self.spec else ""

    @property
    def shown_tool(self) -> str:
        """What a person reads for the tool: its title, else its name (the model only sees names)."""
        return self.title or self.tool


@dataclass(frozen=True)
class Recorded:
    """What a conversation file says about a call it left without a result (a resumed turn).

    ``started_at`` set: the call started in an earlier run and never finished, so it may or
    may not have run (interrupted); it runs again only on an explicit yes. ``task_id`` set too: it
    ran as that task at its server, whose result is fetched (nothing runs again). Otherwise
    ``choice`` is the choice the file records (``yo``, ``auto``, ``n``…; None: never asked).
    """

    choice: str | None = None
    started_at: datetime | None = None
    task_id: str = ""

    @property
    def interrupted(self) -> bool:
        return self.started_at is not None

    def describe(self) -> str:
        """One line for the question asked about the call again."""
        if self.interrupted:
            return (
                f"interrupted: it may or may not have run (started {self.started_at:%Y-%m-%d %H:%M:%S} "
                "in an earlier run, no result recorded). Run it again?"
            )
        return (
            f"the conversation file records [{self.choice}] for this call, from an earlier run; "
            "it never started. Allow it in this run?"
        )


class TurnEnd(str, Enum):
    ANSWERED = "answered"  # the model answered (text) without asking for more tools
    STOPPED = "stopped"  # the user stopped generation or denied all and stopped
    ERROR = "error"  # the engine failed
    NO_ANSWER = "no_answer"  # the model's last reply had no text (empty, whitespace, special tokens)
    TOOL_ROUND_LIMIT = "tool_round_limit"  # the turn took max_tool_rounds rounds of calls and was stopped
    REPEATED_CALLS = "repeated_calls"  # the model repeated calls it already had the results of, and was stopped

    @property
    def unanswered(self) -> bool:
        """The turn ended on the app's word without a full answer (the answer may be incomplete)."""
        return self in (TurnEnd.NO_ANSWER, TurnEnd.TOOL_ROUND_LIMIT, TurnEnd.REPEATED_CALLS)


@dataclass(frozen=True)
class TurnStarted:
    prompt: str
    attachments: tuple[Attachment, ...] = ()  # what comes with the prompt (resources, the prompt command)
    retried: bool = False  # ``/retry``: the last reply was discarded and this turn asks its prompt again
    seed: int | None = None  # the seed this turn's replies are sampled from, when not the engine's (a retry)


@dataclass(frozen=True)
class AssistantText:
    text: str


@dataclass(frozen=True)
class AssistantThinking:
    text: str


@dataclass(frozen=True)
class CallProposed:
    """The model asked for ``call``, ``at`` this time (the time the transcript and the sidebar show)."""

    call: PlannedCall
    at: datetime = field(default_factory=datetime.now)


@dataclass(frozen=True)
class MalformedCall:
    """The model wrote something meant as a tool call that is not a valid one; the model is told why."""

    id: str
    raw: str
    reason: str
    at: datetime = field(default_factory=datetime.now)


@dataclass(frozen=True)
class ApprovalNeeded:
    """Ask the user about ``call``; ``waiting`` counts it and the calls after it still undecided.

    ``recorded`` is set for a call a conversation file left open: what the file says about it.
    For an interrupted call a yes runs it again and a no leaves it interrupted; no policy and no
    ``--yes`` answers that question.
    """

    call: PlannedCall
    waiting: int
    decision: asyncio.Future[ApprovalDecision] = field(compare=False, hash=False)
    recorded: Recorded | None = None
    why: str = ""  # why the policy asks (``Verdict.why``), shown in the dialog


@dataclass(frozen=True)
class CallDecided:
    """The call's fate before it runs; ``allowed_by`` says who or which rule allowed it
    ("you (once)", "auto policy", "--yes"…; empty for a denial)."""

    call: PlannedCall
    choice: ApprovalChoice
    allowed_by: str = ""
    ran_with: dict[str, Any] | None = None  # the user's edit of the arguments, which the call runs with


@dataclass(frozen=True)
class CallStarted:
    """The call is about to go to its server: its start is recorded first (``Agent.checkpoint``)."""

    call: PlannedCall
    started_at: datetime


class UnsavedChoice(str, Enum):
    """What to do with a call whose start could not be saved (``StartNotSaved``)."""

    RETRY = "retry"  # try saving again: the call is sent once its start is on disk
    RUN_UNSAVED = "run unsaved"  # send it although no file says it started
    DONT_RUN = "don't run"  # it is not sent; the model is told why


@dataclass(frozen=True)
class StartNotSaved:
    """The start of ``call`` could not be saved (``problem`` names the file and the OS error), so the
    call has not been sent. ``decision`` is resolved by the sink's owner; only ``RUN_UNSAVED`` sends it
    without its start on disk."""

    call: PlannedCall
    problem: str
    decision: asyncio.Future[UnsavedChoice] = field(compare=False, hash=False)


@dataclass(frozen=True)
class CallRunUnsaved:
    """The user chose to send ``call`` although its start is not on disk (``problem`` says why);
    ``note_problem`` says why the note kept outside the conversation could not be written either
    (empty: it was; ``Agent.note_unsaved_run``)."""

    call: PlannedCall
    problem: str
    note_problem: str = ""


@dataclass(frozen=True)
class CallTask:
    """``call`` runs as a task at its server: reported as soon as the task exists (the transcript
    records its id then), at each change of its status or message, and when a resumed conversation
    follows a task an earlier run created."""

    call: PlannedCall
    task: TaskState


@dataclass(frozen=True)
class CallFinished:
    """A call's outcome; ``result`` is None for denied, malformed, cancelled, interrupted and repeated
    calls; ``duration`` is None for a call that never ran (or whose run time is unknown). ``not_sent``
    says why a call that was about to start was not sent (its start could not be saved); ``repeat_of``
    is, for a repeated call, the id of the earlier call whose result the model was given."""

    call: PlannedCall
    status: CallState  # an outcome (``CallState.finished``)
    content_for_model: str
    result: ToolCallResult | None = None
    duration: float | None = None
    not_sent: str = ""
    repeat_of: str = ""


@dataclass(frozen=True)
class GenerationStats:
    """A reply's figures; ``context_length`` is the engine's (None: not known)."""

    stats: Stats
    context_length: int | None = None

    @property
    def context_used(self) -> int:
        """Tokens of the context the prompt and this reply take."""
        return self.stats.prompt_tokens + self.stats.generated_tokens


@dataclass(frozen=True)
class ResultCut:
    """A call's result was longer than its share of the context: the model got its first
    ``kept_tokens`` of ``total_tokens`` and a note (the transcript keeps it whole, and these figures).
    Also reported for a resumed conversation's result, when it is fitted before the model is sent it."""

    call: PlannedCall
    kept_tokens: int
    total_tokens: int
    kept_chars: int = 0  # of the result's text, before the note


@dataclass(frozen=True)
class GenerationRate:
    """While the model writes: tokens so far in this reply and the current tokens per second."""

    generated_tokens: int
    tokens_per_second: float


@dataclass(frozen=True)
class Notice:
    """Something the user should know once (e.g. the model's template has no tool support)."""

    text: str


@dataclass(frozen=True)
class TurnFinished:
    """The turn is over: how (``end``), after ``iterations`` generations; ``error`` the engine's
    message; ``note`` the line saying why a turn ended without an answer ("stopped after 8 tool
    rounds (max_tool_rounds)"); ``empty_reply``: the last reply had no text and no calls (it is
    still the conversation's last message)."""

    end: TurnEnd
    iterations: int
    error: str = ""
    note: str = ""
    empty_reply: bool = False


@dataclass(frozen=True)
class ServerRequestAnswered:
    """A server's request to the client and its answer, for the chat and the transcript (``📨:``).

    ``kind`` is "sampling" or "elicitation"; ``request`` what was asked (messages, system prompt and
    maxTokens; the form's message and fields; the URL); ``answer`` the user's: "approved", "edited",
    "rejected", "refused" (nobody asked: busy, over the limit, no terminal), or the spec's "accept",
    "decline", "cancel"; ``result`` what went back (secret form values redacted) or ``{"error": ...}``.
    """

    server: str
    kind: str
    request: dict[str, Any] = field(hash=False)
    answer: str
    result: dict[str, Any] = field(hash=False)
    at: datetime = field(default_factory=datetime.now, compare=False)


@dataclass(frozen=True)
class CallProgress:
    """A running call's server reported progress (``notifications/progress``, redacted)."""

    call: PlannedCall
    progress: ToolProgress


@dataclass(frozen=True)
class SummaryStarted:
    """The model is asked for a summary of exchange ``exchange`` (0-based), the ``number``-th of ``count`` now."""

    exchange: int
    number: int
    count: int


@dataclass(frozen=True)
class SummaryWritten:
    """Exchange ``exchange`` has its one-line summary (the transcript's ``📝:`` line)."""

    exchange: int
    text: str


@dataclass(frozen=True)
class SummaryFailed:
    """No summary for exchange ``exchange``: ``error`` says why; its full text stays in the prompt."""

    exchange: int
    error: str


@dataclass(frozen=True)
class SummariesEnded:
    """Summarising is over (done, failed or stopped); ``in_use`` exchanges are sent as their summary."""

    in_use: int
    stopped: bool = False


AgentEvent = (
    TurnStarted
    | AssistantText
    | AssistantThinking
    | CallProposed
    | MalformedCall
    | ApprovalNeeded
    | CallDecided
    | CallStarted
    | StartNotSaved
    | CallRunUnsaved
    | CallTask
    | CallFinished
    | GenerationRate
    | GenerationStats
    | Notice
    | TurnFinished
    | ServerRequestAnswered
    | CallProgress
    | SummaryStarted
    | SummaryWritten
    | SummaryFailed
    | SummariesEnded
    | ResultCut
)
AgentSink = Callable[[AgentEvent], None]
