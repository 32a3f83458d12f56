"""What the screen and the console say about an image or audio, and saving one to a file.

No Textual here: ``--plain`` and ``-p`` use it too.
"""

from __future__ import annotations

import io
import os
import re
import struct
import warnings
import wave
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_chat_tui.core.content import ContentPart, size_text

if TYPE_CHECKING:
    from PIL.Image import Image as PillowImage

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+|^\.+")
MAX_IMAGE_PIXELS = 40_000_000  # more than this is not decoded (a 60000×60000 PNG can be a few bytes)
THUMBNAIL_SIDE = 512  # pixels: an image is scaled down to this before it is drawn


class ImageProblem(Exception):
    """Bytes that cannot be shown as an image; the message says why, in a line."""


def prepare_image(data: bytes) -> PillowImage:
    """The image in ``data``, decoded and scaled down for drawing.

    Raises:
        ImageProblem: not an image Pillow reads, too many pixels, or cut short.
    """
    from PIL import Image as PILImage  # here, not at start-up: Pillow is for the first image shown
    from PIL import UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", PILImage.DecompressionBombWarning)
            image = PILImage.open(io.BytesIO(data))
            width, height = image.size
            if width * height > MAX_IMAGE_PIXELS:
                raise ImageProblem(f"{width}×{height} pixels is too large to draw (limit {MAX_IMAGE_PIXELS:,} pixels)")
            image.draft("RGB", (THUMBNAIL_SIDE, THUMBNAIL_SIDE))
            image.load()
            image.thumbnail((THUMBNAIL_SIDE, THUMBNAIL_SIDE))
            return image.convert("RGB")
    except ImageProblem:
        raise
    except UnidentifiedImageError:
        raise ImageProblem("the bytes are not an image this app can read") from None
    except (PILImage.DecompressionBombError, PILImage.DecompressionBombWarning):
        raise ImageProblem("the image has too many pixels to draw") from None
    except (OSError, ValueError, SyntaxError, struct.error) as exc:
        raise ImageProblem(f"the image is damaged or cut short ({exc})") from None


def image_size(data: bytes) -> str:
    """``640×480 px`` from the image's header, without decoding it ("" when it is not one)."""
    from PIL import Image as PILImage

    try:
        with PILImage.open(io.BytesIO(data)) as image:
            return f"{image.width}×{image.height} px"
    except Exception:  # noqa: BLE001 - any unreadable header just leaves the size out
        return ""


def audio_length(part: ContentPart) -> str:
    """``0.5 s`` for WAV audio (read from its header), else its size."""
    data = part.media_bytes()
    if data is not None and part.mime_type.split(";")[0].strip() in ("audio/wav", "audio/x-wav", "audio/wave"):
        try:
            with wave.open(io.BytesIO(data)) as audio:
                return f"{audio.getnframes() / audio.getframerate():.1f} s"
        except (wave.Error, EOFError, ZeroDivisionError):
            pass
    return size_text(part.size)


def media_line(part: ContentPart) -> str:
    """One line about an image or audio: type, size or length, and why it is not shown if it is not."""
    mime = part.mime_type or "unknown type"
    if part.kind == "audio":
        line = f"♪ audio {mime}, {audio_length(part)}"
    else:
        data = part.media_bytes()
        pixels = image_size(data) if data is not None else ""
        line = f"▣ image {mime}, {size_text(part.size)}" + (f", {pixels}" if pixels else "")
    problem = part.media_problem()
    return f"{line}: {problem}" if problem else line


def save_media(part: ContentPart, folder: Path, stem: str) -> Path:
    """Write the bytes of ``part`` to a new file in ``folder`` named after ``stem`` (``-2``, ``-3``…
    when taken: an existing file is never overwritten); returns its path.

    Raises:
        OSError: the folder cannot be written, or the bytes are not there.
    """
    data = part.media_bytes()
    if data is None:
        raise FileNotFoundError(part.media_problem() or "its bytes were not kept")
    extension = part.extension()
    stem = _UNSAFE.sub("_", stem)[:80] or "media"  # a call id comes from the model: never a path
    for number in range(1, 1000):
        path = folder / (f"{stem}{extension}" if number == 1 else f"{stem}-{number}{extension}")
        try:
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        return path
    raise FileExistsError(f"{folder}/{stem}{extension} and 998 more names are taken")


def save_all_media(parts: list[ContentPart], folder: Path, stem: str) -> tuple[list[str], list[str]]:
    """Save each image and audio of ``parts`` with ``save_media`` (as ``stem-1``, ``stem-2``…).

    Returns:
        The paths written, and a line for each part that was not (what and why).
    """
    saved, problems = [], []
    for number, part in enumerate(parts, 1):
        try:
            saved.append(str(save_media(part, folder, f"{stem}-{number}")))
        except OSError as exc:
            problems.append(f"{part.kind} {number} not saved: {exc.strerror or exc}")
    return saved, problems
