"""One running mcp-chat-tui per transcript: an OS lock on a file beside it, ``.NAME.lock``.

The lock is ``flock`` on the side file (the transcript itself is replaced on every save, so it
cannot carry a lock). The operating system drops it when the process ends, however it ends,
so a lock left by a killed process never blocks; the side file only tells the next one which
process holds the transcript, and is removed when the lock is released.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import threading
from pathlib import Path

from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.core.files import RefusedFile, open_regular

log = logging.getLogger(__name__)


class TranscriptInUse(UserFacingError):
    """Another running mcp-chat-tui holds the transcript."""

    exit_code = 2

    def __init__(self, path: Path, pid: int | None) -> None:
        self.path = path
        self.pid = pid
        holder = f" (process {pid})" if pid else ""
        super().__init__(
            f"{path} is open in another mcp-chat-tui{holder}; leave it there first, or open a copy of the file"
        )


def lock_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.lock")


class TranscriptLock:
    """Holds one transcript for this process; ``acquire`` the same path twice and it is held until
    released twice (the startup and the saver of the same file share one lock)."""

    _held: dict[Path, TranscriptLock] = {}
    _guard = threading.Lock()

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd
        self._count = 1

    @classmethod
    def acquire(cls, path: Path) -> TranscriptLock:
        """Lock ``path`` for this process, or raise ``TranscriptInUse`` naming the holder.

        Raises ``OSError`` when the side file cannot be made (e.g. the folder does not exist).
        """
        key = path.parent.resolve() / path.name  # one file, one lock, by whatever folder path (a link is never one)
        with cls._guard:
            held = cls._held.get(key)
            if held is not None:
                held._count += 1
                return held
            fd = _lock_side_file(lock_path(key), key)
            lock = cls._held[key] = TranscriptLock(key, fd)
            return lock

    def release(self) -> None:
        """Give the lock up (the last of its holders in this process removes the side file)."""
        with self._guard:
            self._count -= 1
            if self._count > 0 or self._fd < 0:
                return
            self._held.pop(self.path, None)
            try:
                os.unlink(lock_path(self.path))  # removed while still locked: no one can be waiting on it
            except OSError:
                pass
            os.close(self._fd)
            self._fd = -1


def _lock_side_file(side: Path, path: Path) -> int:
    """Open and lock ``side``; retry when it was replaced meanwhile (unlinked by a releasing holder).

    The side file is opened without following a link and must be a regular file with one name:
    a link planted at its name (``.NAME.lock`` → ``~/victim``) is removed, never written through,
    and a hard link or anything else there is ``RefusedFile``."""
    while True:
        fd = _open_side_file(side)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                os.close(fd)
                raise
            pid = _read_pid(fd)
            os.close(fd)
            raise TranscriptInUse(path, pid) from None
        try:
            same = os.fstat(fd).st_ino == os.lstat(side).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # we locked a side file its holder removed as it let go: lock the current one
            os.close(fd)
            continue
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return fd


def _open_side_file(side: Path) -> int:
    try:
        fd = open_regular(side, os.O_RDWR | os.O_CREAT, 0o600)
    except RefusedFile as exc:
        if exc.errno != errno.ELOOP:
            raise
        log.warning("%s was a symbolic link, not a lock of mcp-chat-tui: the link is removed", side)
        os.unlink(side)  # the link itself; where it points is never opened
        fd = open_regular(side, os.O_RDWR | os.O_CREAT, 0o600)
    if os.fstat(fd).st_nlink > 1:  # another name of some file: truncating it would change that file
        os.close(fd)
        raise RefusedFile(side, errno.EMLINK, "it has other names (a hard link), so it is not a lock file to write")
    return fd


def _read_pid(fd: int) -> int | None:
    try:
        return int(os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "0") or None
    except (OSError, ValueError):
        return None
