"""What the app shows and asks of its conversation's file (autosave and its problems, a loaded one
shown, resume, export): a helper ``ChatApp`` composes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Protocol

from textual.app import App

from mcp_chat_tui.agent import Agent
from mcp_chat_tui.conversation import CannotOpen, Conversation, OpenedFile
from mcp_chat_tui.transcript import Transcript, TranscriptInUse, recent_conversations, write_export
from mcp_chat_tui.transcript.media import self_contained
from mcp_chat_tui.transcript.store import RETRY_INTERVAL
from mcp_chat_tui.ui.agent_events import AgentEventView
from mcp_chat_tui.ui.call_store import CallStore
from mcp_chat_tui.ui.reply_stream import ReplyController
from mcp_chat_tui.ui.screens.conversations import ExportScreen, ExportTarget, ResumeScreen
from mcp_chat_tui.ui.transcript_view import show_transcript
from mcp_chat_tui.ui.turns import TurnQueue
from mcp_chat_tui.ui.widgets.chat import ChatLog
from mcp_chat_tui.ui.widgets.prompt import PromptInput
from mcp_chat_tui.ui.widgets.status import StatusBar


class ConversationHost(Protocol):
    """What of the app the conversation's file uses: the services, the panes that show the
    conversation, and the app's record of what could not be saved (its exit code)."""

    @property
    def agent(self) -> Agent: ...

    @property
    def conversation(self) -> Conversation: ...

    @property
    def ready(self) -> asyncio.Event: ...  # set once the model is loaded (a loaded file's results are fitted then)

    @property
    def chat(self) -> ChatLog: ...

    @property
    def status_bar(self) -> StatusBar: ...

    @property
    def call_store(self) -> CallStore: ...

    @property
    def reply(self) -> ReplyController: ...

    @property
    def leaving(self) -> bool: ...  # the app is leaving: nothing more is drawn

    unsaved: str | None  # why events of the conversation could not be saved (the exit code is then 1)

    @property
    def agent_view(self) -> AgentEventView: ...  # the agent's events: recorded, then shown


class ConversationActions:
    """What the app shows and asks of its ``Conversation`` (``conversation/``): saving it, showing a
    loaded one, replacing it with a saved one, exporting it.

    Args:
        app: Where it says what happened, opens the export and resume screens, runs their work, and
            finds the prompt box.
        host: What of the app it uses (``ConversationHost``): ``ChatApp`` itself.
        turns: The prompts and turns: a conversation left drops those waiting; a loaded one's open
            turn goes on there.
    """

    def __init__(self, app: App[Any], host: ConversationHost, turns: TurnQueue) -> None:
        self.app = app
        self.host = host
        self.turns = turns

    def attach_saver(self, first_prompt: str = "") -> None:
        """Save the conversation from now on; a failure to save is shown as it happens (``SaveChanged``)."""
        problem = self.host.conversation.start_saving(first_prompt)
        if problem is not None:  # another mcp-chat-tui has the file: no call is sent without asking
            self.host.unsaved = problem
            self.show_save_problem(problem)

    def save_changed(self, path: Path, problem: str | None) -> None:
        """Saving ``path`` failed (``problem``) or works again (None): said if it is still this conversation's file."""
        saver = self.host.conversation.recorder.saver
        if not self.host.leaving and saver is not None and saver.path == path:  # not a file left before
            self.show_save_problem(problem)

    def left_conversation(self, left_unsaved: str | None) -> None:
        """After the conversation's file was let go: say when its last changes are not saved."""
        if left_unsaved is not None:
            self.host.unsaved = left_unsaved
            self.app.notify(left_unsaved, title="not saved", severity="error", timeout=15, markup=False)
        self.host.status_bar.save_problem = ""  # about that conversation, which is no longer saved here

    def show_save_problem(self, problem: str | None) -> None:
        """The status bar says while saving fails; a notification says when it starts and ends."""
        bar = self.host.status_bar
        if problem is not None and bar.save_problem != problem:
            self.app.notify(
                f"{problem}; retrying every {RETRY_INTERVAL:.0f} s",
                title="conversation not saved",
                severity="error",
                timeout=15,
                markup=False,
            )
        elif problem is None and bar.save_problem:
            self.app.notify("the conversation is saved again", title="saved")
        bar.save_problem = problem or ""

    async def show_transcript(self, transcript: Transcript) -> None:
        """Show a loaded conversation, give the agent its messages, and note calls left open."""
        host = self.host
        last_reply = await show_transcript(
            transcript,
            chat=host.chat,
            prompt=self.app.query_one(PromptInput),
            calls=host.call_store,
            leaving=lambda: host.leaving,
        )
        # Results are fitted to the model once it is loaded (its context length is known then).
        self.turns.resume_pending = host.conversation.give_to_agent(host.agent_view.sink, fit=host.ready.is_set())
        host.status_bar.summarised = host.agent.summaries_in_use
        # The last reply goes on when the file left calls open, or results the model did not answer yet.
        host.reply.continue_with(last_reply if self.turns.resume_pending else None)

    def forget_shown_conversation(self) -> None:
        """The sidebar's calls and the status bar's figures of the conversation leaving the screen go with it."""
        self.host.call_store.forget()
        self.host.status_bar.forget_conversation()

    def export(self) -> None:
        """The palette: a copy of the conversation, with its media inside, written where the user says."""
        conversation = self.host.conversation
        suggestion = Path.cwd() / (conversation.path.name if conversation.path else "conversation.md")
        own_file = conversation.path if conversation.saving else None

        def export(target: ExportTarget | None) -> None:
            if (
                target is not None
            ):  # the media bytes are in memory: nothing is read here, the file is written off the screen's thread
                text = self_contained(conversation.recorder.transcript)  # no media folder beside the copy
                self.app.run_worker(self._write_export(target, text), group="export")

        self.app.push_screen(ExportScreen(suggestion, own_file), callback=export)

    async def _write_export(self, target: ExportTarget, text: str) -> None:
        path, notify = target.path, self.app.notify
        try:
            await asyncio.to_thread(write_export, path, text, replace=target.replace)
        except TranscriptInUse as exc:
            holder = f" (process {exc.pid})" if exc.pid else ""
            problem = f"{path} is open in another mcp-chat-tui{holder}, whose saves would undo the copy"
            notify(f"{problem}: export to another name", title="export failed", severity="error", markup=False)
            return
        except OSError as exc:
            notify(f"cannot write {path}: {exc.strerror or exc}", title="export failed", severity="error", markup=False)
            return
        notify(f"transcript exported to {path}", markup=False)

    def resume(self) -> None:
        """The palette, ``--resume``: the recent conversations; the one chosen replaces this one."""

        def chosen(path: Path | None) -> None:
            if path is not None:
                self.app.run_worker(self.open_conversation(path), group="open")

        self.app.push_screen(ResumeScreen(recent_conversations()), callback=chosen)

    async def open_conversation(self, path: Path) -> bool:
        """Replace the current conversation with a saved one; a bad file, or one another
        mcp-chat-tui has open, changes nothing."""
        try:
            opened = await self.host.conversation.open(path)  # files read off the screen's thread
        except CannotOpen as exc:
            self.app.notify(str(exc), title="cannot open the conversation", severity="error", timeout=10, markup=False)
            return False
        return await self._replace_conversation(opened)

    async def _replace_conversation(self, opened: OpenedFile) -> bool:
        host, turns = self.host, self.turns
        dropped = turns.drop_waiting()  # typed for the conversation being left, never run in the one opened
        switched = await host.conversation.switch_to(opened)  # the turn under way stopped and recorded first
        self.left_conversation(switched.left_unsaved)
        await host.chat.clear()
        self.forget_shown_conversation()  # the opened one's figures come with its first reply
        if switched.cannot_save is not None:
            host.unsaved = switched.cannot_save
            self.show_save_problem(switched.cannot_save)
        await self.show_transcript(opened.transcript)
        if host.ready.is_set():  # else start-up starts them once it is
            turns.start_if_owed()
        self.app.notify(f"resumed {opened.path.name}{dropped}", markup=False)
        return True
