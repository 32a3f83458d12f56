"""Rebuild what the model is sent from a transcript alone, as OpenAI chat messages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_chat_tui.core.attachments import user_content
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.core.feedback import answer_prompt, feedback_message, written_reply
from mcp_chat_tui.transcript.model import Step, Transcript


def to_openai_messages(transcript: Transcript) -> list[dict[str, Any]]:
    """The conversation in the OpenAI chat-completions shape (no system prompt; thoughts are not sent).

    A proposal without a result yet (waiting for a choice, or allowed but not
    run) has no ``tool`` message: resuming finishes it first. A reply ``/retry`` discarded is left out
    with its prompt (the exchange after it asks that prompt again).
    """
    messages: list[dict[str, Any]] = []
    for exchange in transcript.live_exchanges:
        messages.append({"role": "user", "content": user_content(exchange.user, exchange.attachments)})
        question = messages[-1]
        for index, step in enumerate(exchange.steps):
            ended = index == len(exchange.steps) - 1 and exchange.end == "repeated_calls"
            messages += step_messages(step, None if ended else question)
    return messages


def step_messages(step: Step, question: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """One generation's messages, as the agent built them (core/feedback.py): the assistant's text
    with the raw text of its malformed calls and its good calls, their ``tool`` messages, then the
    app's message about the malformed calls and, after repeated calls, the user's ``question`` put
    again (``answer_prompt``; not after the repeats that ended the turn: ``question`` None), once
    every good call has its result. Files written
    when malformed calls were sent as calls named ``malformed_tool_call`` give the same shape."""
    calls = [proposal for proposal in step.proposals if not proposal.malformed]
    malformed = [proposal for proposal in step.proposals if proposal.malformed]
    assistant: dict[str, Any] = {"role": "assistant", "content": written_reply(step.text, [p.raw for p in malformed])}
    if calls:
        assistant["tool_calls"] = [proposal.call for proposal in calls]
    messages = [assistant]
    for proposal in calls:
        if proposal.result is not None:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": proposal.call_id,
                    "name": proposal.name,
                    "content": proposal.result.content,
                }
            )
    told = [proposal.result.content for proposal in malformed if proposal.result is not None]
    repeated = any(proposal.result is not None and proposal.result.status == CallState.REPEATED for proposal in calls)
    if repeated and question is not None:  # None: these repeats ended the turn, the model was not asked again
        told.append(answer_prompt(question))
    if told and all(proposal.result is not None for proposal in calls):
        messages.append(feedback_message(told))
    return messages
