"""Calls sent while their conversation could not be saved: a note for each outside the conversation's
folder, so that a resume knows they may have run although the file never said they started.

The conversation file is the record of which calls started (docs/transcript-format.md). A call the
user runs unsaved (the disk is full, the file or its folder read-only) is sent before the file can
say so, and the app may be killed before saving works again: the file would then show the call as
never started, and a resume would decide it afresh. So its start is also written, and flushed,
before it is sent, to the app's data folder (``unsaved-calls/``, one small file per call). Reading a
conversation (``recall_unsaved_runs``) marks each call a note names, and the file shows without a
start or a result, as started: interrupted, asked about, never run again on its own. A note the file
has caught up with is removed. When the data folder cannot be written either, nothing on disk
knows the call ran; that failure is logged and said.
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import datetime
from pathlib import Path
from typing import Any

from mcp_chat_tui.core.files import read_regular, replace_file
from mcp_chat_tui.core.paths import user_data_dir
from mcp_chat_tui.transcript.model import Proposal, Transcript

NOTES_FOLDER = "unsaved-calls"
NOTE_LIMIT = 16 * 1024 * 1024  # bytes read of one note at most (the call's arguments are in it)

logger = logging.getLogger(__name__)


def notes_dir() -> Path:
    return user_data_dir() / NOTES_FOLDER


def _conversation_name(conversation: Path) -> str:
    return str(conversation.resolve())


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _note_path(conversation: str, call_id: str) -> Path:
    return notes_dir() / f"{_digest(conversation)}-{_digest(call_id)}.json"


def note_unsaved_run(conversation: Path, proposal: Proposal) -> str | None:
    """Note that ``proposal``'s call of ``conversation`` is sent unsaved, flushed to disk before it is;
    returns why the note could not be written (None: written)."""
    name = _conversation_name(conversation)
    path = _note_path(name, proposal.call_id)
    record: dict[str, Any] = {"conversation": name, "call_id": proposal.call_id, "call": proposal.call}
    record["started"] = (proposal.started_at or datetime.now()).isoformat(timespec="seconds")
    record["server"] = proposal.server
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, json.dumps(record).encode("ascii"), 0o600)  # flushed to disk before the call is sent
    except OSError as exc:
        problem = f"cannot note the unsaved call in {path}: {exc.strerror or exc}"
        logger.warning("%s; a resume of %s will not know call %s ran", problem, name, proposal.call_id)
        return problem
    return None


def recall_unsaved_runs(transcript: Transcript, conversation: Path) -> int:
    """Mark the calls of ``transcript`` (read from ``conversation``) that were sent unsaved and that the
    file shows without a start or a result: started at the noted time, and run unsaved. Notes the
    file has caught up with (or no longer holds the call of) are removed. Returns how many were marked."""
    name = _conversation_name(conversation)
    prefix = f"{_digest(name)}-"
    try:
        notes = sorted(path for path in notes_dir().iterdir() if path.name.startswith(prefix))
    except OSError:
        return 0
    proposals = {proposal.call_id: proposal for proposal in transcript.all_proposals()}
    marked = 0
    for note in notes:
        record = _read_note(note)
        if record is None or record.get("conversation") != name:
            continue
        proposal = proposals.get(str(record.get("call_id")))
        if proposal is None or proposal.result is not None or proposal.started_at is not None:
            _remove(note)  # the file knows (a start, a result), or holds no such call to run again
            continue
        proposal.started_at = _noted_time(record.get("started"))
        proposal.server = proposal.server or str(record.get("server") or "")
        proposal.run_unsaved = True
        marked += 1
    return marked


def _read_note(path: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(read_regular(path, NOTE_LIMIT))
    except (OSError, ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def _noted_time(value: object) -> datetime:
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return datetime.now().replace(microsecond=0)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
