"""Images and audio of a result in the chat card and the call's detail screen (and of a prompt's
attachments, under the message and in the resources preview).

Images are drawn with ``textual-image``: Sixel or the Kitty graphics protocol where the
terminal has one, else coloured half blocks (also when there is no terminal, as in tests).
Bad bytes (not an image, cut short, too many pixels) show one line saying so; decoding runs
on a thread, so a large image never holds up the screen. textual-image asks the terminal what
it can draw when imported, which must happen before the app takes the terminal: the full-screen
command asks on a thread while it starts (``probe_terminal_for_images``, waited for with
``image_support`` before the app runs), so neither the wait for the terminal's answers nor
textual-image's imports (numpy, Pillow) hold up the first frame. Where asking fails, images are
described and not drawn.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, Protocol

from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from mcp_chat_tui.core.content import ContentPart
from mcp_chat_tui.core.media_info import ImageProblem, media_line, prepare_image
from mcp_chat_tui.core.text import pretty_json
from mcp_chat_tui.ui.format import literal

if TYPE_CHECKING:
    from PIL.Image import Image as PillowImage


class ImageWidget(Protocol):
    """A widget class of textual-image's, which draws ``image`` (which one depends on the terminal)."""

    def __call__(self, image: PillowImage, *, classes: str | None = None) -> Widget: ...


def _image_widget() -> tuple[ImageWidget | None, str]:
    """textual-image's widget for this terminal, or None and why it cannot draw here.

    Importing it asks the terminal (cell size in pixels, Sixel, Kitty graphics); a terminal that
    does not answer costs a few tenths of a second, one that reports no size makes it fail. Its
    log lines would land on the terminal before the app starts, so they go nowhere."""
    logging.getLogger("textual_image").addHandler(logging.NullHandler())
    try:
        from textual_image.renderable import Image as AutoRenderable
        from textual_image.renderable import UnicodeImage as UnicodeRenderable
        from textual_image.widget import HalfcellImage
        from textual_image.widget import Image as AutoImage
    except Exception as exc:  # noqa: BLE001 - images are then described, never drawn
        return None, f"this terminal could not be asked how to draw images ({type(exc).__name__}: {exc})"
    # Without a terminal textual-image falls back to grey characters; half blocks keep the colours.
    return (HalfcellImage if AutoRenderable is UnicodeRenderable else AutoImage), ""


_asked: tuple[ImageWidget | None, str] | None = None  # what _image_widget said, once asked
_asking = threading.Lock()


def image_support() -> tuple[ImageWidget | None, str]:
    """The widget images are drawn with here, or None and why they are not: asked once, on the first
    call (which waits for a probe already running)."""
    global _asked
    with _asking:
        if _asked is None:
            _asked = _image_widget()
    return _asked


def probe_terminal_for_images() -> threading.Thread:
    """Ask the terminal how to draw images on a thread, while the app's other modules are imported:
    the terminal's answers (or the wait for them, 0.1 s a question where it sends none) and
    textual-image's imports overlap that work. ``image_support()`` waits for it; call it before
    anything else reads the terminal (a question on it, the app)."""
    import textual.app  # noqa: F401 - here first: the thread then imports only what no other code imports yet

    thread = threading.Thread(target=image_support, name="image-probe", daemon=True)
    thread.start()
    return thread


def __getattr__(name: str) -> Any:
    """``IMAGE_WIDGET`` and ``NO_IMAGES``: ``image_support()``'s answer, asked for on first use."""
    if name == "IMAGE_WIDGET":
        return image_support()[0]
    if name == "NO_IMAGES":
        return image_support()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class MediaView(Vertical):
    """One image or audio of a result: a line about it, and the image drawn under it."""

    DEFAULT_CSS = """
    MediaView { height: auto; width: 100%; }
    MediaView > .media-line { color: $text-muted; }
    MediaView > .media-problem { color: $warning; }
    MediaView > .media-image { width: auto; height: 8; }
    MediaView.-large > .media-image { height: 16; }
    MediaView.-attached { padding-left: 5; }
    """

    def __init__(self, part: ContentPart, *, large: bool = False, classes: str = "") -> None:
        super().__init__(classes=" ".join(name for name in ("-large" if large else "", classes) if name))
        self.part = part

    def compose(self) -> ComposeResult:
        yield Static(literal(media_line(self.part)), classes="media-line")

    def on_mount(self) -> None:
        if self.part.kind == "image" and not self.part.media_problem():
            drawn_with, not_drawn = image_support()
            if drawn_with is None:
                self.mount(Static(literal(f"not drawn: {not_drawn}"), classes="media-problem"))
            else:
                self.load_image()

    @work(thread=True, exclusive=True, group="media")
    def load_image(self) -> None:
        # Each ``type: ignore`` below: mypy cannot solve ``call_from_thread``'s ``T | Awaitable[T]`` for
        # a coroutine function (it finds ``Never``); the calls are as Textual documents them.
        data = self.part.media_bytes()
        try:
            image = prepare_image(data or b"")
        except ImageProblem as problem:
            self.app.call_from_thread(self._show_problem, str(problem))  # type: ignore[arg-type]
            return
        self.app.call_from_thread(self._show_image, image)  # type: ignore[arg-type]

    async def _show_image(self, image: PillowImage) -> None:
        drawn_with = image_support()[0]
        if self.is_attached and drawn_with is not None:
            await self.mount(drawn_with(image, classes="media-image"))

    async def _show_problem(self, problem: str) -> None:
        if self.is_attached:
            await self.mount(Static(literal(f"not shown: {problem}"), classes="media-problem"))


STRUCTURED_LINES_IN_CARD = 12


class StructuredPreview(Static):
    """A result's structured content under its card, pretty-printed (the first lines of it)."""

    DEFAULT_CSS = """
    StructuredPreview { color: $text-muted; height: auto; }
    """

    def __init__(self, structured: dict[str, Any]) -> None:
        lines = pretty_json(structured).split("\n")
        shown = "\n".join(lines[:STRUCTURED_LINES_IN_CARD])
        if len(lines) > STRUCTURED_LINES_IN_CARD:
            shown += f"\n… {len(lines) - STRUCTURED_LINES_IN_CARD} more lines (Enter on the call's row shows them)"
        super().__init__(literal(shown))
