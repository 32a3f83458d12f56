"""One conversation's life, below both front ends (the app and ``--plain``/``-p``).

``Conversation`` records the agent's events into the transcript, saves it to its file (the file's
lock held by the saver, the model's KV cache kept beside it), keeps calls from being sent before
their start is on disk, gives a resumed conversation to the agent and continues its open turn,
writes summaries and ``/compact``, and switches to another file. A front end only shows what
happens and asks the user; nothing here imports Textual or prints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.events import AgentEvent, PlannedCall
from mcp_chat_tui.agent.retrying import NOTHING_TO_RETRY
from mcp_chat_tui.config import Settings
from mcp_chat_tui.conversation.opening import OpenedFile, open_file
from mcp_chat_tui.conversation.recording import RecordingSink, pending_calls
from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.engine.cache_file import keep_cache_beside
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.transcript import (
    AutoSaver,
    Transcript,
    TranscriptInUse,
    TranscriptRecorder,
    new_transcript_path,
    save_problem,
    to_openai_messages,
)

Sink = Callable[[AgentEvent], None]
SaveReport = Callable[[Path, "str | None"], None]
"""Called on the saver's thread: the file, and why it cannot be saved now (None: it is saved again)."""

NOTHING_TO_COMPACT = "nothing to compact: /compact summarises every exchange but the last"


def chat_agent(engine: Engine, hub: ServerHub, policy: ApprovalPolicy, settings: Settings) -> Agent:
    """The agent of a chat (both front ends'), with the settings' system prompt, window and tool-round
    limit and the hub's redactor."""
    return Agent(engine, hub, policy, redactor=hub.redactor, **settings.agent_options())


@dataclass(frozen=True)
class Switched:
    """What leaving one conversation for another left to say: why the left one's last changes are not
    saved, and why the opened one cannot be saved (another mcp-chat-tui has it); None when all is well."""

    left_unsaved: str | None
    cannot_save: str | None


class Conversation:
    """The conversation ``agent`` holds, recorded and (when ``save``) saved to ``path``."""

    def __init__(
        self,
        agent: Agent,
        model_label: str,
        *,
        transcript: Transcript | None = None,
        path: Path | None = None,
        save: bool = True,
        on_save_change: SaveReport | None = None,
    ) -> None:
        self.agent = agent
        self.path = path  # None: a new file, named after the first prompt, once saving starts
        self.save = save
        self.on_save_change = on_save_change
        self.recorder = TranscriptRecorder(transcript or Transcript())
        self._cache_read_from: Path | None = None  # without ``save``: the file whose KV cache is read
        self._recording = RecordingSink(self.recorder, model_label, agent.engine)
        self._recording.guard_starts(agent)  # a call's start is on disk before it goes out

    @property
    def transcript(self) -> Transcript:
        return self.recorder.transcript

    @property
    def model_label(self) -> str:
        """The model the conversation's replies are recorded as from (the one answering now)."""
        return self._recording.model_label

    def use_engine(self, engine: Engine, model_label: str) -> None:
        """From the next turn on, ``engine`` answers (``/model``): the agent and the record use it, and
        it keeps its own KV cache beside the file (a cache file is the model's: another model's is
        never used, ``engine/cache_file.py``)."""
        old = self.agent.engine
        self.agent.use_engine(engine)
        self._recording.use_model(engine, model_label)
        old.keep_cache_in(None)
        if self.saving and self.path is not None:
            keep_cache_beside(engine, self.path)
        elif self._cache_read_from is not None:  # without ``save``: the file's cache is only read
            keep_cache_beside(engine, self._cache_read_from, save=False)

    @property
    def saving(self) -> bool:
        """A saver holds the file (False before the first prompt, with ``--no-save``, or when the file is another's)."""
        return self.recorder.saver is not None

    def record(self, event: AgentEvent) -> None:
        """Write ``event`` into the transcript (every agent event passes here first, in order)."""
        self._recording(event)

    # ----- saving ----------------------------------------------------------------------------

    def start_saving(self, first_prompt: str = "") -> str | None:
        """Save from now on to ``path`` (a new file named after ``first_prompt`` when there is none),
        with the model's KV cache beside it. Returns why it cannot: another mcp-chat-tui has the file,
        and no call is then sent without asking. Without ``save`` a resumed file's cache is still read."""
        engine = self.agent.engine
        if not self.save:
            if self._cache_read_from != self.path:  # once per file: a cache is read at the first reply
                keep_cache_beside(engine, self.path, save=False)
                self._cache_read_from = self.path
            return None
        if self.path is None:
            exchanges = self.transcript.exchanges
            self.path = new_transcript_path(first_prompt or (exchanges[0].user if exchanges else ""))
        path = self.path
        try:
            self.recorder.saver = AutoSaver(path, on_change=self._reporter(path))
        except TranscriptInUse as exc:
            self.recorder.cannot_save = str(exc)
            return str(exc)
        keep_cache_beside(engine, path)
        return None

    def _reporter(self, path: Path) -> Callable[[Exception | None], None] | None:
        report = self.on_save_change
        if report is None:
            return None
        return lambda error: report(path, None if error is None else save_problem(path, error))

    def stop_saving(self) -> str | None:
        """Let the file go (what is left is saved first) and begin an empty conversation, saved
        nowhere yet. Returns why the last changes of the one left are not saved (None: all are)."""
        saver = self.recorder.saver
        keep_cache_beside(self.agent.engine, None)
        self._cache_read_from = None
        self.recorder.close()
        self.recorder.saver = None
        self.recorder.reset(Transcript())
        self.path = None
        problem = saver.unsaved if saver is not None else None
        return None if problem is None else f"{problem}: its last changes are not saved"

    def flush(self) -> str | None:
        """Wait until everything is saved (``-p`` before it exits); returns why it is not (None: it is)."""
        saver = self.recorder.saver
        if saver is not None and not saver.flush():
            return saver.unsaved
        return None

    def close(self) -> str | None:
        """At the end: the last changes are saved and the file let go. Returns why they are not saved."""
        saver = self.recorder.saver
        self.recorder.close()
        problem = saver.unsaved if saver is not None else None
        return None if problem is None else f"{problem}: the last changes of this conversation are not saved"

    # ----- resuming --------------------------------------------------------------------------

    def give_to_agent(self, sink: Sink, *, fit: bool = True) -> bool:
        """Give the agent this conversation's messages, summaries and cuts; with ``fit`` (once the
        model's context length is known) results too long for it now are cut, said in ``sink``.
        Returns whether the last turn goes on (calls left open, or results not answered yet)."""
        transcript = self.transcript
        self.agent.load_messages(to_openai_messages(transcript), transcript.summaries(), transcript.cuts_for_model())
        if fit:
            self.agent.fit_loaded_results(sink)
        return transcript.turn_goes_on()

    async def continue_open_turn(self, sink: Sink, resumed: Callable[[PlannedCall], None] | None = None) -> None:
        """Finish the calls the file left open, then let the model answer. Nothing runs on the file's
        word alone ("always" choices in it grant nothing either): the agent asks again, or says
        interrupted; a call with a result is never run again. ``resumed`` is told each call first."""
        transcript = self.transcript
        pending = pending_calls(transcript.pending_proposals(), self.agent.tools.find_tool)
        feedback = transcript.pending_feedback()
        for call, _ in pending:
            if resumed is not None:
                resumed(call)
        self.recorder.reply_goes_on()
        await self.agent.continue_turn(pending, sink, feedback)

    # ----- retrying --------------------------------------------------------------------------

    def retry_problem(self) -> str | None:
        """Why ``/retry`` cannot run now (None: it can)."""
        if not self.transcript.exchanges:
            return NOTHING_TO_RETRY
        return self.agent.retry_problem()

    async def retry(self, sink: Sink) -> None:
        """``/retry``: the last reply is discarded (kept in the file as discarded) and its prompt asked
        again (agent/retrying.py says what goes and what stays)."""
        exchange = self.transcript.exchanges[-1]
        await self.agent.retry_turn(sink, exchange.user, exchange.attachments)

    # ----- summaries -------------------------------------------------------------------------

    @property
    def can_compact(self) -> bool:
        """``/compact`` has something to do: an exchange before the last."""
        return len(self.agent.turns) >= 2

    async def write_summaries(self, sink: Sink, *, compact: bool = False) -> None:
        """Between turns: the summaries of the exchanges leaving the window (``compact``: every
        exchange but the last); the agent's ``stop()`` ends them."""
        if compact or self.agent.summaries_due:
            await self.agent.write_summaries(sink, compact=compact)

    # ----- another conversation --------------------------------------------------------------

    async def open(self, path: Path) -> OpenedFile:
        """Read ``path`` and take it (unless not ``save``); ``CannotOpen`` says why not, and changes nothing."""
        return await open_file(path, lock=self.save)

    async def switch_to(self, opened: OpenedFile) -> Switched:
        """Leave this conversation for ``opened``: the turn under way is stopped (a call it stops is
        recorded as stopped before the file is let go), this file is let go, and ``opened`` is saved
        from now on. The opened file's lock is released once its saver holds the file."""
        try:
            await self.agent.stop_and_wait()
            left_unsaved = self.stop_saving()
            self.recorder.reset(opened.transcript)
            self.path = opened.path
            cannot_save = self.start_saving()
        finally:
            opened.release()
        return Switched(left_unsaved, cannot_save)

    async def clear(self) -> str | None:
        """Stop the turn under way, forget the conversation, and let its file go: the next prompt starts a
        new one. Returns why the last changes of the one left are not saved (None: all are)."""
        await self.agent.stop_and_wait()
        self.agent.clear()
        return self.stop_saving()
