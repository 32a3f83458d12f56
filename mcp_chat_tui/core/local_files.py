"""Files from the user's disk attached to a message with ``@``: which paths ``@`` completes, and a
file read into an attachment.

``@`` completes paths as a shell does: relative to the working directory, or absolute, or from
``~``, one folder at a time (a folder is offered with its ``/``, so choosing it goes on into it).
Only files inside the working directory or one of the shared roots (``/roots``) are offered and
read: a path that leads outside them, through ``..`` or a symbolic link, is refused. A text file is
attached as it is, cut at ``MAX_TEXT_BYTES`` with a note saying so; a file that is not text (a NUL
byte, or not UTF-8) is refused with a message, as are FIFOs, devices and sockets.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from mcp_chat_tui.core.attachments import FILE, Attachment, size_text
from mcp_chat_tui.core.errors import UserFacingError

MAX_TEXT_BYTES = 100 * 1024  # of a file's text the model is sent; the rest is cut with a note
MAX_LISTED = 50
SENTENCE_ENDS = ".,;:!?)]}'\""
AT_WORD = re.compile(r"(?:^|(?<=\s))@(\S+)")  # ``@`` at the start of a word, and the word after it


class FileNotAttached(UserFacingError):
    """``-p``'s prompt names a file with ``@`` that cannot be attached: bad input, nothing is sent."""

    exit_code = 2


@dataclass(frozen=True)
class LocalFile:
    """A path ``@`` may complete to: ``shown`` as typed (relative, ``~``, absolute), ``path`` resolved."""

    shown: str
    path: Path
    folder: bool
    size: int = 0


def _inside(path: Path, places: list[Path]) -> bool:
    return any(path == place or place in path.parents for place in places)


def _reachable(folder: Path, places: list[Path]) -> bool:
    """Whether ``folder`` is inside one of ``places`` or on the way to one (an ancestor of it)."""
    return _inside(folder, places) or any(folder in place.parents for place in places)


def resolved(typed: str, cwd: Path) -> Path:
    return Path(os.path.realpath(cwd / os.path.expanduser(typed)))


def completions(typed: str, cwd: Path, roots: list[Path]) -> list[LocalFile]:
    """The files and folders ``typed`` (the text after ``@``) may continue to, folders first."""
    places = [Path(os.path.realpath(place)) for place in [cwd, *roots]]
    folder_part, _, start = typed.rpartition("/")
    folder_typed = folder_part + "/" if typed.count("/") else ""
    folder = resolved(folder_typed or ".", cwd)
    if not _reachable(folder, places):
        return []
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return []
    found = []
    for entry in entries:
        if not entry.name.lower().startswith(start.lower()) or (
            entry.name.startswith(".") and not start.startswith(".")
        ):
            continue
        path = Path(os.path.realpath(entry.path))
        try:
            is_folder = entry.is_dir()
            size = 0 if is_folder else entry.stat().st_size
        except OSError:
            continue
        if is_folder and _reachable(path, places):
            found.append(LocalFile(folder_typed + entry.name + "/", path, True))
        elif not is_folder and _inside(path, places):
            found.append(LocalFile(folder_typed + entry.name, path, False, size))
    found.sort(key=lambda item: not item.folder)
    return found[:MAX_LISTED]


def read_attachment(typed: str, cwd: Path, roots: list[Path]) -> Attachment | str:
    """The file ``typed`` names as an attachment, or why it cannot be (a sentence for the user)."""
    path = resolved(typed, cwd)
    places = [Path(os.path.realpath(place)) for place in [cwd, *roots]]
    if not _inside(path, places):
        return f"{typed} is outside the working directory and the roots (/roots add FOLDER to allow it)"
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        return f"cannot read {typed}: {exc.strerror or exc}"
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        os.close(descriptor)
        return f"{typed} is not a regular file (a folder, device, FIFO or socket): not attached"
    with os.fdopen(descriptor, "rb") as file:
        data = file.read(MAX_TEXT_BYTES + 4)
    if b"\x00" in data:
        return f"{typed} is a binary file ({size_text(info.st_size)}): only text files can be attached"
    cut = info.st_size > MAX_TEXT_BYTES
    try:  # a character cut in two at the limit is left out, not taken for binary
        text = codecs.getincrementaldecoder("utf-8")().decode(data[:MAX_TEXT_BYTES] if cut else data, final=not cut)
    except UnicodeDecodeError:
        return f"{typed} is not UTF-8 text ({size_text(info.st_size)}): only text files can be attached"
    if cut:
        text += f"\n[cut: the first {size_text(MAX_TEXT_BYTES)} of {size_text(info.st_size)}]"
    return Attachment(kind=FILE, name=typed, uri=path.as_uri(), text=text)


def files_named(text: str, cwd: Path, roots: list[Path]) -> tuple[list[Attachment], list[str]]:
    """The files a line names with ``@PATH`` where nothing completes (``--plain``, ``-p``): each ``@``
    word that names an existing path is read as the app attaches a chosen file (``read_attachment``);
    the second list says why each that cannot be attached is not (binary, outside the roots). A word
    ends before the punctuation a sentence puts after it (``@notes.md?``) when only that names a
    file; an ``@`` word that names nothing on the disk but a folder (a person, a resource) stays text."""
    attached: list[Attachment] = []
    problems: list[str] = []
    for word in dict.fromkeys(AT_WORD.findall(text)):
        typed = next((w for w in (word, word.rstrip(SENTENCE_ENDS)) if w and _names_a_path(w, cwd)), None)
        if typed is None:
            continue
        read = read_attachment(typed, cwd, roots)
        if isinstance(read, str):
            problems.append(read)
        else:
            attached.append(read)
    return attached, problems


def _names_a_path(typed: str, cwd: Path) -> bool:
    """Whether ``typed`` names something on the disk other than a folder (``@home`` with a folder
    ``home`` here is a word, not a file to attach)."""
    path = cwd / os.path.expanduser(typed)
    return os.path.lexists(path) and not os.path.isdir(path)
