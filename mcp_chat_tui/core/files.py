"""Opening the files the app writes and reads, so it writes only the file it means.

A conversation's folder may come from anywhere (a zip, a git repository), so any name beside a
conversation may be a planted symbolic link (to ``~/.bashrc``), a FIFO (an ``open`` that never
returns), or a device (``/dev/zero``: endless bytes). Every file the app creates or replaces goes
through ``replace_file`` or ``open_regular``: the last part of a path is never followed when it is
a link (``O_NOFOLLOW``), a temporary file is new (``O_EXCL``, a random name in the same folder),
and whatever is read must be a regular file of a bounded size. The folders above are not checked:
a data folder that is a link to another disk is the user's doing.
"""

from __future__ import annotations

import errno
import fcntl
import os
import secrets
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO

TEMPORARY_SUFFIX = ".tmp"  # a file is written as ``.NAME.<pid>.<random>.tmp`` beside it, then renamed
NEW_FILE_MODE = 0o600  # a file the app creates is private unless it replaces one with other permissions


class RefusedFile(OSError):
    """A file the app will not write or read: a symbolic link, not a regular file, or too large.

    An ``OSError`` (``strerror`` says why and what to do, ``filename`` is the path), so every
    caller that reports a failed write or read reports this one the same way."""

    def __init__(self, path: Path | str, code: int, why: str) -> None:
        super().__init__(code, why, str(path))

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def link_refused(path: Path | str) -> RefusedFile:
    return RefusedFile(
        path,
        errno.ELOOP,
        "it is a symbolic link, and mcp-chat-tui never writes or reads through one"
        " (remove the link, or use the file's own path)",
    )


def not_regular(path: Path | str, mode: int) -> RefusedFile:
    kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket"
    return RefusedFile(path, errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL, f"it is {kind}, not a regular file")


def too_large(path: Path | str, limit: int) -> RefusedFile:
    return RefusedFile(path, errno.EFBIG, f"it is larger than {limit:,} bytes, the most mcp-chat-tui reads of it")


def open_regular(
    path: Path | str, flags: int, mode: int = NEW_FILE_MODE, *, follow_links: bool = False, dir_fd: int | None = None
) -> int:
    """A descriptor of ``path`` (in the folder open as ``dir_fd``, if given) opened with ``flags``,
    which must be a regular file.

    Never blocks (a FIFO is refused, not waited on) and, unless ``follow_links``, never opens
    through a symbolic link. Raises ``RefusedFile`` for a link or anything but a regular file,
    ``OSError`` as ``os.open`` does otherwise."""
    nofollow = 0 if follow_links else os.O_NOFOLLOW
    try:
        descriptor = os.open(path, flags | nofollow | os.O_NONBLOCK | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as exc:
        refused = _refusal(path, follow_links, dir_fd)
        if refused is not None:  # ELOOP for a link, ENXIO for a FIFO nobody reads, EISDIR…
            raise refused from None
        raise exc
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise not_regular(path, status.st_mode)
        fcntl.fcntl(descriptor, fcntl.F_SETFL, fcntl.fcntl(descriptor, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def read_regular(path: Path | str, limit: int, *, follow_links: bool = False, dir_fd: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (``RefusedFile`` past it).

    A link (unless ``follow_links``), a FIFO, a device or a folder is ``RefusedFile``, at once."""
    descriptor = open_regular(path, os.O_RDONLY, follow_links=follow_links, dir_fd=dir_fd)
    with os.fdopen(descriptor, "rb") as file:
        if os.fstat(descriptor).st_size > limit:
            raise too_large(path, limit)
        data = file.read(limit + 1)  # a file that grew meanwhile is cut here, not read on
    if len(data) > limit:
        raise too_large(path, limit)
    return data


def read_in_folder(folder: Path, name: str, limit: int) -> bytes:
    """The bytes of the regular file ``name`` (one name, no ``/``) in ``folder``, at most ``limit``;
    neither the folder nor the file may be a link (``RefusedFile``)."""
    if "/" in name or name in ("", ".", ".."):
        raise RefusedFile(folder / name, errno.EINVAL, f"{name!r} is not the name of a file in {folder}")
    try:
        folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if os.path.islink(folder):
            raise link_refused(folder) from None
        raise exc
    try:
        return read_regular(name, limit, dir_fd=folder_fd)
    except RefusedFile as exc:
        raise RefusedFile(folder / name, exc.errno or errno.EINVAL, exc.strerror or "") from None
    finally:
        os.close(folder_fd)


def open_append(path: Path, mode: int = NEW_FILE_MODE) -> BinaryIO:
    """``path`` opened to append bytes (created with ``mode``), unbuffered; never a link or a FIFO."""
    descriptor = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode)
    return os.fdopen(descriptor, "ab", buffering=0)


def regular_file(path: Path) -> bool:
    """Whether ``path`` is a regular file itself (not a link to one)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def existing_mode(path: Path) -> int | None:
    """The permission bits of the regular file at ``path`` (None when there is none).

    Raises ``RefusedFile`` when the name is a link or something else than a regular file."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(status.st_mode):
        raise link_refused(path)
    if not stat.S_ISREG(status.st_mode):
        raise not_regular(path, status.st_mode)
    return stat.S_IMODE(status.st_mode)


def mode_of(path: Path, default: int = NEW_FILE_MODE) -> int:
    """The permission bits of the regular file at ``path``, for a file made beside it (``default``
    when there is none, or it is a link: a link's own bits say nothing)."""
    try:
        mode = existing_mode(path)
    except RefusedFile:
        return default
    return default if mode is None else mode


def replace_file(path: Path, data: bytes, mode: int | None = None) -> None:
    """Create or replace ``path`` with ``data``, atomically: a new temporary file beside it
    (``O_EXCL``, a random name), flushed to disk, then renamed over ``path``.

    ``mode`` None keeps the permission bits of the file replaced (``NEW_FILE_MODE`` for a new one).
    A link or anything but a regular file at ``path`` is ``RefusedFile`` and is left as it is."""
    kept = existing_mode(path)
    mode = mode if mode is not None else kept if kept is not None else NEW_FILE_MODE
    if path not in _swept:
        _swept.add(path)
        remove_stale_temporaries(path)
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.{os.getpid()}.", suffix=TEMPORARY_SUFFIX, dir=path.parent
    )
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
            file.flush()
            os.fchmod(file.fileno(), mode)
            os.fsync(file.fileno())
        move_into_place(Path(temporary), path)
    except BaseException:
        _remove(temporary)
        raise


_swept: set[Path] = set()  # the files whose killed writes' temporaries this process has looked for


def remove_stale_temporaries(path: Path) -> None:
    """Remove the temporary copies of ``path`` a killed write left beside it (``SIGKILL``, a power
    cut between the write and the rename): those named by a process that is gone. A running
    process's, this one's included, are its writes under way and stay."""
    prefix = f".{path.name}."
    try:
        names = [entry.name for entry in os.scandir(path.parent)]
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(TEMPORARY_SUFFIX)):
            continue
        pid = name[len(prefix) :].split(".", 1)[0]
        if pid.isdigit() and not process_alive(int(pid)):
            _remove(path.parent / name)  # a link planted at such a name goes as a link


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` runs (another user's too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def move_into_place(temporary: Path, path: Path) -> None:
    """Rename ``temporary`` over ``path``, unless a link (or a folder…) has appeared there."""
    existing_mode(path)
    os.replace(temporary, path)


def private_folder_beside(path: Path, suffix: str) -> Path:
    """A new folder beside ``path`` that only this user can enter, ``.NAME.<16 hex digits><suffix>``,
    for a library that writes by path: nothing planted can be at a name inside it."""
    while True:
        folder = path.with_name(f".{path.name}.{secrets.token_hex(8)}{suffix}")
        try:
            os.mkdir(folder, 0o700)  # fails on anything already there, a link included
        except FileExistsError:
            continue
        return folder


def _refusal(path: Path | str, follow_links: bool, dir_fd: int | None = None) -> RefusedFile | None:
    """Why ``path`` is not a file to open, when that is why opening it failed."""
    try:
        status = os.stat(path, dir_fd=dir_fd, follow_symlinks=follow_links)
    except OSError:
        return None
    if stat.S_ISLNK(status.st_mode):
        return link_refused(path)
    return None if stat.S_ISREG(status.st_mode) else not_regular(path, status.st_mode)


def _remove(name: str | Path) -> None:
    try:
        os.unlink(name)
    except OSError:
        pass
