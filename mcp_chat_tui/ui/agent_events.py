"""What the app does with the agent's events: each event's message (``ui/agent_messages.py``) is
shown by its method here, a helper ``ChatApp`` composes (``AgentEventView``).

The app hands every agent message to ``AgentEventView.show`` from one ``@on`` handler, which picks
the message's method from a table (``SHOWN_BY``). The messages are handled in the order the agent
reported the events; text that only extends the open part of the reply skips the queue (``sink``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Protocol

from textual.app import App
from textual.screen import Screen

from mcp_chat_tui.agent import Agent
from mcp_chat_tui.agent.asking_requests import describe_answered
from mcp_chat_tui.agent.events import (
    AgentEvent,
    ApprovalChoice,
    ApprovalDecision,
    ApprovalNeeded,
    AssistantText,
    StartNotSaved,
    TurnEnd,
    UnsavedChoice,
)
from mcp_chat_tui.agent.figures import TurnFigures
from mcp_chat_tui.agent.turn import not_sent_line, run_unsaved_line
from mcp_chat_tui.conversation import Conversation
from mcp_chat_tui.core.text import visible_controls
from mcp_chat_tui.engine import Engine, Stats
from mcp_chat_tui.ui import agent_messages as am
from mcp_chat_tui.ui.call_records import CallRecord
from mcp_chat_tui.ui.call_store import CallStore
from mcp_chat_tui.ui.frame_hold import FrameHold
from mcp_chat_tui.ui.heap import collect_after_frame
from mcp_chat_tui.ui.reply_stream import ReplyController
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from mcp_chat_tui.ui.screens.deciding import withdraw_dialog
from mcp_chat_tui.ui.screens.unsaved import UnsavedStartScreen
from mcp_chat_tui.ui.streaming import drawing_cost
from mcp_chat_tui.ui.textual_private import layout_pending
from mcp_chat_tui.ui.transcript_view import STOPPED_NOTE, end_note_line
from mcp_chat_tui.ui.widgets.chat import ChatLog, Notice
from mcp_chat_tui.ui.widgets.prompt import PromptInput
from mcp_chat_tui.ui.widgets.status import StatusBar

OPENING_WAIT = 0.5  # seconds a turn waits at most for the screen showing its prompt to be drawn
CALL_HOLD_LIMIT = 0.1  # seconds a proposed call holds the frames at most (``_hold_for_call``)


def cached_note(stats: Stats | None) -> str:
    """How much of a prompt came from the KV cache (kept in memory, or resumed from the conversation's file)."""
    if stats is None or stats.prefilled_tokens >= stats.prompt_tokens:
        return ""
    return f"· {stats.prompt_tokens - stats.prefilled_tokens} of {stats.prompt_tokens} prompt tokens were cached"


def model_cost(engine: Engine) -> float:
    """What each second of this thread's CPU costs the model while it generates, from how busy
    generating keeps the process (``Engine``'s optional ``thread_load``: None for a model that
    does not run in it; ``drawing_cost``)."""
    load = engine.thread_load
    if load is None:
        return 0.0
    return drawing_cost(load.share, getattr(load, "spare_cores", 0.0))


class EventHost(Protocol):
    """What of ``ChatApp`` the agent's events are shown with (each read when used: the panes are
    mounted after the app starts)."""

    @property
    def conversation(self) -> Conversation: ...

    @property
    def agent(self) -> Agent: ...

    @property
    def reply(self) -> ReplyController: ...

    @property
    def call_store(self) -> CallStore: ...

    @property
    def chat(self) -> ChatLog: ...

    @property
    def status_bar(self) -> StatusBar: ...

    @property
    def leaving(self) -> bool: ...  # the app is leaving: nothing more is drawn

    def show_engine_state(self, state: str, detail: str = "") -> None: ...  # the status bar's engine state


class AgentEventView:
    """The agent's events shown in the chat, the sidebar and the status bar, and the dialogs they ask for.

    Args:
        app: Where the messages are posted and the notices said, the dialogs pushed and their
            workers run (group ``approvals``), and the prompt box found.
        host: The app's conversation (the transcript is written first), agent, reply, calls and
            panes (``EventHost``).
    """

    def __init__(self, app: App[Any], host: EventHost) -> None:
        self.app = app
        self.host = host
        self.queued_text: am.ReplyText | None = None  # the text message not yet handled
        self.agent_messages = 0  # agent events posted and not yet handled to the end
        self.opening_reply = False  # Enter started the turns and its reply is not open yet (the frames wait for it)
        self.dialog_coming = False  # an approval was asked for and its dialog is not on the stack yet
        self._turn_first_stats: Stats | None = None  # the figures of the turn's first reply (its prompt's cached part)
        self._turn_figures: TurnFigures | None = None  # the turn's replies so far (the rate shown is the turn's)
        self._call_frames: FrameHold | None = None  # frames held while a proposed call is put on screen

    def sink(self, event: AgentEvent) -> None:
        """Where the agent reports each event: recorded, then posted to the app as its message."""
        self.host.conversation.record(event)  # the transcript first, as the agent reported it
        if isinstance(event, AssistantText):
            if self.agent_messages == 0 and not self.host.leaving:
                # Nothing from the agent waits to be shown before it: text that only extends the
                # reply's open part goes straight into its stream, without a message through the
                # app's queue (a fast model sends a batch of text ten times a second).
                if self.host.reply.append_now(event.text):
                    return
            queued = self.queued_text
            if queued is not None:
                # The text posted last is still waiting in the queue: it takes this text along, so a
                # fast model costs one chat update per batch of tokens, not one per token.
                queued.more_text.append(event.text)
                return
        message = am.agent_message(event)
        if isinstance(message, (am.CallProposed, am.MalformedCall)) and not self.host.leaving:
            self._hold_for_call()
        self.queued_text = message if isinstance(message, am.ReplyText) else None
        self.agent_messages += 1
        self.app.post_message(message)

    async def show(self, message: am.AgentMessage[Any]) -> None:
        """Show an agent message (its method in ``SHOWN_BY``): skipped once the app is leaving,
        counted as handled at its end."""
        if message is self.queued_text:
            self.queued_text = None
        try:
            if not self.host.leaving and self.app.is_running:
                # Leaving mid-turn: the stopped turn's last events arrive as the screen is taken
                # down (Textual stops running before it closes the screens, and handles the
                # messages queued meanwhile), and drawing them would fail. The transcript has
                # them (``sink``).
                await SHOWN_BY[type(message)](self, message)
        finally:
            self.agent_messages -= 1
            if not self.agent_messages and not self.dialog_coming:
                self._let_call_frames_go()  # the burst a call came in is on screen

    async def _show_text(self, message: am.ReplyText) -> None:
        await self.host.reply.append(message.whole_event.text)

    async def _show_thinking(self, message: am.ReplyThinking) -> None:
        await self.host.reply.append_thinking(message.event.text)

    async def _show_turn_started(self, message: am.TurnStarted) -> None:
        await self.host.reply.count_from_now()

    async def _show_call_proposed(self, message: am.CallProposed) -> None:
        await self._add_record(self.host.call_store.proposed(message.event.call, message.event.at))

    async def _show_malformed_call(self, message: am.MalformedCall) -> None:
        await self._add_record(self.host.call_store.malformed_call(message.event))

    async def _show_call_decided(self, message: am.CallDecided) -> None:
        self.host.call_store.decided(message.event.call, message.event.allowed_by, message.event.ran_with)

    async def _show_approval_needed(self, message: am.ApprovalNeeded) -> None:
        self.host.call_store.awaiting(message.event.call)
        self.host.show_engine_state("awaiting approval")
        self.dialog_coming = True  # the frames stay held until its dialog is pushed (``ask_approval``)
        self.app.run_worker(self._ask_approval(message.event), "ask_approval", group="approvals")

    async def _show_call_started(self, message: am.CallStarted) -> None:
        self.host.call_store.started(message.event)
        self.host.show_engine_state("running tools")

    async def _show_start_not_saved(self, message: am.StartNotSaved) -> None:
        self.host.call_store.awaiting(message.event.call)
        self.host.show_engine_state("not saved", "a call waits for you")
        self.app.run_worker(self._ask_unsaved(message.event), "ask_unsaved", group="approvals")

    async def _show_call_run_unsaved(self, message: am.CallRunUnsaved) -> None:
        self.host.call_store.running(message.event.call)
        self.host.show_engine_state("running tools")
        said = visible_controls(run_unsaved_line(message.event))
        self.app.notify(said, title="run unsaved", severity="warning", timeout=15, markup=False)

    async def _show_call_progress(self, message: am.CallProgress) -> None:
        self.host.call_store.progressed(message.event)

    async def _show_call_task(self, message: am.CallTask) -> None:
        self.host.call_store.task_heard(message.event)
        self.host.show_engine_state("running tools")

    async def _show_call_finished(self, message: am.CallFinished) -> None:
        record = self.host.call_store.finished(message.event)
        if record is not None:
            await self.host.call_store.show_media(record)
        if not self.host.call_store.open:  # the last call of the reply: the model reads the results next
            self.host.show_engine_state("generating")

    async def _show_generation_rate(self, message: am.GenerationRate) -> None:
        self.host.show_engine_state("generating", f"{message.event.tokens_per_second:.1f} tok/s")

    async def _show_generation_stats(self, message: am.GenerationStats) -> None:
        event = message.event
        stats = event.stats
        self.host.status_bar.context_tokens = event.context_used
        self.host.status_bar.context_length = event.context_length
        figures = self._turn_figures = self._turn_figures or TurnFigures()
        figures.add(stats)
        rate = figures.decode_rate  # over the turn: a reply of one token has no rate of its own
        self.host.status_bar.detail = f"{rate:.1f} tok/s" if rate is not None else ""
        self._turn_first_stats = self._turn_first_stats or stats

    async def _show_result_cut(self, message: am.ResultCut) -> None:
        self.host.call_store.cut_for_model(message.event)

    async def _show_notice(self, message: am.Notice) -> None:
        await self.host.reply.add_widget(Notice(message.event.text))

    async def _show_server_request(self, message: am.ServerRequestAnswered) -> None:
        await self.host.reply.add_widget(Notice(describe_answered(message.event)))

    async def _show_turn_finished(self, message: am.TurnFinished) -> None:
        event = message.event
        note = ""
        if event.end is TurnEnd.STOPPED:
            note = STOPPED_NOTE
        elif event.error:
            note = f"error: {event.error}"
        elif event.note:
            note = end_note_line(event.note)
        await self.host.reply.finish(note)
        first, self._turn_first_stats, self._turn_figures = self._turn_first_stats, None, None
        self.host.show_engine_state("ready", cached_note(first))
        self.app.query_one(PromptInput).hold_cursor(False)

    async def _show_summary_started(self, message: am.SummaryStarted) -> None:
        event = message.event
        if self.host.agent.summarising:  # not when the turn after it began already
            self.host.show_engine_state(
                "summarising", f"exchange {event.exchange + 1} ({event.number} of {event.count})"
            )

    async def _show_summary_written(self, message: am.SummaryWritten) -> None:
        self.host.status_bar.summarised = self.host.agent.summaries_in_use

    async def _show_summary_failed(self, message: am.SummaryFailed) -> None:
        self.app.notify(
            f"exchange {message.event.exchange + 1} was not summarised: {message.event.error}. Its full text "
            "stays in the prompt; the summary is tried again after the next reply (or with /compact).",
            title="no summary",
            severity="error",
            timeout=15,
            markup=False,
        )

    async def _show_summaries_ended(self, message: am.SummariesEnded) -> None:
        if self.host.status_bar.engine_state == "summarising":  # not when the turn after it began already
            self.host.show_engine_state("ready")
        self.host.status_bar.summarised = self.host.agent.summaries_in_use
        if message.event.stopped:
            self.app.notify("summarising stopped: the exchanges not summarised stay in full", markup=False)

    async def open_reply(self) -> None:
        """Hold the prompt's cursor, show "generating" and open the reply, before the frame the turn
        waits for (the one Enter held the frames for: ``PromptInput.hold_frames``, let go by
        ``wait_until_drawn``)."""
        prompt_box = self.app.query_one(PromptInput)
        prompt_box.hold_cursor(True)
        self.host.show_engine_state("generating")
        await self.host.reply.start()
        self.opening_reply = False

    def let_frames_go(self) -> None:
        """What Enter sent is shown, or will not be soon: the frames it held are drawn."""
        for prompt_box in self.app.query(PromptInput):  # none once the screen is taken down
            prompt_box.release_frames()

    async def wait_until_drawn(self) -> None:
        """Wait until the prompt just sent and the opened reply are drawn: the model starts after that frame."""
        # And after one more when that frame left a layout to do (a widget, the prompt input
        # cleared, measured itself again); not for a scroll bar's thumb moved after the layout.
        chat = self.host.chat
        drawn = asyncio.Event()
        chat.call_after_refresh(drawn.set)
        # The frames Enter held go once that wait is set (the chat's messages are handled in
        # order): the frame they make is the one waited for, not the one after it.
        chat.call_later(self.let_frames_go)
        try:
            await asyncio.wait_for(drawn.wait(), OPENING_WAIT)
            if layout_pending(chat.screen):
                await asyncio.wait_for(chat.wait_for_refresh(), OPENING_WAIT)
        except TimeoutError:
            pass  # a screen that does not draw (the app closing) does not hold the turn back

    def _hold_for_call(self) -> None:
        """Hold the frames while a proposed call is put on screen: its row, its card and, when it
        is asked about, its dialog come in the same few milliseconds, and are drawn in one frame
        (``FrameHold``); let go once the agent's messages are handled and no dialog is coming."""
        if self._call_frames is None:
            self._call_frames = FrameHold(self.app)
        self._call_frames.hold(CALL_HOLD_LIMIT)

    def _let_call_frames_go(self) -> None:
        if self._call_frames is not None:
            self._call_frames.release()

    async def _add_record(self, record: CallRecord) -> None:
        await self.host.reply.add_widget(self.host.call_store.add(record))

    def _decided_elsewhere(self, screen: Screen[Any], what: str, decision: asyncio.Future[Any]) -> None:
        """A dialog's decision was settled without it: the turn it was for was stopped (the call
        stopped, the conversation cleared or another opened), or it was answered some other way."""
        if decision.cancelled():
            withdraw_dialog(self.app, screen, what, "the turn it was for was stopped")
        elif screen.is_current:
            screen.dismiss(None)

    async def _ask_unsaved(self, event: StartNotSaved) -> None:
        """Not sent: what now (``UnsavedStartScreen``); leaving the dialog any other way does not run
        it. A worker of the app's (group ``approvals``)."""
        if event.decision.done():
            return
        said = visible_controls(not_sent_line(event))
        self.app.notify(said, title="call not sent", severity="error", timeout=15, markup=False)
        screen = UnsavedStartScreen(event.call, event.problem)
        event.decision.add_done_callback(
            partial(self._decided_elsewhere, screen, f"the question about {event.call.model_name}")
        )
        choice = await self.app.push_screen_wait(screen)
        if not event.decision.done():
            event.decision.set_result(choice or UnsavedChoice.DONT_RUN)

    async def _ask_approval(self, event: ApprovalNeeded) -> None:
        """The approval dialog (``ApprovalScreen``), pushed in the frame the call's row and card
        come in. A worker of the app's (group ``approvals``)."""
        try:
            if event.decision.done():
                return
            screen = ApprovalScreen(event.call, event.waiting, event.recorded, event.why)
            collect_after_frame(screen)  # built and drawn before the collector runs
            event.decision.add_done_callback(
                partial(self._decided_elsewhere, screen, f"the approval of {event.call.model_name}")
            )
            answered = self.app.push_screen(screen, wait_for_dismiss=True)  # on the stack now: its frame is next
        finally:
            self.dialog_coming = False
            self._let_call_frames_go()
        decision = await answered
        if not event.decision.done():
            event.decision.set_result(decision or ApprovalDecision(ApprovalChoice.DENY_ALL))


# Each agent message's method, built once (``AgentEventView.show``).
SHOWN_BY: dict[type[am.AgentMessage[Any]], Callable[[AgentEventView, Any], Awaitable[None]]] = {
    am.ReplyText: AgentEventView._show_text,
    am.ReplyThinking: AgentEventView._show_thinking,
    am.TurnStarted: AgentEventView._show_turn_started,
    am.CallProposed: AgentEventView._show_call_proposed,
    am.MalformedCall: AgentEventView._show_malformed_call,
    am.CallDecided: AgentEventView._show_call_decided,
    am.ApprovalNeeded: AgentEventView._show_approval_needed,
    am.CallStarted: AgentEventView._show_call_started,
    am.StartNotSaved: AgentEventView._show_start_not_saved,
    am.CallRunUnsaved: AgentEventView._show_call_run_unsaved,
    am.CallProgress: AgentEventView._show_call_progress,
    am.CallTask: AgentEventView._show_call_task,
    am.CallFinished: AgentEventView._show_call_finished,
    am.GenerationRate: AgentEventView._show_generation_rate,
    am.GenerationStats: AgentEventView._show_generation_stats,
    am.ResultCut: AgentEventView._show_result_cut,
    am.Notice: AgentEventView._show_notice,
    am.ServerRequestAnswered: AgentEventView._show_server_request,
    am.TurnFinished: AgentEventView._show_turn_finished,
    am.SummaryStarted: AgentEventView._show_summary_started,
    am.SummaryWritten: AgentEventView._show_summary_written,
    am.SummaryFailed: AgentEventView._show_summary_failed,
    am.SummariesEnded: AgentEventView._show_summaries_ended,
}
