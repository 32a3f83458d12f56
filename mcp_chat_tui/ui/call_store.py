"""The tool calls of the conversation as the UI keeps them: a record each, its card in the chat,
and which of the agent's calls each open record belongs to."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from textual.widget import Widget

from mcp_chat_tui.agent.budget import cut_label
from mcp_chat_tui.agent.events import (
    CallFinished,
    CallProgress,
    CallStarted,
    CallTask,
    MalformedCall,
    PlannedCall,
    ResultCut,
)
from mcp_chat_tui.agent.turn import repeat_reason
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.ui.call_records import RUN_UNSAVED_NOTE, CallRecord
from mcp_chat_tui.ui.format import DisplayClock
from mcp_chat_tui.ui.widgets.call_columns import PROGRESS_COLUMNS
from mcp_chat_tui.ui.widgets.chat import ToolCallCard
from mcp_chat_tui.ui.widgets.media import MediaView, StructuredPreview
from mcp_chat_tui.ui.widgets.sidebar import ToolCallTable


class CallStore:
    """Makes and changes the call records; the sidebar's table lists them and each change is
    drawn in its row and its card.

    Args:
        clock: how the cards write times.
        table: the sidebar's calls table (asked for each time: it is mounted after the app starts).
    """

    def __init__(self, clock: DisplayClock, table: Callable[[], ToolCallTable]) -> None:
        self.clock = clock
        self._table = table
        self._count = 0
        self.open: dict[int, CallRecord] = {}  # the agent's calls not finished yet, by ``id(call)``
        self.malformed: dict[str, CallRecord] = {}  # by call id, until the model is told
        self.cards: dict[str, ToolCallCard] = {}  # by record key
        self.pending_keys: dict[str, str] = {}  # a loaded call left without a result: call id -> record key

    @property
    def table(self) -> ToolCallTable:
        return self._table()

    def new_record(
        self, call_id: str, server: str, tool: str, arguments: dict[str, Any], proposed_at: datetime | None = None
    ) -> CallRecord:
        self._count += 1
        return CallRecord(
            key=f"call-{self._count}",
            call_id=call_id,
            server=server,
            tool=tool,
            arguments=dict(arguments),
            proposed_at=proposed_at or datetime.now(),
        )

    def add(self, record: CallRecord, *, follow: bool = True) -> ToolCallCard:
        """List ``record`` in the sidebar (``follow``: its cursor moves to it) and make its card."""
        self.table.add_record(record, follow=follow)
        return self.card_for(record)

    def forget(self) -> None:
        """Drop every record, row and card: the conversation they belong to left the screen."""
        self.table.forget_all()
        self.open.clear()
        self.malformed.clear()
        self.cards.clear()
        self.pending_keys.clear()

    def card_for(self, record: CallRecord) -> ToolCallCard:
        card = ToolCallCard(record, self.clock)
        self.cards[record.key] = card
        return card

    def update(self, record: CallRecord, *, state: CallState | None = None) -> None:
        """Draw ``record`` again in its row and its card, in ``state`` when given."""
        if state is not None:
            record.state = state
        self.table.update_record(record)
        card = self.cards.get(record.key)
        if card is not None:
            card.refresh_card()

    def proposed(self, call: PlannedCall, at: datetime | None = None) -> CallRecord:
        record = self.new_record(call.id, call.spec.server if call.spec else "", call.tool, call.arguments, at)
        record.given_id, record.title = call.given_id, call.title
        self.open[id(call)] = record
        return record

    def malformed_call(self, event: MalformedCall) -> CallRecord:
        record = self.new_record(event.id, "", "malformed call", {}, event.at)
        record.state, record.raw, record.reason = CallState.MALFORMED, event.raw, event.reason
        self.malformed[event.id] = record
        return record

    def decided(self, call: PlannedCall, allowed_by: str, ran_with: dict[str, Any] | None = None) -> None:
        record = self.open.get(id(call))
        if record is not None:
            record.allowed_by, record.ran_with = allowed_by, ran_with

    def awaiting(self, call: PlannedCall) -> None:
        record = self.open.get(id(call))
        if record is not None:
            self.update(record, state=CallState.AWAITING)

    def started(self, event: CallStarted) -> None:
        record = self.open.get(id(event.call))
        if record is not None:
            record.started_at = event.started_at
            record.started_clock = time.perf_counter()
            self.update(record, state=CallState.RUNNING)

    def running(self, call: PlannedCall) -> None:
        """The call goes out after all (run unsaved, after its start could not be saved)."""
        record = self.open.get(id(call))
        if record is not None:
            record.allowed_by += RUN_UNSAVED_NOTE
            self.update(record, state=CallState.RUNNING)

    def progressed(self, event: CallProgress) -> None:
        """A running call's latest progress, drawn in its row (bar and message) and its card."""
        record = self.open.get(id(event.call))
        if record is not None:
            record.progress = event.progress
            self.table.update_record(record, PROGRESS_COLUMNS)  # only its bar and message changed
            card = self.cards.get(record.key)
            if card is not None:
                card.refresh_card()

    def task_heard(self, event: CallTask) -> None:
        """The call runs as a task: its status and message in its row and card (a resumed call whose
        task is followed again runs from now)."""
        record = self.open.get(id(event.call))
        if record is None:
            return
        record.task = event.task
        if record.state is not CallState.RUNNING:
            record.started_clock = time.perf_counter()
            self.update(record, state=CallState.RUNNING)
            return
        self.table.update_record(record, PROGRESS_COLUMNS)
        card = self.cards.get(record.key)
        if card is not None:
            card.refresh_card()

    def finished(self, event: CallFinished) -> CallRecord | None:
        """The call's outcome into its record; returns the record (None for a malformed call)."""
        if event.status is CallState.MALFORMED:
            record = self.malformed.pop(event.call.id, None)
            if record is not None:
                record.content_for_model = event.content_for_model
            return None
        record = self.open.pop(id(event.call), None)
        if record is None:
            return None
        record.duration = event.duration
        if event.status is CallState.CANCELLED and event.duration is None:  # never sent after all
            record.started_at = record.started_clock = None
        record.result = event.result
        if event.result is not None and event.result.progress is not None:
            record.progress = event.result.progress
        if event.result is not None and event.result.task is not None:
            record.task = event.result.task
        record.content_for_model = event.content_for_model
        record.repeat_of = event.repeat_of
        if event.result is None:
            record.reason = repeat_reason(event.repeat_of) if event.repeat_of else event.content_for_model
        self.update(record, state=event.status)
        return record

    def cut_for_model(self, event: ResultCut) -> None:
        """The model got only the start of the call's result: say so on its card and in its detail."""
        for record in reversed(self.table.records.values()):
            if record.call_id == event.call.id:
                record.cut_for_model = cut_label(event.kept_tokens, event.total_tokens)
                self.update(record)
                return

    async def show_media(self, record: CallRecord) -> None:
        """The result's structured content, images and audio, under the call's card in the chat."""
        card = self.cards.get(record.key)
        shown: list[Widget] = [StructuredPreview(record.structured)] if record.structured is not None else []
        shown += [MediaView(part) for part in record.media]
        if card is not None and isinstance(card.parent, Widget) and shown:
            await card.parent.mount_all(shown, after=card)

    def resumed(self, call: PlannedCall) -> None:
        """A call the loaded file left open goes on as ``call``: its record follows it."""
        record = self.table.records.get(self.pending_keys.get(call.id, ""))
        if record is None:
            return
        if call.spec is not None:  # the file names the call as the model did; show the real tool
            record.server, record.tool, record.title = call.server, call.tool, call.title
            self.update(record)
        self.open[id(call)] = record
