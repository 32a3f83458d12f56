"""What the app tells the model about calls it could not use, in a shape every chat template holds.

A malformed call is never put in the conversation as a call: a model imitates what it sees, and a
call named ``malformed_tool_call`` with a tool result taught one to call a tool of that name. The
assistant message keeps what the model wrote (its text, the call's raw text included), and why the
call could not be used goes back as a plain user message from the app, after the reply's tool
results. The agent builds these messages as a turn runs; ``transcript/model_messages.py`` builds the same
ones from a conversation file (docs/transcript-format.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

MALFORMED_NAME = "malformed_tool_call"  # how a transcript records a malformed call; never sent to the model
APP_SENDER = "mcp-chat-tui"  # the ``name`` of the app's own user messages: not a turn of the user's
APP_PREFIX = "[mcp-chat-tui] "


def written_reply(text: str, raws: Sequence[str]) -> str:
    """What the model wrote in one reply: its text, then the raw text of each call that could not be
    used, each on a line of its own."""
    written = text
    for raw in raws:
        if written and not written[-1].isspace():
            written += "\n"
        written += raw
    return written


def feedback_message(parts: Sequence[str]) -> dict[str, Any]:
    """The app's user message about one reply's calls that could not be used (``parts``: what the
    model is told of each, in order)."""
    return {"role": "user", "name": APP_SENDER, "content": APP_PREFIX + "\n".join(parts)}


def is_app_message(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` is the app's own (``feedback_message``), not a prompt of the user's."""
    return message.get("role") == "user" and message.get("name") == APP_SENDER


ANSWER_PROMPT = "Using the tool result above, answer the question in one sentence"
_QUESTION_CAP = 400  # a longer question is not quoted again: "the question" is enough


def answer_prompt(question_message: Mapping[str, Any] | None) -> str:
    """What the model is told after a reply that asked again for results it had (the app's part of
    ``feedback_message``): the user's question put again, with the instruction to answer. A small
    model that had just repeated a call then answered: Qwen2.5-Coder-0.5B, told it already had the
    result, wrote the call again every time, and answered when its question was put again
    (docs/reference.md#when-a-turn-ends-without-an-answer)."""
    content = question_message.get("content") if question_message is not None else None
    question = content.split("\n\n[attached: ")[0].strip() if isinstance(content, str) else ""
    if not question or len(question) > _QUESTION_CAP:
        return ANSWER_PROMPT + "."
    return f"{ANSWER_PROMPT}: {question}"


def question_of(messages: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The user's own message that opened a turn (the app's messages are not one)."""
    return next((m for m in messages if m.get("role") == "user" and not is_app_message(m)), None)
