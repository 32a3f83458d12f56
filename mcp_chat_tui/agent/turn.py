"""What one turn has produced so far, and the small pieces of wire shape the loop and the transcript share."""

from __future__ import annotations

import json
import re
from typing import Any

from mcp_chat_tui.agent.events import (
    ApprovalChoice,
    CallFinished,
    CallRunUnsaved,
    PlannedCall,
    Recorded,
    StartNotSaved,
)
from mcp_chat_tui.core.redact import Redactor

DENIED_MESSAGE = "The user denied this tool call. Do not retry it; answer without it or ask the user."
STOPPED_MESSAGE = "The user stopped this tool call before it finished."
NOT_RUN_MESSAGE = "The user stopped the turn before this tool call ran."
INTERRUPTED_MESSAGE = (
    "interrupted: it may or may not have run (the app stopped while this call was running, so its "
    "result is unknown). Check before relying on it or calling it again."
)
SAVE_ADVICE = "free space on the disk or fix the permissions of the file and its folder"


def not_saved_message(problem: str) -> str:
    """What the model is told of a call that was not sent because its start could not be saved."""
    return (
        f"Not run: the conversation could not be saved ({problem}), and a tool call is sent only once "
        "its start is saved. The user was told. Do not call it again until the user says saving works."
    )


def not_sent_line(event: StartNotSaved) -> str:
    """Why a call was not sent, and what to do, in one line (the console and the app say the same)."""
    return (
        f"{event.call.tool} was not sent: {event.problem}. A call is sent only once its start is saved, "
        f"so that it never runs twice; {SAVE_ADVICE}."
    )


def run_unsaved_line(event: CallRunUnsaved) -> str:
    """What running a call unsaved means for a resume (said when the user chose it)."""
    where = (
        f"and nothing on disk says it started ({event.note_problem})"
        if event.note_problem
        else "its start is noted in the app's data folder until then, so a resume asks before running it again"
    )
    return f"{event.call.tool} runs unsaved: the conversation will say so once it can be saved, {where}"


GENERATED_ID = re.compile(r"call_(\d+)")
MALFORMED_NAME = "malformed_tool_call"


def malformed_content(reason: str) -> str:
    return (
        f"Error: that tool call could not be used ({reason}). "
        "Call a listed tool by its exact name with a JSON object of arguments."
    )


class TurnState:
    """What one turn has produced so far (kept outside the task so a stop can finish the record)."""

    def __init__(self, redactor: Redactor, turn: list[dict[str, Any]]) -> None:
        """``turn``: the conversation's messages of this turn, which it adds to (its own list, so a turn
        stopped after the conversation was cleared or replaced closes itself, not the new one)."""
        self.redactor = redactor
        self.turn = turn
        self.iterations = 0
        self.batch_choice = ApprovalChoice.ALLOW_PENDING
        self.batch_save = False
        self.taken_ids: set[str] | None = None  # every call id of the conversation, once asked for
        self.reset_reply()
        self.clear_calls()

    def reset_reply(self) -> None:
        self.text = ""
        self.text_stream = self.redactor.stream()  # the reply's text and thinking, redacted as they come
        self.thinking_stream = self.redactor.stream()
        self.reply_recorded = False

    def clear_calls(self) -> None:
        self.calls: list[PlannedCall] = []
        self.malformed: list[PlannedCall] = []
        self.malformed_planned: list[PlannedCall] = []
        self.malformed_reasons: dict[str, str] = {}
        self.open_calls: list[PlannedCall] = []
        self.outcomes: dict[str, CallFinished] = {}
        self.started: dict[str, float] = {}  # perf_counter at each running call's start
        self.recorded: dict[str, Recorded] = {}


def free_id(given: str, taken: set[str]) -> str:
    """An id not in ``taken`` for a call whose ``given`` id is taken (or empty)."""
    if not given or GENERATED_ID.fullmatch(given):
        numbers = [int(m.group(1)) for m in map(GENERATED_ID.fullmatch, taken) if m]
        number = max(numbers, default=0) + 1
        while f"call_{number}" in taken:
            number += 1
        return f"call_{number}"
    number = 2
    while f"{given}_{number}" in taken:
        number += 1
    return f"{given}_{number}"


def seconds(duration: float) -> float:
    """A call's duration to a tenth of a millisecond, as the transcript keeps it (so a resumed
    conversation shows the same figures as the live one)."""
    return round(duration, 4)


def wire_call(call: PlannedCall) -> dict[str, Any]:
    """A call as the OpenAI ``tool_calls`` entry the model and the transcript see."""
    arguments = (
        call.arguments.get("raw", "")
        if call.model_name == MALFORMED_NAME
        else json.dumps(call.arguments, ensure_ascii=False)
    )
    return {"id": call.id, "type": "function", "function": {"name": call.model_name, "arguments": arguments}}
