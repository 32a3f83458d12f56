"""What the app does with conversation files (autosave, show a loaded one, resume, export), a part of ``ChatApp``."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mcp_chat_tui.conversation import NOTHING_TO_COMPACT, RETRY_BUSY, RETRY_LINE, CannotOpen, OpenedFile
from mcp_chat_tui.transcript import Transcript, TranscriptInUse, recent_conversations, write_export
from mcp_chat_tui.transcript.media import self_contained
from mcp_chat_tui.transcript.store import RETRY_INTERVAL
from mcp_chat_tui.ui.app_base import ChatAppBase
from mcp_chat_tui.ui.screens.conversations import ExportScreen, ExportTarget, ResumeScreen
from mcp_chat_tui.ui.transcript_view import show_transcript
from mcp_chat_tui.ui.widgets.attachments import user_message
from mcp_chat_tui.ui.widgets.chat import Notice
from mcp_chat_tui.ui.widgets.prompt import PromptInput


class ConversationActions(ChatAppBase):
    """What ``ChatApp`` shows and asks of its ``conversation`` (``conversation/``): uses its ``chat`` and tables."""

    def _attach_saver(self, first_prompt: str = "") -> None:
        """Save the conversation from now on; a failure to save is shown as it happens (``SaveChanged``)."""
        problem = self.conversation.start_saving(first_prompt)
        if problem is not None:  # another mcp-chat-tui has the file: no call is sent without asking
            self.unsaved = problem
            self._show_save_problem(problem)

    def _left_conversation(self, left_unsaved: str | None) -> None:
        """After the conversation's file was let go: say when its last changes are not saved."""
        if left_unsaved is not None:
            self.unsaved = left_unsaved
            self.notify(self.unsaved, title="not saved", severity="error", timeout=15, markup=False)
        self.status_bar.save_problem = ""  # about that conversation, which is no longer saved here

    def _show_save_problem(self, problem: str | None) -> None:
        """The status bar says while saving fails; a notification says when it starts and ends."""
        bar = self.status_bar
        if problem is not None and bar.save_problem != problem:
            self.notify(
                f"{problem}; retrying every {RETRY_INTERVAL:.0f} s",
                title="conversation not saved",
                severity="error",
                timeout=15,
                markup=False,
            )
        elif problem is None and bar.save_problem:
            self.notify("the conversation is saved again", title="saved")
        bar.save_problem = problem or ""

    async def _show_transcript(self, transcript: Transcript) -> None:
        """Show a loaded conversation, give the agent its messages, and note calls left open."""
        last_reply = await show_transcript(
            transcript,
            chat=self.chat,
            prompt=self.query_one(PromptInput),
            calls=self.call_store,
            leaving=lambda: self._shut_down,
        )
        # Results are fitted to the model once it is loaded (its context length is known then).
        self._resume_pending = self.conversation.give_to_agent(self._sink, fit=self.ready.is_set())
        self.status_bar.summarised = self.agent.summaries_in_use
        # The last reply goes on when the file left calls open, or results the model did not answer yet.
        self.reply.continue_with(last_reply if self._resume_pending else None)

    async def _continue_pending(self) -> None:
        """Finish the calls the file left open, then let the model answer. Nothing runs on the file's
        word alone ("always" choices in it grant nothing either): the agent asks again, or says
        interrupted; a call with a result is never run again."""
        self._resume_pending = False
        await self.conversation.continue_open_turn(self._sink, self.call_store.resumed)

    def _forget_shown_conversation(self) -> None:
        """The sidebar's calls and the status bar's figures of the conversation leaving the screen go with it."""
        self.call_store.forget()
        self.status_bar.forget_conversation()

    def _drop_waiting(self) -> str:
        """Before the chat is cleared or replaced: the prompts waiting (shown in the chat being cleared) and a
        loaded file's open turn are dropped; a prompt waiting for its @resources goes back to the
        prompt box. Returns the notice's note on the prompts dropped ("" when none)."""
        dropped = len(self._queue)
        self._queue.clear()
        self.status_bar.waiting = 0
        self._resume_pending = False
        self.stop_waiting_for_reads()
        return f" ({dropped} waiting prompt{'s' if dropped != 1 else ''} dropped)" if dropped else ""

    def compact(self) -> None:
        """``/compact``: every exchange but the last gets its summary now and leaves the window
        (after the reply under way, if one is)."""
        if not self.conversation.can_compact:
            self.notify(NOTHING_TO_COMPACT, markup=False)
            return
        self._compact_asked = True
        if self._turn_running:
            self.notify("/compact runs when the reply under way ends", markup=False)
            return
        self._turn_running = True
        self.run_turns()

    def action_retry(self) -> None:
        """``/retry`` and Ctrl+R: the last reply is discarded (kept in the file as discarded, its calls
        not undone) and the model asked again (agent/retrying.py); not while a turn runs."""
        busy = self._turn_running or self._resume_pending
        problem = RETRY_BUSY if busy else self.conversation.retry_problem()
        if problem is not None:
            self.notify(problem, markup=False)
            return
        self._retry_asked = self._turn_running = True
        self.run_turns()

    async def _retry(self) -> None:
        """The retry ``run_turns`` was asked for: the chat says the reply above is discarded, shows the
        prompt again, and opens the new reply."""
        self._retry_asked = False
        await self.ready.wait()
        exchange = self.conversation.transcript.exchanges[-1]
        await self.chat.mount(Notice(RETRY_LINE, muted=True))
        await self.chat.add_prompt(user_message(exchange.user, exchange.attachments))
        await self._open_reply()
        await self._wait_until_drawn()
        await self.conversation.retry(self._sink)
        await self._write_summaries()

    async def _write_summaries(self) -> None:
        """Between turns: the summaries of the exchanges leaving the window (all but the last after
        ``/compact``); Esc stops them."""
        compact, self._compact_asked = self._compact_asked, False
        if compact or self.agent.summaries_due:
            await self.ready.wait()
            await self.conversation.write_summaries(self._sink, compact=compact)

    def action_export(self) -> None:
        suggestion = Path.cwd() / (self.transcript_file.name if self.transcript_file else "conversation.md")
        own_file = self.transcript_file if self.conversation.saving else None

        def export(target: ExportTarget | None) -> None:
            if (
                target is not None
            ):  # the media bytes are in memory: nothing is read here, the file is written off the screen's thread
                text = self_contained(self.recorder.transcript)  # no media folder beside the copy
                self.run_worker(self._write_export(target, text), group="export")

        self.push_screen(ExportScreen(suggestion, own_file), callback=export)

    async def _write_export(self, target: ExportTarget, text: str) -> None:
        path = target.path
        try:
            await asyncio.to_thread(write_export, path, text, replace=target.replace)
        except TranscriptInUse as exc:
            holder = f" (process {exc.pid})" if exc.pid else ""
            problem = f"{path} is open in another mcp-chat-tui{holder}, whose saves would undo the copy"
            self.notify(f"{problem}: export to another name", title="export failed", severity="error", markup=False)
            return
        except OSError as exc:
            self.notify(
                f"cannot write {path}: {exc.strerror or exc}", title="export failed", severity="error", markup=False
            )
            return
        self.notify(f"transcript exported to {path}", markup=False)

    def action_resume(self) -> None:
        def chosen(path: Path | None) -> None:
            if path is not None:
                self.run_worker(self.open_conversation(path), group="open")

        self.push_screen(ResumeScreen(recent_conversations()), callback=chosen)

    async def open_conversation(self, path: Path) -> bool:
        """Replace the current conversation with a saved one; a bad file, or one another
        mcp-chat-tui has open, changes nothing."""
        try:
            opened = await self.conversation.open(path)  # files read off the screen's thread
        except CannotOpen as exc:
            self.notify(str(exc), title="cannot open the conversation", severity="error", timeout=10, markup=False)
            return False
        return await self._replace_conversation(opened)

    async def _replace_conversation(self, opened: OpenedFile) -> bool:
        dropped = self._drop_waiting()  # typed for the conversation being left, never run in the one opened
        switched = await self.conversation.switch_to(opened)  # the turn under way stopped and recorded first
        self._left_conversation(switched.left_unsaved)
        await self.chat.clear()
        self._forget_shown_conversation()  # the opened one's figures come with its first reply
        if switched.cannot_save is not None:
            self.unsaved = switched.cannot_save
            self._show_save_problem(switched.cannot_save)
        await self._show_transcript(opened.transcript)
        if (self._resume_pending or self.agent.summaries_due) and self.ready.is_set() and not self._turn_running:
            self._turn_running = True
            self.run_turns()
        self.notify(f"resumed {opened.path.name}{dropped}", markup=False)
        return True
