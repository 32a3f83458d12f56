"""What one turn has produced so far, and the small pieces of wire shape the loop and the transcript share."""

from __future__ import annotations

import asyncio
import difflib
import json
import re
from collections.abc import Sequence
from typing import Any

from mcp_chat_tui.agent.events import (
    ApprovalChoice,
    CallFinished,
    CallRunUnsaved,
    CallStatus,
    PlannedCall,
    Recorded,
    StartNotSaved,
)
from mcp_chat_tui.core.feedback import MALFORMED_NAME
from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.core.tools import FailureKind

EDITED_NOTE = "The user edited this call's arguments before it ran; it ran with: {arguments}"
DENIED_MESSAGE = "The user denied this tool call. Do not retry it; answer without it or ask the user."
NOT_ALLOWED_MESSAGE = (
    "The user's settings do not allow this tool call (it was not run). Do not retry it; answer without it."
)
STOPPED_MESSAGE = "The user stopped this tool call before it finished."
NOT_RUN_MESSAGE = "The user stopped the turn before this tool call ran."
INTERRUPTED_MESSAGE = (
    "interrupted: it may or may not have run (the app stopped while this call was running, so its "
    "result is unknown). Check before relying on it or calling it again."
)
CANCELLED_MESSAGE = "The user cancelled this tool call while it ran; it may have done part of its work."
SAVE_ADVICE = "free space on the disk or fix the permissions of the file and its folder"


def task_lost_message(why: str) -> str:
    """What the model is told of a resumed call whose task could not be followed (``why``)."""
    return f"{INTERRUPTED_MESSAGE} Its task could not be followed: {why}"


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
REPEAT_REPLIES = 2  # replies with repeated calls after which the turn ends (the model was told after the first)
NAMES_LISTED = 12  # offered tools named in full to the model after a malformed call; past that, the nearest
NEAREST_LISTED = 8
_CALLED_NAME = re.compile(r'"name"\s*:\s*"([^"]{1,200})"|<function=([^>\s]{1,200})>')
_SPECIAL_TOKEN = re.compile(r"<\|[^|<>\s]{1,40}\|>|</?s>")


def limit_message(max_rounds: int) -> str:
    """What the model is told of a call not run because the turn took its rounds."""
    return (
        f"Not run: this turn has reached its limit of {max_rounds} tool rounds. "
        "Answer now in text with the results you have."
    )


def limit_note(max_rounds: int) -> str:
    return f"stopped after {max_rounds} tool rounds (max_tool_rounds)"


# The tool message of a call the model already made in this turn (it is not run again): the result
# is above it, and the app's message after the reply puts the question again
# (core.feedback.answer_prompt). Told "you already called it", a small model called again; the
# earlier result repeated verbatim doubled its tokens for nothing.
SAME_RESULT = "(the same result as above)"


def repeat_reason(repeat_of: str) -> str:
    """Why a repeated call did not run, for the user (its card, its detail, its line in ``--plain``)."""
    return f"not run: the same call as {repeat_of} earlier in this turn; the model was given that result again"


def repeat_note(last_repeat: str, repeats: int) -> str:
    """Why the turn ended on repeats; ``last_repeat``: the tool of the last (empty: a malformed call)."""
    if not last_repeat:
        return f"stopped: the model wrote again a tool call it was told it could not use ({repeats} repeated calls in this turn)"
    return (
        f"stopped: the model called {last_repeat} again with the same arguments "
        f"({repeats} repeated calls in this turn) though it had the result"
    )


def malformed_key(raw: str) -> str:
    """What makes two malformed calls the same: their text, whitespace aside."""
    return " ".join(raw.split())


ECHO_MIN = 24  # characters of a sentence the model was told that, found in a call it writes, make it an echo
_QUOTES = re.compile(r"[\\\"']")


def told_sentences(parts: Sequence[str]) -> list[str]:
    """The sentences of what the model was told of malformed calls, as ``echoes`` compares them."""
    sentences = (sentence for part in parts for sentence in re.split(r"(?<=[.:])\s", part))
    return [text for sentence in sentences if len(text := _plain(sentence).rstrip(".")) >= ECHO_MIN]


def echoes(raw: str, told: Sequence[str]) -> bool:
    """Whether a malformed call holds a sentence the model was told of an earlier one: it writes back
    what it was told instead of calling a tool (Qwen2.5-Coder-0.5B made the reason it was given for
    'add-17-and-25' the next call's name, and that reason the next, round after round)."""
    written = _plain(raw)
    return any(sentence in written for sentence in told)


def _plain(text: str) -> str:
    return " ".join(_QUOTES.sub("", text).split())


NO_ANSWER_NOTE = "no answer: the model's last reply had no text"


def has_answer(text: str) -> bool:
    """Whether a reply's text says anything (not only whitespace or a model's special tokens)."""
    return bool(_SPECIAL_TOKEN.sub("", text).strip())


def call_key(call: PlannedCall) -> tuple[str, str]:
    """What makes two calls the same call: the tool and the arguments (in any key order)."""
    return call.model_name, json.dumps(call.arguments, sort_keys=True, ensure_ascii=False, default=str)


def ran_with_result(finished: CallFinished) -> bool:
    """The call ran and its tool answered (a result, or an error the tool reported), or it had its
    whole time and timed out: running it again with the same arguments would tell the model nothing
    new (a real 0.5B model wrote a 90-second call again after it timed out, and it ran 90 s more).
    A failure to reach the tool (a crashed server, one not ready) may be tried again."""
    result = finished.result
    if result is None or finished.status not in (CallStatus.DONE, CallStatus.ERROR, CallStatus.TIMEOUT):
        return False
    return result.failure is None or result.failure.kind is FailureKind.TIMEOUT


def malformed_parts(reasons: Sequence[str], raws: Sequence[str], offered: Sequence[str], tail: str = "") -> list[str]:
    """What the model is told of each malformed call of one reply, in order (``feedback_message``
    joins them): why each could not be used; the last says which tools it can call (or ``tail``)."""
    parts = [f"Your tool call could not be used: {reason.strip().rstrip('.')}." for reason in reasons]
    if parts:
        parts[-1] += " " + (tail or tools_line(offered, raws))
    return parts


def tools_line(offered: Sequence[str], raws: Sequence[str]) -> str:
    """The tools the model can call (all, or the nearest to the names it wrote and how many more)."""
    if not offered:
        return "No tools are offered now: answer in text."
    names = list(offered)
    if len(names) > NAMES_LISTED:
        written = [a or b for raw in raws for a, b in _CALLED_NAME.findall(raw)]
        near = [n for w in written for n in difflib.get_close_matches(w, names, n=NEAREST_LISTED, cutoff=0.0)]
        shown = list(dict.fromkeys(near + names))[:NEAREST_LISTED]
        listed = f"{', '.join(shown)} and {len(names) - len(shown)} more"
    else:
        listed = ", ".join(names)
    return (
        f"The tools you can call are: {listed}. "
        "Call one by its exact name with a JSON object of arguments, or answer in text."
    )


class TurnState:
    """What one turn has produced so far (kept outside the task so a stop can finish the record)."""

    def __init__(self, redactor: Redactor, turn: list[dict[str, Any]]) -> None:
        """``turn``: the conversation's messages of this turn, which it adds to (its own list, so a turn
        stopped after the conversation was cleared or replaced closes itself, not the new one)."""
        self.redactor = redactor
        self.turn = turn
        self.iterations = 0
        self.rounds = 0  # generations whose calls were handled (run, denied, malformed, repeated)
        self.repeats = 0  # calls not run because they already ran in this turn (and malformed ones written again)
        self.repeats_before_reply = 0  # ``repeats`` when the reply being handled began
        self.repeat_replies = 0  # replies that repeated calls
        self.ran: dict[tuple[str, str], CallFinished] = {}  # this turn's calls that ran to a result, by ``call_key``
        self.malformed_seen: set[str] = set()  # this turn's malformed calls, by ``malformed_key``
        self.told: list[str] = []  # the sentences the model was told of this turn's malformed calls (``echoes``)
        self.last_repeat = ""  # the tool of the last repeated call ("": a malformed call written again)
        self.at_limit = False  # the turn took its rounds: the next reply is its last
        self.note = ""  # why the turn ended without an answer (TurnFinished.note)
        self.last_text = ""  # the text of the last reply (is it an answer?)
        self.empty_reply = False  # the last reply had no text and no calls
        self.offered: list[str] = []  # the names of the tools offered to the reply being written
        self.batch_choice = ApprovalChoice.ALLOW_PENDING
        self.batch_save = False
        self.taken_ids: set[str] | None = None  # every call id of the conversation, once asked for
        self.edited: dict[str, dict[str, Any]] = {}  # call id: the arguments the user edited it to
        self.reset_reply()
        self.clear_calls()

    def looping(self) -> bool:
        """Whether the reply being written is repeating calls enough that the rest of it need not be
        waited for: once after the model was told of a repeat, twice before (a small model may write
        one call hundreds of tokens over, and on a CPU each token is a second)."""
        seen: set[object] = {*self.ran, *self.malformed_seen}
        repeats = 0
        keys = [call_key(call) for call in self.calls] + [malformed_key(c.arguments["raw"]) for c in self.malformed]
        for key in keys:
            repeats += key in seen
            seen.add(key)
        return repeats >= (1 if self.repeat_replies else 2)

    def reset_reply(self) -> None:
        self.text = ""
        self.text_stream = self.redactor.stream()  # the reply's text and thinking, redacted as they come
        self.thinking_stream = self.redactor.stream()
        self.reply_recorded = False

    def clear_calls(self) -> None:
        self.calls: list[PlannedCall] = []
        self.malformed: list[PlannedCall] = []
        self.malformed_reasons: dict[str, str] = {}  # by call id: the engine's reason
        self.feedback: list[str] = []  # the app's message about the reply's malformed calls, after its tool messages
        self.repeated: list[tuple[PlannedCall, PlannedCall]] = []  # (a repeat, the earlier call it repeats)
        self.open_calls: list[PlannedCall] = []
        self.outcomes: dict[str, CallFinished] = {}
        self.started: dict[str, float] = {}  # perf_counter at each running call's start
        self.recorded: dict[str, Recorded] = {}
        self.running: dict[str, asyncio.Future[Any]] = {}  # each call being sent, by id (cancelled alone by the user)
        self.resuming: dict[str, str] = {}  # a resumed call's task id: its task is followed, nothing runs again


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
    """A call as the OpenAI ``tool_calls`` entry the model and the transcript see (a malformed call is
    recorded with its raw text as the arguments, and never sent to the model as a call)."""
    arguments = (
        call.arguments.get("raw", "")
        if call.model_name == MALFORMED_NAME
        else json.dumps(call.arguments, ensure_ascii=False)
    )
    return {"id": call.id, "type": "function", "function": {"name": call.model_name, "arguments": arguments}}
