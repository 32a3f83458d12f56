"""What a one-shot run (``-p``) hands to the script that started it: the final answer on stdout
(or, with ``--json``, one JSON object), and an exit code that says how the turn ended.

Exit codes, for every mode (``exit_code_for`` decides them for a turn):

- 0: the model answered;
- 1: the engine or a server failed;
- 2: bad input (the command line, a configuration file, an empty prompt);
- 3: the answer may be incomplete: a tool call was denied, timed out, was stopped or was
  interrupted (a resumed conversation's call that may or may not have run), a server's request (a
  sample of the model, a form, a URL) was rejected, refused or declined, or the turn ended without
  an answer (the model's last reply had no text, the turn took ``max_tool_rounds``, the model
  repeated calls it had the results of);
- 4: a server needs sign-in (at start, or a call wanted sign-in again or more access): run
  ``mcp-chat-tui --sign-in NAME``, then the same command again;
- 130: Ctrl+C; 143: SIGTERM.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, TextIO

from mcp_chat_tui.agent.events import (
    AgentEvent,
    AgentSink,
    AssistantText,
    AssistantThinking,
    CallDecided,
    CallFinished,
    CallProposed,
    CallTask,
    GenerationStats,
    MalformedCall,
    ServerRequestAnswered,
    TurnEnd,
    TurnFinished,
    TurnStarted,
)
from mcp_chat_tui.agent.figures import TurnFigures, generation_rate
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.core.tasks import TaskState
from mcp_chat_tui.core.text import json_for_terminal, visible_controls
from mcp_chat_tui.core.tools import FailureKind
from mcp_chat_tui.engine.events import Stats


class ExitCode(IntEnum):
    ANSWERED = 0
    FAILURE = 1
    BAD_INPUT = 2
    INCOMPLETE = 3
    NEEDS_SIGN_IN = 4
    INTERRUPTED = 128 + signal.SIGINT
    TERMINATED = 128 + signal.SIGTERM


INCOMPLETE_STATUSES = {CallState.DENIED, CallState.CANCELLED, CallState.TIMEOUT, CallState.INTERRUPTED}
SERVER_FAILURES = {FailureKind.CRASHED, FailureKind.NOT_READY, FailureKind.PROTOCOL_ERROR}
REFUSED_ANSWERS = {"rejected", "refused", "decline", "cancel"}  # a server's request the run did not grant


@dataclass
class CallReport:
    """One tool call as the report lists it; ``finished`` is None for a call that never ended."""

    proposed: CallProposed | MalformedCall
    choice: str | None = None
    allowed_by: str | None = None
    finished: CallFinished | None = None
    task: TaskState | None = None  # the task it runs as, as last heard

    @property
    def server_failed(self) -> bool:
        result = self.finished.result if self.finished is not None else None
        return result is not None and result.failure is not None and result.failure.kind in SERVER_FAILURES

    @property
    def needs_sign_in(self) -> bool:
        result = self.finished.result if self.finished is not None else None
        return result is not None and result.failure is not None and result.failure.kind is FailureKind.NEEDS_SIGN_IN

    @property
    def incomplete(self) -> bool:
        if self.finished is None or self.finished.status in INCOMPLETE_STATUSES:
            return True
        failure = self.finished.result.failure if self.finished.result is not None else None
        return failure is not None and failure.kind is FailureKind.REFUSED

    def to_json(self) -> dict[str, Any]:
        finished = self.finished
        if isinstance(self.proposed, MalformedCall):
            entry: dict[str, Any] = {
                "id": self.proposed.id,
                "server": None,
                "tool": None,
                "arguments": None,
                "raw": self.proposed.raw,
                "reason": self.proposed.reason,
            }
        else:
            call = self.proposed.call
            entry = {"id": call.id, "server": call.server or None, "tool": call.tool, "arguments": call.arguments}
        entry["choice"] = self.choice
        entry["allowed_by"] = self.allowed_by
        entry["outcome"] = finished.status.value if finished is not None else "not run"
        ok = finished is not None and finished.status is CallState.DONE
        entry["result"] = finished.content_for_model if ok else None
        entry["error"] = finished.content_for_model if finished is not None and not ok else None
        has_duration = finished is not None and finished.duration is not None
        entry["duration"] = round(finished.duration, 6) if has_duration else None
        entry["repeat_of"] = (finished.repeat_of or None) if finished is not None else None
        task = finished.result.task if finished is not None and finished.result is not None else None
        task = task or self.task
        entry["task"] = task.to_json() if task is not None else None  # the task it ran as, as last heard
        return entry


def exit_code_for(end: TurnEnd | None, calls: Iterable[CallReport], requests_refused: int = 0) -> ExitCode:
    """How a turn ended, as an exit code: failure beats a server that needs sign-in, which beats an
    incomplete answer, which beats an answer; ``requests_refused``: the servers' requests the run
    did not grant (a refusal, not a failure)."""
    calls = list(calls)
    if end is None or end is TurnEnd.ERROR or any(call.server_failed for call in calls):
        return ExitCode.FAILURE
    if any(call.needs_sign_in for call in calls):
        return ExitCode.NEEDS_SIGN_IN
    if end is TurnEnd.STOPPED or end.unanswered or requests_refused or any(call.incomplete for call in calls):
        return ExitCode.INCOMPLETE
    return ExitCode.ANSWERED


class OneShotReport:
    """Watches the agent's events for one ``-p`` turn: keeps the calls, the token figures and the answer.

    ``watch(printer)`` is the sink to give the agent: it records each event and passes it on,
    holding back the text of each reply until the reply turns out to call tools (then the
    printer shows it, on stderr) or to be the final answer (then ``write`` prints it on stdout).
    """

    def __init__(self, prompt: str, model: str) -> None:
        self.prompt = prompt
        self.model = model
        self.answer = ""
        self.error = ""
        self.note = ""  # why the turn ended without an answer
        self.end: TurnEnd | None = None
        self.calls: dict[str, CallReport] = {}
        self.generations: list[Stats] = []
        self.requests: list[ServerRequestAnswered] = []  # what the servers asked during the turn, and the answers
        self.replies: list[str] = []  # each reply's text as shown (no thinking, no call the engine caught)
        self.transcript: str | None = None
        self.save_error: str | None = None  # why the conversation could not be saved (then exit 1)
        self._held = ""
        self._reply = ""  # the text of the reply being written
        self._reply_over = False  # its figures came: text still held back by the agent may follow

    def watch(self, printer: AgentSink) -> AgentSink:
        def sink(event: AgentEvent) -> None:
            if isinstance(event, AssistantText):
                self._held += event.text
                self._reply += event.text
                return
            if isinstance(event, (CallProposed, MalformedCall)) and self._held:
                printer(AssistantText(self._held))
                self._held = ""
            self.record(event)
            if isinstance(event, TurnFinished) and event.end is TurnEnd.ERROR and self.answer:
                printer(AssistantText(self.answer))  # what the reply said before the failure, on stderr
            printer(event)

        return sink

    def record(self, event: AgentEvent) -> None:
        if not isinstance(event, AssistantThinking) and self._reply_over:
            self._close_reply()
        if isinstance(event, TurnStarted):  # the calls of a resumed turn finished before it stay listed
            self.generations, self.replies, self._held, self._reply = [], [], "", ""
        elif isinstance(event, CallProposed):
            self.calls[event.call.id] = CallReport(event)
        elif isinstance(event, MalformedCall):
            self.calls[event.id] = CallReport(event)
        elif isinstance(event, CallDecided):  # a resumed turn's calls were proposed in the file, not here
            entry = self.calls.setdefault(event.call.id, CallReport(CallProposed(event.call)))
            entry.choice, entry.allowed_by = event.choice.value, event.allowed_by or None
        elif isinstance(event, CallTask):
            self.calls.setdefault(event.call.id, CallReport(CallProposed(event.call))).task = event.task
        elif isinstance(event, CallFinished):
            self.calls.setdefault(event.call.id, CallReport(CallProposed(event.call))).finished = event
            if event.not_sent:  # its start could not be saved: the run fails (1), as a failed save does
                self.save_error = self.save_error or event.not_sent
        elif isinstance(event, GenerationStats):
            self.generations.append(event.stats)
            self._reply_over = True
        elif isinstance(event, ServerRequestAnswered):
            self.requests.append(event)
        elif isinstance(event, TurnFinished):
            if self._reply:  # a reply cut short before its figures (stopped, failed)
                self._close_reply()
            self.end, self.error, self.note = event.end, event.error, event.note
            self.answer, self._held = self._held, ""

    def _close_reply(self) -> None:
        """The reply is over: the text it showed joins ``replies`` (one entry per reply, "" for none)."""
        self.replies.append(self._reply)
        self._reply, self._reply_over = "", False

    @property
    def turn_exit_code(self) -> ExitCode:
        """How the turn itself ended."""
        refused = sum(request.answer in REFUSED_ANSWERS for request in self.requests)
        return exit_code_for(self.end, self.calls.values(), refused)

    @property
    def exit_code(self) -> ExitCode:
        """The turn's code; a conversation that could not be saved is a failure (1)."""
        return ExitCode.FAILURE if self.save_error else self.turn_exit_code

    def tokens(self) -> dict[str, Any]:
        """The token figures over the turn's generations (agent/figures.py), and each generation's own
        (a rate is null where nothing could be timed: a generation of one token)."""
        figures = TurnFigures(self.generations)
        return {
            "prompt": figures.prompt_tokens,
            "prefilled": figures.prefilled,
            "generated": figures.generated,
            **figures.to_json(),
            "generations": [
                {
                    "prompt": s.prompt_tokens,
                    "prefilled": s.prefilled_tokens,
                    "generated": s.generated_tokens,
                    "drafted": s.drafted_tokens,
                    "tokens_per_second": round(rate, 2) if (rate := generation_rate(s)) is not None else None,
                    "time_to_first_token": round(s.time_to_first_token, 4),
                    "prefill_time": round(s.prefill_time, 4),
                    "decode_time": round(s.decode_time, 4),
                }
                for s in self.generations
            ],
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "prompt": self.prompt,
            "model": self.model,
            "answer": self.answer,
            "end": self.end.value if self.end is not None else None,
            "error": self.error or None,
            "note": self.note or None,
            "exit_code": int(self.exit_code),
            "calls": [call.to_json() for call in self.calls.values()],
            "requests": [
                {"server": request.server, "kind": request.kind, "answer": request.answer} for request in self.requests
            ],
            "replies": self.replies,
            "tokens": self.tokens(),
            "transcript": self.transcript,
            "save_error": self.save_error,
        }

    def write(self, stdout: TextIO, *, as_json: bool) -> None:
        """The run's result on stdout: the JSON object, or the final answer alone (none after a failure).
        On a terminal the answer's control characters are written out as escapes (``\\x1b``), as on
        stderr, so a model's text cannot move the cursor or retitle the window; a pipe gets it as it is."""
        terminal = is_terminal(stdout)
        if as_json:
            text = json.dumps(self.to_json(), ensure_ascii=False)
            stdout.write((json_for_terminal(text) if terminal else text) + "\n")
        elif self.turn_exit_code is not ExitCode.FAILURE and self.answer:  # an answer not saved is still given
            answer = visible_controls(self.answer) if terminal else self.answer
            stdout.write(answer if answer.endswith("\n") else answer + "\n")
        stdout.flush()


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no such method, or a closed stream
        return False


def failure_json(prompt: str, message: str, code: int) -> str:
    """The ``--json`` object of a run that failed before its turn (configuration, model, servers)."""
    return json.dumps(
        {
            "prompt": prompt,
            "answer": None,
            "end": None,
            "error": message,
            "note": None,
            "exit_code": code,
            "calls": [],
            "requests": [],
            "replies": [],
            "tokens": None,
            "transcript": None,
            "save_error": None,
        },
        ensure_ascii=False,
    )
