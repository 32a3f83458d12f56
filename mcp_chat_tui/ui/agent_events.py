"""What the app does with the agent's events: each event's message (``ui/agent_messages.py``)
has its ``@on`` handler here.

A part of ``ChatApp`` (mixed into it), kept apart so each file reads in one go. The messages are
handled in the order the agent reported the events; text that only extends the open part of the
reply skips the queue (``_sink``).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, TypeVar

from textual import on, work
from textual.screen import Screen

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
from mcp_chat_tui.core.text import visible_controls
from mcp_chat_tui.engine import Stats
from mcp_chat_tui.ui import agent_messages as am
from mcp_chat_tui.ui.app_base import ChatAppBase
from mcp_chat_tui.ui.call_records import CallRecord
from mcp_chat_tui.ui.frame_hold import FrameHold
from mcp_chat_tui.ui.heap import collect_after_frame
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from mcp_chat_tui.ui.screens.deciding import withdraw_dialog
from mcp_chat_tui.ui.screens.unsaved import UnsavedStartScreen
from mcp_chat_tui.ui.streaming import drawing_cost
from mcp_chat_tui.ui.textual_private import layout_pending
from mcp_chat_tui.ui.transcript_view import STOPPED_NOTE, end_note_line
from mcp_chat_tui.ui.widgets.chat import Notice
from mcp_chat_tui.ui.widgets.prompt import PromptInput

OPENING_WAIT = 0.5  # seconds a turn waits at most for the screen showing its prompt to be drawn
CALL_HOLD_LIMIT = 0.1  # seconds a proposed call holds the frames at most (``_hold_for_call``)


def cached_note(stats: Stats | None) -> str:
    """How much of a prompt came from the KV cache (kept in memory, or resumed from the conversation's file)."""
    if stats is None or stats.prefilled_tokens >= stats.prompt_tokens:
        return ""
    return f"· {stats.prompt_tokens - stats.prefilled_tokens} of {stats.prompt_tokens} prompt tokens were cached"


M = TypeVar("M", bound=am.AgentMessage[Any])
View = TypeVar("View", bound=ChatAppBase)


def handles(method: Callable[[View, M], Awaitable[None]]) -> Callable[[View, M], Awaitable[None]]:
    """Wrap an agent message's handler: skipped once the app is leaving, counted as handled at its end."""

    @functools.wraps(method)
    async def handler(self: View, message: M) -> None:
        if message is self._queued_text:
            self._queued_text = None
        try:
            if not self._shut_down and self.is_running:
                # Leaving mid-turn: the stopped turn's last events arrive as the screen is taken
                # down (Textual stops running before it closes the screens, and handles the
                # messages queued meanwhile), and drawing them would fail. The transcript has
                # them (``_sink``).
                await method(self, message)
        finally:
            self._agent_messages -= 1
            if not self._agent_messages and not self._dialog_coming:
                self._let_call_frames_go()  # the burst a call came in is on screen

    return handler


class AgentEventView(ChatAppBase):
    """The agent's events shown in the chat, the sidebar and the status bar: uses ``ChatApp``'s
    ``reply``, ``call_store``, ``chat``, ``status_bar`` and ``_engine_state``."""

    _turn_first_stats: Stats | None = None  # the figures of the turn's first reply (its prompt's cached part)
    _turn_figures: TurnFigures | None = None  # the turn's replies so far (the rate shown is the turn's)
    _opening_reply = False  # Enter started the turns and its reply is not open yet (the frames wait for it)
    _call_frames: FrameHold | None = None  # frames held while a proposed call is put on screen
    _dialog_coming = False  # an approval was asked for and its dialog is not on the stack yet

    def _sink(self, event: AgentEvent) -> None:
        self.conversation.record(event)  # the transcript first, as the agent reported it
        if isinstance(event, AssistantText):
            if self._agent_messages == 0 and not self._shut_down:
                # Nothing from the agent waits to be shown before it: text that only extends the
                # reply's open part goes straight into its stream, without a message through the
                # app's queue (a fast model sends a batch of text ten times a second).
                if self.reply.append_now(event.text):
                    return
            queued = self._queued_text
            if queued is not None:
                # The text posted last is still waiting in the queue: it takes this text along, so a
                # fast model costs one chat update per batch of tokens, not one per token.
                queued.more_text.append(event.text)
                return
        message = am.agent_message(event)
        if isinstance(message, (am.CallProposed, am.MalformedCall)) and not self._shut_down:
            self._hold_for_call()
        self._queued_text = message if isinstance(message, am.ReplyText) else None
        self._agent_messages += 1
        self.post_message(message)

    @on(am.ReplyText)
    @handles
    async def _show_text(self, message: am.ReplyText) -> None:
        await self.reply.append(message.whole_event.text)

    @on(am.ReplyThinking)
    @handles
    async def _show_thinking(self, message: am.ReplyThinking) -> None:
        await self.reply.append_thinking(message.event.text)

    @on(am.TurnStarted)
    @handles
    async def _show_turn_started(self, message: am.TurnStarted) -> None:
        await self.reply.count_from_now()

    @on(am.CallProposed)
    @handles
    async def _show_call_proposed(self, message: am.CallProposed) -> None:
        await self._add_record(self.call_store.proposed(message.event.call, message.event.at))

    @on(am.MalformedCall)
    @handles
    async def _show_malformed_call(self, message: am.MalformedCall) -> None:
        await self._add_record(self.call_store.malformed_call(message.event))

    @on(am.CallDecided)
    @handles
    async def _show_call_decided(self, message: am.CallDecided) -> None:
        self.call_store.decided(message.event.call, message.event.allowed_by, message.event.ran_with)

    @on(am.ApprovalNeeded)
    @handles
    async def _show_approval_needed(self, message: am.ApprovalNeeded) -> None:
        self.call_store.awaiting(message.event.call)
        self._engine_state("awaiting approval")
        self._dialog_coming = True  # the frames stay held until its dialog is pushed (``ask_approval``)
        self.ask_approval(message.event)

    @on(am.CallStarted)
    @handles
    async def _show_call_started(self, message: am.CallStarted) -> None:
        self.call_store.started(message.event)
        self._engine_state("running tools")

    @on(am.StartNotSaved)
    @handles
    async def _show_start_not_saved(self, message: am.StartNotSaved) -> None:
        self.call_store.awaiting(message.event.call)
        self._engine_state("not saved", "a call waits for you")
        self.ask_unsaved(message.event)

    @on(am.CallRunUnsaved)
    @handles
    async def _show_call_run_unsaved(self, message: am.CallRunUnsaved) -> None:
        self.call_store.running(message.event.call)
        self._engine_state("running tools")
        said = visible_controls(run_unsaved_line(message.event))
        self.notify(said, title="run unsaved", severity="warning", timeout=15, markup=False)

    @on(am.CallProgress)
    @handles
    async def _show_call_progress(self, message: am.CallProgress) -> None:
        self.call_store.progressed(message.event)

    @on(am.CallTask)
    @handles
    async def _show_call_task(self, message: am.CallTask) -> None:
        self.call_store.task_heard(message.event)
        self._engine_state("running tools")

    @on(am.CallFinished)
    @handles
    async def _show_call_finished(self, message: am.CallFinished) -> None:
        record = self.call_store.finished(message.event)
        if record is not None:
            await self.call_store.show_media(record)
        if not self.call_store.open:  # the last call of the reply: the model reads the results next
            self._engine_state("generating")

    @on(am.GenerationRate)
    @handles
    async def _show_generation_rate(self, message: am.GenerationRate) -> None:
        self._engine_state("generating", f"{message.event.tokens_per_second:.1f} tok/s")

    @on(am.GenerationStats)
    @handles
    async def _show_generation_stats(self, message: am.GenerationStats) -> None:
        event = message.event
        stats = event.stats
        self.status_bar.context_tokens = event.context_used
        self.status_bar.context_length = event.context_length
        figures = self._turn_figures = self._turn_figures or TurnFigures()
        figures.add(stats)
        rate = figures.decode_rate  # over the turn: a reply of one token has no rate of its own
        self.status_bar.detail = f"{rate:.1f} tok/s" if rate is not None else ""
        self._turn_first_stats = self._turn_first_stats or stats

    @on(am.ResultCut)
    @handles
    async def _show_result_cut(self, message: am.ResultCut) -> None:
        self.call_store.cut_for_model(message.event)

    @on(am.Notice)
    @handles
    async def _show_notice(self, message: am.Notice) -> None:
        await self.reply.add_widget(Notice(message.event.text))

    @on(am.ServerRequestAnswered)
    @handles
    async def _show_server_request(self, message: am.ServerRequestAnswered) -> None:
        await self.reply.add_widget(Notice(describe_answered(message.event)))

    @on(am.TurnFinished)
    @handles
    async def _show_turn_finished(self, message: am.TurnFinished) -> None:
        event = message.event
        note = ""
        if event.end is TurnEnd.STOPPED:
            note = STOPPED_NOTE
        elif event.error:
            note = f"error: {event.error}"
        elif event.note:
            note = end_note_line(event.note)
        await self.reply.finish(note)
        first, self._turn_first_stats, self._turn_figures = self._turn_first_stats, None, None
        self._engine_state("ready", cached_note(first))
        self.query_one(PromptInput).hold_cursor(False)

    @on(am.SummaryStarted)
    @handles
    async def _show_summary_started(self, message: am.SummaryStarted) -> None:
        event = message.event
        if self.agent.summarising:  # not when the turn after it began already
            self._engine_state("summarising", f"exchange {event.exchange + 1} ({event.number} of {event.count})")

    @on(am.SummaryWritten)
    @handles
    async def _show_summary_written(self, message: am.SummaryWritten) -> None:
        self.status_bar.summarised = self.agent.summaries_in_use

    @on(am.SummaryFailed)
    @handles
    async def _show_summary_failed(self, message: am.SummaryFailed) -> None:
        self.notify(
            f"exchange {message.event.exchange + 1} was not summarised: {message.event.error}. Its full text "
            "stays in the prompt; the summary is tried again after the next reply (or with /compact).",
            title="no summary",
            severity="error",
            timeout=15,
            markup=False,
        )

    @on(am.SummariesEnded)
    @handles
    async def _show_summaries_ended(self, message: am.SummariesEnded) -> None:
        if self.status_bar.engine_state == "summarising":  # not when the turn after it began already
            self._engine_state("ready")
        self.status_bar.summarised = self.agent.summaries_in_use
        if message.event.stopped:
            self.notify("summarising stopped: the exchanges not summarised stay in full", markup=False)

    async def _open_reply(self) -> None:
        """Hold the prompt's cursor, show "generating" and open the reply, before the frame the turn
        waits for (the one Enter held the frames for: ``PromptInput.hold_frames``, let go by
        ``_wait_until_drawn``)."""
        prompt_box = self.query_one(PromptInput)
        prompt_box.hold_cursor(True)
        self._engine_state("generating")
        await self.reply.start()
        self._opening_reply = False

    def _let_frames_go(self) -> None:
        """What Enter sent is shown, or will not be soon: the frames it held are drawn."""
        for prompt_box in self.query(PromptInput):  # none once the screen is taken down
            prompt_box.release_frames()

    async def _wait_until_drawn(self) -> None:
        """Wait until the prompt just sent and the opened reply are drawn: the model starts after that frame."""
        # And after one more when that frame left a layout to do (a widget, the prompt input
        # cleared, measured itself again); not for a scroll bar's thumb moved after the layout.
        drawn = asyncio.Event()
        self.chat.call_after_refresh(drawn.set)
        # The frames Enter held go once that wait is set (the chat's messages are handled in
        # order): the frame they make is the one waited for, not the one after it.
        self.chat.call_later(self._let_frames_go)
        try:
            await asyncio.wait_for(drawn.wait(), OPENING_WAIT)
            if layout_pending(self.chat.screen):
                await asyncio.wait_for(self.chat.wait_for_refresh(), OPENING_WAIT)
        except TimeoutError:
            pass  # a screen that does not draw (the app closing) does not hold the turn back

    @property
    def _thread_load(self) -> Any:
        """How busy generating keeps this process (``Engine``'s optional ``thread_load``): None
        for a model that does not run in it."""
        return self.engine.thread_load

    def _model_cost(self) -> float:
        """What each second of this thread's CPU costs the model while it generates, from how busy
        generating keeps the process (``_thread_load``; ``drawing_cost``)."""
        load = self._thread_load
        if load is None:
            return 0.0
        return drawing_cost(load.share, getattr(load, "spare_cores", 0.0))

    def _hold_for_call(self) -> None:
        """Hold the frames while a proposed call is put on screen: its row, its card and, when it
        is asked about, its dialog come in the same few milliseconds, and are drawn in one frame
        (``FrameHold``); let go once the agent's messages are handled and no dialog is coming."""
        if self._call_frames is None:
            self._call_frames = FrameHold(self)
        self._call_frames.hold(CALL_HOLD_LIMIT)

    def _let_call_frames_go(self) -> None:
        if self._call_frames is not None:
            self._call_frames.release()

    async def _add_record(self, record: CallRecord) -> None:
        await self.reply.add_widget(self.call_store.add(record))

    def _decided_elsewhere(self, screen: Screen[Any], what: str, decision: asyncio.Future[Any]) -> None:
        """A dialog's decision was settled without it: the turn it was for was stopped (the call
        stopped, the conversation cleared or another opened), or it was answered some other way."""
        if decision.cancelled():
            withdraw_dialog(self, screen, what, "the turn it was for was stopped")
        elif screen.is_current:
            screen.dismiss(None)

    @work(group="approvals")
    async def ask_unsaved(self, event: StartNotSaved) -> None:
        """Not sent: what now (``UnsavedStartScreen``); leaving the dialog any other way does not run it."""
        if event.decision.done():
            return
        said = visible_controls(not_sent_line(event))
        self.notify(said, title="call not sent", severity="error", timeout=15, markup=False)
        screen = UnsavedStartScreen(event.call, event.problem)
        event.decision.add_done_callback(
            partial(self._decided_elsewhere, screen, f"the question about {event.call.model_name}")
        )
        choice = await self.push_screen_wait(screen)
        if not event.decision.done():
            event.decision.set_result(choice or UnsavedChoice.DONT_RUN)

    @work(group="approvals")
    async def ask_approval(self, event: ApprovalNeeded) -> None:
        try:
            if event.decision.done():
                return
            screen = ApprovalScreen(event.call, event.waiting, event.recorded, event.why)
            collect_after_frame(screen)  # built and drawn before the collector runs
            event.decision.add_done_callback(
                partial(self._decided_elsewhere, screen, f"the approval of {event.call.model_name}")
            )
            answered = self.push_screen(screen, wait_for_dismiss=True)  # on the stack now: its frame is next
        finally:
            self._dialog_coming = False
            self._let_call_frames_go()
        decision = await answered
        if not event.decision.done():
            event.decision.set_result(decision or ApprovalDecision(ApprovalChoice.DENY_ALL))
