"""The conversation as a transcript holds it: exchanges of a user prompt and the assistant's steps.

One step is one generation: an optional thought, the text, and the tool calls it
proposed, each with the user's choice and its result. Everything needed to
rebuild what the model is sent lives here, so nothing else has to be stored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.core.call_state import OUTCOME_WORDS, CallState
from mcp_chat_tui.core.content import ContentPart
from mcp_chat_tui.core.feedback import MALFORMED_NAME
from mcp_chat_tui.core.progress import ToolProgress
from mcp_chat_tui.core.tasks import TaskState
from mcp_chat_tui.core.tools import CutForModel

CHOICES = ("yo", "ya", "yO", "yA", "n", "nA", "auto")
ALLOWING = ("yo", "ya", "yO", "yA", "auto")
STATUSES = OUTCOME_WORDS  # a result's status: how its call ended
UNFINISHED = "unfinished"  # ``Exchange.end`` while the reply is under way; read back, the app ended during it
RETRIED = "retried"  # ``Exchange.end`` of a reply ``/retry`` discarded: kept in the file, never sent to the model
RETRIED_NOTE = "discarded by /retry: the model was asked again (calls that ran were not undone)"


@dataclass
class ToolResult:
    """What the model was told about one call (``content``), with how it ended and where it ran."""

    name: str
    call_id: str
    status: str = CallState.DONE.value  # an outcome word (OUTCOME_WORDS)
    content: str = ""
    server: str = ""
    duration: float | None = None
    tool: str = ""  # the tool's own name at ``server``, when the model was given another (``name``)
    parts: list[ContentPart] = field(default_factory=list)  # the blocks, when they say more than ``content``
    structured: dict[str, Any] | None = None  # the result's structured content
    progress: ToolProgress | None = None  # the last progress its server reported
    cut: CutForModel | None = None  # how the model's copy was cut, when it was (agent/budget.py)
    repeat_of: str = ""  # a repeated call (not run): the id of the earlier call whose result the model was given
    task: TaskState | None = None  # the task it ran as at its server, as it ended


@dataclass
class Proposal:
    """One tool call the model proposed, in the OpenAI shape, with the user's choice (None: not asked yet).

    ``proposed_at`` and ``started_at`` are wall-clock times to the second; ``started_at`` is
    written before the call goes to ``server``, so a call that started and has no result is
    known to be interrupted (it may or may not have run); one with a ``task_id`` and no result ran
    as that task, whose result a resumed conversation fetches. ``allowed_by`` says who or which rule
    allowed it ("you (once)", "auto policy"…; empty in files written before it was kept).
    """

    call: dict[str, Any]
    choice: str | None = None
    result: ToolResult | None = None
    proposed_at: datetime | None = None
    started_at: datetime | None = None
    server: str = ""
    allowed_by: str = ""
    ran_with: dict[str, Any] | None = None  # the arguments the user edited the call to before it ran
    tool: str = ""  # the tool's own name at ``server``, when the model was given another
    run_unsaved: bool = False  # sent although its start could not be saved (the user chose so)
    task_id: str = ""  # the task it runs as at ``server``, recorded as soon as the server created it

    @property
    def call_id(self) -> str:
        return str(self.call.get("id", ""))

    @property
    def name(self) -> str:
        """The name the model called the tool by."""
        return str(self.call.get("function", {}).get("name", ""))

    @property
    def tool_name(self) -> str:
        """The tool's own name, as far as the file knows it (the model's name when they are the same)."""
        return (self.result.tool if self.result else "") or self.tool or self.name

    @property
    def arguments(self) -> dict[str, Any]:
        """The arguments as an object (empty when they are not a JSON object, as in a malformed call)."""
        raw = self.call.get("function", {}).get("arguments", "{}")
        if isinstance(raw, dict):
            return raw
        try:
            value = json.loads(raw)
        except (TypeError, ValueError):
            return {}
        return value if isinstance(value, dict) else {}

    @property
    def malformed(self) -> bool:
        """A call the model wrote that could not be used: recorded, never run, never sent as a call."""
        return self.name == MALFORMED_NAME

    @property
    def raw(self) -> str:
        """What the model wrote for a malformed call."""
        return str(self.call.get("function", {}).get("arguments", ""))

    @property
    def awaiting_choice(self) -> bool:
        return self.choice is None and self.result is None

    @property
    def allowed(self) -> bool:
        return self.choice in ALLOWING

    @property
    def interrupted(self) -> bool:
        """Started in an earlier run and never finished: it may or may not have run."""
        return self.started_at is not None and self.result is None


@dataclass
class ServerRequest:
    """A server's request to the client during a step (sampling, elicitation) and how it was answered
    (``ServerRequestAnswered`` in agent/events.py says what each field holds)."""

    server: str
    kind: str
    request: dict[str, Any] = field(default_factory=dict)
    answer: str = ""
    result: dict[str, Any] = field(default_factory=dict)
    at: datetime | None = None


@dataclass
class Step:
    thought: str | None = None
    text: str = ""
    proposals: list[Proposal] = field(default_factory=list)
    requests: list[ServerRequest] = field(default_factory=list)


@dataclass
class Exchange:
    """A user prompt, and the assistant's reply (``model`` None: no reply was started).

    ``end`` says how a reply ended when it did not simply answer: ``"stopped"`` (the user
    stopped it), ``"error"`` (the engine failed, ``error`` says how), ``"no_answer"``,
    ``"tool_round_limit"`` or ``"repeated_calls"`` (the app ended it without an answer, ``note``
    says why) or ``"unfinished"`` (written while it is under way: read back, the app ended before
    the reply did). ``settings`` are the
    generation settings the reply was made with, those not left at the app's default
    (``{"temperature": 0.7, "seed": 1}``; empty: all defaults, or a file written before they were kept).
    A reply ``/retry`` discarded ends ``"retried"``: the exchange after it asks the same prompt again.
    ``switched_from``: the model the conversation was on before ``/model`` switched it to this reply's
    (the first reply after a switch; "" otherwise), so a switch made before any reply is on record too.
    """

    user: str
    model: str | None = None
    steps: list[Step] = field(default_factory=list)
    summary: str | None = None
    end: str | None = None
    error: str = ""
    note: str = ""  # why the app ended the reply without an answer ("stopped after 8 tool rounds …")
    attachments: list[Attachment] = field(default_factory=list)  # what came with the prompt
    settings: dict[str, Any] = field(default_factory=dict)  # the reply's generation settings (engine/generation.py)
    switched_from: str = ""

    @property
    def discarded(self) -> bool:
        """``/retry`` discarded this reply: the file keeps it (what its calls did), the model is not sent it."""
        return self.end == RETRIED

    @property
    def cut_short(self) -> bool:
        """The app ended while this reply was under way (a kill, a crash, a power cut)."""
        return self.end == UNFINISHED

    def take_reply_meta(self, meta: dict[str, Any]) -> None:
        """The details a file keeps after ``🤖:[model]`` (docs/transcript-format.md); a value of the wrong kind is left out."""
        self.end = meta.get("end") if isinstance(meta.get("end"), str) else None
        self.error = str(meta.get("error", ""))
        self.note = str(meta.get("note", ""))
        self.settings = meta["settings"] if isinstance(meta.get("settings"), dict) else {}
        self.switched_from = meta["switched_from"] if isinstance(meta.get("switched_from"), str) else ""


@dataclass
class Transcript:
    exchanges: list[Exchange] = field(default_factory=list)

    def model_switches(self) -> dict[int, str]:
        """The exchanges whose reply came from another model than the reply before it (``/model``
        switched between them, or another run's model went on), by index, with that model: each reply
        names its model, and the first after a switch the model before it (a switch before the first
        reply has no reply before it), so the file keeps every switch."""
        switches: dict[int, str] = {}
        last: str | None = None
        for index, exchange in enumerate(self.exchanges):
            if exchange.model is not None:
                before = exchange.switched_from or last
                if before is not None and exchange.model != before:
                    switches[index] = exchange.model
                last = exchange.model
        return switches

    def pending_proposals(self) -> list[Proposal]:
        """Proposals of the last step still waiting for a choice or (allowed) for their result (a
        malformed call never runs: it is not one of them)."""
        if not self.exchanges or not self.exchanges[-1].steps:
            return []
        last = self.exchanges[-1].steps[-1]
        return [p for p in last.proposals if p.result is None and not p.malformed]

    def pending_feedback(self) -> list[str]:
        """What the model was to be told of the last step's malformed calls once its pending calls
        have their results (``to_openai_messages`` leaves it out until then)."""
        if not self.pending_proposals():
            return []
        last = self.exchanges[-1].steps[-1]
        return [p.result.content for p in last.proposals if p.malformed and p.result is not None]

    def turn_goes_on(self) -> bool:
        """Whether resuming continues the last reply: the app ended while its last calls waited
        (``pending_proposals``), or after their results and before the model answered them."""
        if not self.exchanges or not self.exchanges[-1].steps:
            return False
        exchange = self.exchanges[-1]
        proposals = exchange.steps[-1].proposals
        if any(p.result is None for p in proposals):
            return True
        return bool(proposals) and exchange.end in (None, UNFINISHED)  # not after a stop or an error

    @property
    def live_exchanges(self) -> list[Exchange]:
        """The exchanges the model is sent, one per turn of the agent's (not those ``/retry`` discarded)."""
        return [exchange for exchange in self.exchanges if not exchange.discarded]

    def summaries(self) -> list[str | None]:
        """Each live exchange's summary, in order (None: none, or a blank ``📝:`` line)."""
        return [
            exchange.summary if exchange.summary and exchange.summary.strip() else None
            for exchange in self.live_exchanges
        ]

    def cuts_for_model(self) -> dict[str, CutForModel]:
        """How each result the model got only the start of was cut, by call id."""
        return {p.call_id: p.result.cut for p in self.all_proposals() if p.result is not None and p.result.cut}

    def all_proposals(self) -> list[Proposal]:
        return [p for exchange in self.exchanges for step in exchange.steps for p in step.proposals]
