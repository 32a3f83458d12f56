"""Show a conversation read from a transcript: the chat, the call cards and the sidebar rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_chat_tui.transcript import Exchange, Proposal, Transcript
from mcp_chat_tui.ui.records import CallState
from mcp_chat_tui.ui.widgets.chat import AssistantReply, ToolCallCard, UserMessage

if TYPE_CHECKING:
    from mcp_chat_tui.ui.app import ChatApp

STATUS_STATE = {
    "done": CallState.DONE,
    "error": CallState.ERROR,
    "timeout": CallState.TIMEOUT,
    "denied": CallState.DENIED,
    "malformed": CallState.MALFORMED,
    "cancelled": CallState.CANCELLED,
    "interrupted": CallState.INTERRUPTED,
}
STOPPED_NOTE = "■ stopped"  # under a reply the user stopped, live and after a resume


def call_state_for(proposal: Proposal) -> CallState:
    if proposal.result is not None:
        return STATUS_STATE.get(proposal.result.status, CallState.DONE)
    if proposal.interrupted:
        return CallState.INTERRUPTED
    return CallState.PROPOSED if proposal.choice else CallState.AWAITING


def reply_note(exchange: Exchange) -> str:
    """The note a reply ended with when it was shown live ("■ stopped", "error: …")."""
    if exchange.end == "error":
        return f"error: {exchange.error}" if exchange.error else "error"
    return STOPPED_NOTE if exchange.end == "stopped" else ""


async def show_transcript(app: ChatApp, transcript: Transcript) -> AssistantReply | None:
    """Mount the whole conversation; returns the last reply (to continue it when calls are open)."""
    chat = app.chat
    reply: AssistantReply | None = None
    app._pending_keys = {}
    for exchange in transcript.exchanges:
        await chat.add_prompt(UserMessage(exchange.user))
        app.query_one("#prompt").remember(exchange.user)
        if exchange.model is None:
            reply = None
            continue
        reply = AssistantReply(exchange.model)
        await chat.mount(reply)
        for step in exchange.steps:
            if step.thought is not None:
                await reply.append_thinking(step.thought)
            if step.text:
                await reply.append_text(step.text)
            for proposal in step.proposals:
                await _show_proposal(app, reply, proposal)
        await reply.finish(reply_note(exchange))
    return reply


async def _show_proposal(app: ChatApp, reply: AssistantReply, proposal: Proposal) -> None:
    result = proposal.result
    malformed = proposal.name == "malformed_tool_call"
    record = app._new_record(proposal.call_id, (result.server if result else "") or proposal.server, proposal.name,
                             {} if malformed else proposal.arguments)
    record.proposed_at, record.started_at = proposal.proposed_at, proposal.started_at
    record.state = call_state_for(proposal)
    if malformed:
        record.tool = "malformed call"
        record.raw = str(proposal.call.get("function", {}).get("arguments", ""))
    if result is not None:
        record.duration = result.duration
        record.content_for_model = result.content
        record.reason = "" if result.status == "done" else result.content
    else:
        app._pending_keys[proposal.call_id] = record.key
        if proposal.interrupted:
            record.reason = "interrupted: it may or may not have run (started in an earlier run, no result recorded)"
    app.calls_table.add_record(record)
    card = ToolCallCard(record, app.clock)
    app._cards[record.key] = card
    await reply.add_widget(card)
