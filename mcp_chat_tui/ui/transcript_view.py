"""Show a conversation read from a transcript: the chat, the call cards and the sidebar rows."""

from __future__ import annotations

from collections.abc import Callable

from mcp_chat_tui.agent.approval import decision_label
from mcp_chat_tui.agent.asking_requests import describe_answered
from mcp_chat_tui.agent.budget import cut_label
from mcp_chat_tui.agent.events import ApprovalChoice
from mcp_chat_tui.agent.turn import repeat_reason
from mcp_chat_tui.conversation import switched_line
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.transcript import Exchange, Proposal, Transcript
from mcp_chat_tui.ui.call_records import RUN_UNSAVED_NOTE, CallRecord
from mcp_chat_tui.ui.call_store import CallStore
from mcp_chat_tui.ui.widgets.attachments import user_message
from mcp_chat_tui.ui.widgets.chat import MAX_EXCHANGES_SHOWN, ChatLog, Notice, UserMessage
from mcp_chat_tui.ui.widgets.prompt import PromptInput
from mcp_chat_tui.ui.widgets.reply import AssistantReply

MAX_EARLIER_CALLS_LISTED = 1000  # calls of exchanges not shown in the chat that the sidebar lists (the last)
STOPPED_NOTE = "■ stopped"  # under a reply the user stopped, live and after a resume


def end_note_line(note: str) -> str:
    """Under a reply the app ended without an answer (TurnFinished.note), live and after a resume."""
    return f"■ {note}"


CUT_SHORT_NOTE = "■ cut short: the app ended before this reply was finished"  # a loaded reply marked unfinished


def allowed_by_for(proposal: Proposal) -> str:
    """Who allowed a loaded call, as the file says; a file written before that was kept gives the
    choice alone ("auto": some rule, not named)."""
    if proposal.allowed_by or proposal.choice is None:
        return proposal.allowed_by
    if proposal.choice == ApprovalChoice.AUTO.value:
        return "a rule (not recorded in this file)"
    choice = ApprovalChoice(proposal.choice)
    return decision_label(choice) if choice.allows else ""


def call_state_for(proposal: Proposal) -> CallState:
    if proposal.result is not None:
        return CallState(proposal.result.status)  # the transcript reads only outcome words
    if proposal.interrupted:
        return CallState.INTERRUPTED
    return CallState.PROPOSED if proposal.choice else CallState.AWAITING


def reply_note(exchange: Exchange) -> str:
    """The note a reply ended with when it was shown live ("■ stopped", "error: …", "■ stopped after
    8 tool rounds (max_tool_rounds)")."""
    if exchange.note and exchange.end is not None and not exchange.cut_short:
        return end_note_line(exchange.note)
    if exchange.end == "error":
        return f"error: {exchange.error}" if exchange.error else "error"
    if exchange.cut_short:
        return CUT_SHORT_NOTE
    return STOPPED_NOTE if exchange.end == "stopped" else ""


async def show_transcript(
    transcript: Transcript,
    *,
    chat: ChatLog,
    prompt: PromptInput,
    calls: CallStore,
    leaving: Callable[[], bool],
) -> AssistantReply | None:
    """Show a loaded conversation: its last ``MAX_EXCHANGES_SHOWN`` exchanges in the chat, every call
    in the sidebar; returns the last reply (to continue it when calls are open).

    Exchanges before those are never mounted (a 50 MB file has some 12,000): the chat says how
    many there are, the prompt history and the sidebar have them, the transcript keeps them.

    Args:
        leaving: whether the app is leaving (showing stops then).
    """
    reply: AssistantReply | None = None
    calls.pending_keys = {}
    hidden = max(0, len(transcript.exchanges) - MAX_EXCHANGES_SHOWN)
    _list_earlier(transcript.exchanges[:hidden], prompt, calls)
    await chat.note_hidden(hidden)
    goes_on = transcript.exchanges[-1] if transcript.turn_goes_on() else None  # its reply continues: no note
    switches = transcript.model_switches()
    for index, exchange in enumerate(transcript.exchanges[hidden:], start=hidden):
        if leaving():  # the app is leaving: stop here, the screen is being taken down
            return None
        if index in switches:
            await chat.mount(Notice(switched_line(switches[index]), muted=True))
        attached = exchange.attachments
        await chat.add_prompt(user_message(exchange.user, attached) if attached else UserMessage(exchange.user))
        prompt.remember(exchange.user)
        note = "" if exchange is goes_on else reply_note(exchange)
        reply = await _show_reply(exchange, chat, calls, note) if exchange.model is not None else None
    table = calls.table
    if table.row_count:
        table.move_cursor(row=table.row_count - 1, animate=False)
    return reply


def _list_earlier(exchanges: list[Exchange], prompt: PromptInput, calls: CallStore) -> None:
    """Exchanges not shown in the chat: their prompts in the history, their last calls in the sidebar."""
    for exchange in exchanges:
        prompt.remember(exchange.user)
    earlier = [p for exchange in exchanges for step in exchange.steps for p in step.proposals]
    for proposal in earlier[-MAX_EARLIER_CALLS_LISTED:]:
        _add_proposal_record(calls, proposal)


async def _show_reply(exchange: Exchange, chat: ChatLog, calls: CallStore, note: str) -> AssistantReply:
    """The model's reply of one exchange as it was shown live: thinking, text, call cards, the
    servers' requests, and the ``note`` it ended with."""
    assert exchange.model is not None
    reply = AssistantReply(exchange.model)
    await chat.mount(reply)
    for step in exchange.steps:
        if step.thought is not None:
            await reply.append_thinking(step.thought)
        if step.text:
            await reply.append_text(step.text)
        for proposal in step.proposals:
            record = _add_proposal_record(calls, proposal)
            await reply.add_widget(calls.card_for(record))
            await calls.show_media(record)
        for request in step.requests:  # a server's sampling or elicitation, as shown live
            await reply.add_widget(Notice(describe_answered(request)))
    await reply.finish(note)
    return reply


def _add_proposal_record(calls: CallStore, proposal: Proposal) -> CallRecord:
    """The call's row in the sidebar, as the file left it."""
    result = proposal.result
    malformed = proposal.malformed
    record = calls.new_record(
        proposal.call_id,
        (result.server if result else "") or proposal.server,
        proposal.tool_name,
        {} if malformed else proposal.arguments,
    )
    record.proposed_at, record.started_at = proposal.proposed_at, proposal.started_at
    record.state = call_state_for(proposal)
    record.allowed_by = allowed_by_for(proposal) + (RUN_UNSAVED_NOTE if proposal.run_unsaved else "")
    record.ran_with = proposal.ran_with
    if malformed:
        record.tool = "malformed call"
        record.raw = proposal.raw
    if result is not None:
        record.duration = result.duration
        record.progress = result.progress
        record.content_for_model = result.content
        record.loaded_parts, record.loaded_structured = result.parts, result.structured
        record.reason = "" if result.status == CallState.DONE else result.content
        if result.repeat_of:
            record.repeat_of, record.reason = result.repeat_of, repeat_reason(result.repeat_of)
        if result.cut is not None:
            record.cut_for_model = cut_label(result.cut.kept_tokens, result.cut.total_tokens)
        record.task = result.task
    else:
        calls.pending_keys[proposal.call_id] = record.key
        if proposal.interrupted and proposal.task_id:
            record.reason = (
                f"ran as task {proposal.task_id} when the app was closed: its result is fetched "
                "from its server when the conversation goes on"
            )
        elif proposal.interrupted:
            record.reason = "interrupted: it may or may not have run (started in an earlier run, no result recorded)"
    calls.table.add_record(record, follow=False)
    return record
