"""What the app does with conversation files: autosave, show a loaded one, resume, export.

A part of ``ChatApp`` (mixed into it), kept apart so each file reads in one go.
"""

from __future__ import annotations

from pathlib import Path

from mcp_chat_tui.transcript import (
    AutoSaver,
    Transcript,
    TranscriptError,
    new_transcript_path,
    parse,
    read_transcript_text,
    recent_conversations,
    to_openai_messages,
    write_atomically,
)
from mcp_chat_tui.ui.recording import pending_calls
from mcp_chat_tui.ui.screens.conversations import ExportScreen, ResumeScreen
from mcp_chat_tui.ui.transcript_view import show_transcript


class ConversationActions:
    """Transcript behaviour of ``ChatApp``: uses its ``recorder``, ``agent``, ``chat`` and tables."""

    def _attach_saver(self, first_prompt: str = "") -> None:
        if not self.autosave:
            return
        if self.transcript_file is None:
            self.transcript_file = new_transcript_path(first_prompt)
        self.recorder.saver = AutoSaver(self.transcript_file)

    def _detach_saver(self) -> None:
        self.recorder.close()
        self.recorder.saver = None
        self.recorder.reset(Transcript())

    async def _show_transcript(self, transcript: Transcript) -> None:
        """Show a loaded conversation, give the agent its messages, and note calls left open."""
        self._reply = await show_transcript(self, transcript)
        self.agent.load_messages(to_openai_messages(transcript))
        self._resume_pending = transcript.pending_proposals()
        if self._reply is not None and not self._resume_pending:
            self._reply = None

    async def _continue_pending(self) -> None:
        """Finish the calls the file left open. Nothing runs on the file's word alone ("always"
        choices in it grant nothing either): the agent asks again, or says interrupted."""
        pending = pending_calls(self._resume_pending, self.hub.find_tool)
        self._resume_pending = []
        for call, _ in pending:
            record = self.calls_table.records.get(self._pending_keys.get(call.id, ""))
            if record is not None:
                self._records[id(call)] = record
        await self.agent.continue_turn(pending, self._sink)

    def action_export(self) -> None:
        suggestion = Path.cwd() / (self.transcript_file.name if self.transcript_file else "conversation.md")

        def export(path: Path | None) -> None:
            if path is None:
                return
            try:
                write_atomically(path, self.recorder.rendered())
            except OSError as exc:
                self.notify(f"cannot write {path}: {exc.strerror or exc}", title="export failed", severity="error")
                return
            self.notify(f"transcript exported to {path}")

        self.push_screen(ExportScreen(suggestion), callback=export)

    def action_resume(self) -> None:
        def chosen(path: Path | None) -> None:
            if path is not None:
                self.run_worker(self.open_conversation(path), group="open")

        self.push_screen(ResumeScreen(recent_conversations()), callback=chosen)

    async def open_conversation(self, path: Path) -> bool:
        """Replace the current conversation with a saved one; a bad file changes nothing."""
        try:
            transcript = parse(read_transcript_text(path), path)
        except (OSError, TranscriptError) as exc:
            self.notify(str(exc), title="cannot open the conversation", severity="error", timeout=10)
            return False
        self.agent.stop()
        self._detach_saver()
        await self.chat.clear()
        self.calls_table.clear()
        self.calls_table.records.clear()
        self._records.clear()
        self.recorder.reset(transcript)
        self.transcript_file = path
        self._attach_saver()
        await self._show_transcript(transcript)
        if self._resume_pending and self.ready.is_set() and not self._turn_running:
            self._turn_running = True
            self.run_turns()
        self.notify(f"resumed {path.name}")
        return True

