"""Keeps a ``Transcript`` up to date as a conversation happens, and hands it to an ``AutoSaver``.

The UI and the console feed it what happened (prompt, text, proposals,
choices, results); every change is saved, streamed text at most every half
second, so a crash loses at most the text being streamed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.core.tools import CutForModel
from mcp_chat_tui.transcript.format import render_exchange
from mcp_chat_tui.transcript.model import (
    RETRIED,
    RETRIED_NOTE,
    UNFINISHED,
    Exchange,
    Proposal,
    ServerRequest,
    Step,
    ToolResult,
    Transcript,
)
from mcp_chat_tui.transcript.store import AutoSaver
from mcp_chat_tui.transcript.unsaved_runs import note_unsaved_run


class TranscriptRecorder:
    def __init__(
        self, transcript: Transcript | None = None, saver: AutoSaver | None = None, *, stream_interval: float = 0.5
    ) -> None:
        self.transcript = transcript or Transcript()
        self.saver = saver
        self.cannot_save: str | None = None  # why there is no saver although the conversation is to be saved
        self.stream_interval = stream_interval
        self._timer: asyncio.TimerHandle | None = None
        self._cached = ""
        self._cached_parts: list[str] = []  # each cached exchange's text, so one can be written again
        self._cached_count = 0

    # ----- what happened ---------------------------------------------------------------------

    def user(self, prompt: str, attachments: Sequence[Attachment] = ()) -> None:
        self.transcript.exchanges.append(Exchange(user=prompt, attachments=list(attachments)))
        self.save()

    def retried(self) -> None:
        """``/retry``: the last reply is kept as discarded (what its calls did stays on record, and a call
        of it is never resumed: only the last exchange's are) and its prompt is asked again in a new
        exchange, with its attachments."""
        last = self._exchange()
        last.end, last.error, last.note = RETRIED, "", RETRIED_NOTE
        self.transcript.exchanges.append(Exchange(user=last.user, attachments=list(last.attachments)))
        self.save()

    def reply_started(self, model: str, settings: dict[str, Any] | None = None, switched_from: str = "") -> None:
        """The reply of ``model`` starts, made with generation ``settings`` (those not at their default);
        ``switched_from``: the model ``/model`` switched from since the reply before (none: "")."""
        exchange = self._exchange()
        if exchange.model is None:
            exchange.model, exchange.settings = model, dict(settings or {})
            exchange.switched_from = switched_from
            exchange.steps.append(Step())
        exchange.end = UNFINISHED  # until ``turn_ended``: a file cut before then reads as cut short
        self.save()

    def reply_goes_on(self) -> None:
        """The last reply goes on (a resumed conversation's open turn): unfinished until ``turn_ended``."""
        if self.transcript.exchanges and self.transcript.exchanges[-1].model is not None:
            exchange = self.transcript.exchanges[-1]
            exchange.end, exchange.error, exchange.note = UNFINISHED, "", ""
            self.save()

    def text(self, delta: str) -> None:
        self._open_step().text += delta
        self.save(soon=True)

    def thought(self, delta: str) -> None:
        step = self._open_step()
        step.thought = (step.thought or "") + delta
        self.save(soon=True)

    def proposed(self, call: dict[str, Any], at: datetime | None = None) -> None:
        step = self._current_step()
        if any(p.result is not None for p in step.proposals):
            step = self._new_step()
        step.proposals.append(Proposal(call=call, proposed_at=_second(at)))
        self.save()

    def started(self, call_id: str, server: str, at: datetime, tool: str = "") -> None:
        """The call goes to ``server`` now (as ``tool`` when the model named it otherwise);
        ``persisted()`` waits until the file says so."""
        proposal = self._find(call_id)
        if proposal is not None:
            proposal.started_at, proposal.server, proposal.tool = _second(at), server, tool
            self.save()

    def task_created(self, call_id: str, task_id: str) -> None:
        """The call runs as task ``task_id`` at its server: written at once, so a conversation resumed
        after the app was closed fetches the task's result instead of calling again."""
        proposal = self._find(call_id)
        if proposal is not None and proposal.task_id != task_id:
            proposal.task_id = task_id
            self.save()

    def run_unsaved(self, call_id: str) -> str | None:
        """The call goes out although its start is not on disk (the user chose so): the file says so
        once saving works again, and a note outside the conversation's folder says it until then
        (``transcript/unsaved_runs.py``). Returns why that note could not be written (None: it was)."""
        proposal = self._find(call_id)
        if proposal is None:
            return None
        proposal.run_unsaved = True
        problem = note_unsaved_run(self.saver.path, proposal) if self.saver is not None else self.cannot_save
        self.save()
        return problem

    def chose(self, call_id: str, choice: str, allowed_by: str = "", ran_with: dict[str, Any] | None = None) -> None:
        """The choice made for a call, who made it, and the arguments the user edited it to (if any)."""
        proposal = self._find(call_id)
        if proposal is not None:
            proposal.choice, proposal.allowed_by, proposal.ran_with = choice, allowed_by, ran_with
            self.save()

    def finished(self, result: ToolResult, *, sent: bool = True) -> None:
        """The call's outcome; ``sent`` False: it never went to its server (stopped, or its start
        could not be saved), so the start recorded for it is taken back."""
        proposal = self._find(result.call_id)
        if proposal is not None:
            proposal.result = result
            if not sent:
                proposal.started_at = None
            self.save()

    def cut_for_model(self, call_id: str, cut: CutForModel) -> None:
        """The model got only the start of call ``call_id``'s result (in any exchange: a resumed
        conversation's results are fitted to the context when it goes on); the result stays whole."""
        exchanges = self.transcript.exchanges
        for index in range(len(exchanges) - 1, -1, -1):
            for step in exchanges[index].steps:
                for proposal in step.proposals:
                    if proposal.call_id == call_id and proposal.result is not None:
                        if proposal.result.cut != cut:
                            proposal.result.cut = cut
                            self._rerender(index)
                            self.save()
                        return

    def server_request(self, request: ServerRequest) -> None:
        """A server's request and its answer, in the step under way (or the last one)."""
        request.at = _second(request.at)
        self._current_step().requests.append(request)
        self.save()

    def summarised(self, index: int, summary: str) -> None:
        """The agent's turn ``index`` (0-based; replies ``/retry`` discarded are not turns) has its
        summary, the ``📝:`` line of its exchange."""
        live = self.transcript.live_exchanges
        if 0 <= index < len(live):
            live[index].summary = summary
            self._rerender(next(i for i, e in enumerate(self.transcript.exchanges) if e is live[index]))
            self.save()

    def turn_ended(self, end: str | None = None, error: str = "", *, note: str = "", empty_reply: bool = False) -> None:
        """The reply is over; ``end`` is "stopped", "error", "no_answer", "tool_round_limit" or
        "repeated_calls" when it did not simply answer, ``note`` the line saying why; ``empty_reply``:
        its last generation wrote nothing (no text, no calls), which the conversation still holds."""
        if self.transcript.exchanges and self.transcript.exchanges[-1].model is not None:
            exchange = self.transcript.exchanges[-1]
            exchange.end, exchange.error, exchange.note = end, error, note
            if (end is None or empty_reply) and exchange.steps and exchange.steps[-1].proposals:
                exchange.steps.append(Step())  # the model answered the results with no text: kept, so no answer is due
        self.save()

    # ----- saving ----------------------------------------------------------------------------

    def save(self, *, soon: bool = False) -> None:
        """Hand the current text to the saver; ``soon`` (streamed text) coalesces saves for a moment."""
        if self.saver is None:
            return
        if soon:
            if self._timer is None:
                try:
                    loop = asyncio.get_running_loop()
                except RuntimeError:
                    self.saver.save(self.rendered())
                    return
                self._timer = loop.call_later(self.stream_interval, self._timer_fired)
            return
        self._cancel_timer()
        self.saver.save(self.rendered())

    async def persisted(self) -> str | None:
        """Wait (off the event loop) until everything recorded so far was tried; None when it is on
        disk (or nothing is to be saved: ``--no-save``), else why not in one line (the file, the OS
        error; ``cannot_save`` when the file could not be taken at all)."""
        saver = self.saver
        if saver is None:
            return self.cannot_save
        self._cancel_timer()  # streamed text waiting for its save goes now, with the rest
        saver.save(self.rendered())
        if await asyncio.to_thread(saver.flush):
            return None
        return saver.unsaved

    def _timer_fired(self) -> None:
        self._timer = None
        if self.saver is not None:
            self.saver.save(self.rendered())

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def rendered(self) -> str:
        """The whole file; exchanges before the last are rendered once and kept."""
        exchanges = self.transcript.exchanges
        if self._cached_count < len(exchanges) - 1:
            # joined once for all the exchanges new since the last call: adding them one by one to
            # the string would copy it each time (a loaded 50 MB file: hours)
            done = [render_exchange(exchange) for exchange in exchanges[self._cached_count : -1]]
            self._cached_parts += done
            self._cached = "".join([self._cached, *done])
            self._cached_count = len(exchanges) - 1
        return self._cached + (render_exchange(exchanges[-1]) if exchanges else "")

    def _rerender(self, index: int) -> None:
        """Exchange ``index`` changed: render it again if it is one of those kept rendered."""
        if index < self._cached_count:
            self._cached_parts[index] = render_exchange(self.transcript.exchanges[index])
            self._cached = "".join(self._cached_parts)

    def reset(self, transcript: Transcript) -> None:
        """Start over with another conversation (e.g. after clearing the chat)."""
        self._cancel_timer()
        self.transcript = transcript
        self.cannot_save = None
        self._cached, self._cached_parts, self._cached_count = "", [], 0

    def close(self) -> None:
        self._cancel_timer()
        if self.saver is not None:
            self.saver.save(self.rendered())
            self.saver.close()

    # ----- finding the place -----------------------------------------------------------------

    def _exchange(self) -> Exchange:
        if not self.transcript.exchanges:
            self.transcript.exchanges.append(Exchange(user=""))
        return self.transcript.exchanges[-1]

    def _current_step(self) -> Step:
        exchange = self._exchange()
        if exchange.model is None:
            exchange.model = "model"
        if not exchange.steps:
            exchange.steps.append(Step())
        return exchange.steps[-1]

    def _new_step(self) -> Step:
        step = Step()
        self._exchange().steps.append(step)
        return step

    def _open_step(self) -> Step:
        """The step new text belongs to: a new one once the current step has proposed calls."""
        step = self._current_step()
        return self._new_step() if step.proposals else step

    def _find(self, call_id: str) -> Proposal | None:
        for step in reversed(self._exchange().steps):
            for proposal in step.proposals:
                if proposal.call_id == call_id and proposal.result is None:
                    return proposal
        return None


def _second(moment: datetime | None) -> datetime | None:
    """Times are kept to the second, as the file writes them."""
    return moment.replace(microsecond=0) if moment is not None else None
