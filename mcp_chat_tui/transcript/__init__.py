"""Markdown transcripts (Parley's markers) that hold the whole state of a conversation."""

from mcp_chat_tui.transcript.format import TranscriptError, parse, render
from mcp_chat_tui.transcript.lock import TranscriptInUse, TranscriptLock
from mcp_chat_tui.transcript.model import Exchange, Proposal, ServerRequest, Step, ToolResult, Transcript
from mcp_chat_tui.transcript.model_messages import to_openai_messages
from mcp_chat_tui.transcript.recorder import TranscriptRecorder
from mcp_chat_tui.transcript.store import (
    AutoSaver,
    conversations_dir,
    new_transcript_path,
    read_transcript_text,
    recent_conversations,
    save_problem,
    write_atomically,
    write_export,
)

__all__ = [
    "AutoSaver",
    "Exchange",
    "Proposal",
    "ServerRequest",
    "Step",
    "ToolResult",
    "Transcript",
    "TranscriptError",
    "TranscriptInUse",
    "TranscriptLock",
    "TranscriptRecorder",
    "conversations_dir",
    "new_transcript_path",
    "parse",
    "read_transcript_text",
    "recent_conversations",
    "render",
    "save_problem",
    "to_openai_messages",
    "write_atomically",
    "write_export",
]
