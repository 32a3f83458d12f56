"""Opening a conversation file: its lock taken first, then the file and its media read, and the calls
run while it could not be saved marked as started.

The command line (``--transcript``, before the event loop) and the app's resume both open files
here; opening goes down to ``transcript/`` and never back up to a front end.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.transcript import Transcript, TranscriptError, TranscriptInUse, TranscriptLock
from mcp_chat_tui.transcript.media import read_conversation
from mcp_chat_tui.transcript.unsaved_runs import recall_unsaved_runs


class CannotOpen(UserFacingError):
    """A conversation file that cannot be opened: unreadable, or held by another mcp-chat-tui."""


@dataclass
class OpenedFile:
    """A conversation read from ``path``, and the lock that holds it until its saver does (None: not
    to be saved, so nothing is written beside it)."""

    path: Path
    transcript: Transcript
    lock: TranscriptLock | None

    def release(self) -> None:
        if self.lock is not None:
            self.lock.release()
            self.lock = None


def read_for_resume(path: Path) -> Transcript:
    """The conversation in ``path`` with its media, and the calls run while it could not be saved
    marked as started (``recall_unsaved_runs``). Reads files: not on the screen's thread."""
    transcript = read_conversation(path)
    recall_unsaved_runs(transcript, path)
    return transcript


async def open_file(path: Path, *, lock: bool = True) -> OpenedFile:
    """Take ``path`` (unless not ``lock``: ``--no-save`` writes nothing beside it) and read it on a
    thread. Raises ``CannotOpen`` saying why; nothing is then held."""
    try:
        held = TranscriptLock.acquire(path) if lock else None
    except TranscriptInUse as exc:
        raise CannotOpen(str(exc)) from exc
    except OSError as exc:
        raise CannotOpen(f"cannot open {path}: {exc.strerror or exc}") from exc
    try:
        transcript = await asyncio.to_thread(read_for_resume, path)
    except TranscriptError as exc:
        if held is not None:
            held.release()
        raise CannotOpen(str(exc)) from exc
    except BaseException:
        if held is not None:
            held.release()
        raise
    return OpenedFile(path, transcript, held)


def read_if_present(path: Path | None) -> Transcript | None:
    """The conversation in ``--transcript FILE`` (None when there is none yet). A file that cannot be
    read raises ``TranscriptError`` naming the line; it is never overwritten."""
    if path is None or not os.path.lexists(path):
        return None
    return read_for_resume(path)


@contextmanager
def held_for_the_run(path: Path | None, *, save: bool) -> Iterator[None]:
    """Hold ``--transcript FILE`` for the run: another mcp-chat-tui that has it open stops this one
    before anything is read (``TranscriptInUse``, exit 2). Not ``save``: the file is only read, and
    nothing is written beside it, not even the lock."""
    lock = None
    if path is not None and save and path.parent.is_dir():
        try:
            lock = TranscriptLock.acquire(path)
        except OSError:
            lock = None  # a folder that takes no file: saving will say so
    try:
        yield
    finally:
        if lock is not None:
            lock.release()
