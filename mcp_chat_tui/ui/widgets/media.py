"""Images and audio of a result in the chat card and the call's detail screen (and of a prompt's
attachments, under the message and in the resources preview).

Images are drawn with ``textual-image``: Sixel or the Kitty graphics protocol where the
terminal has one, else coloured half blocks (also when there is no terminal, as in tests).
Bad bytes (not an image, cut short, too many pixels) show one line saying so; decoding runs
on a thread, so a large image never holds up the screen. textual-image asks the terminal what
it can draw when imported, so this module is imported before the app starts (never by the console);
where that fails, images are described and not drawn.
"""

from __future__ import annotations

import logging
from typing import Any

from PIL import Image as PILImage
from textual import work
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from mcp_chat_tui.core.content import ContentPart
from mcp_chat_tui.core.media_info import ImageProblem, media_line, prepare_image
from mcp_chat_tui.core.text import pretty_json
from mcp_chat_tui.ui.format import literal


def _image_widget() -> tuple[type[Widget] | None, str]:
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


IMAGE_WIDGET, NO_IMAGES = _image_widget()


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

    def compose(self):
        yield Static(literal(media_line(self.part)), classes="media-line")

    def on_mount(self) -> None:
        if self.part.kind == "image" and not self.part.media_problem():
            if IMAGE_WIDGET is None:
                self.mount(Static(literal(f"not drawn: {NO_IMAGES}"), classes="media-problem"))
            else:
                self.load_image()

    @work(thread=True, exclusive=True, group="media")
    def load_image(self) -> None:
        data = self.part.media_bytes()
        try:
            image = prepare_image(data or b"")
        except ImageProblem as problem:
            self.app.call_from_thread(self._show_problem, str(problem))
            return
        self.app.call_from_thread(self._show_image, image)

    async def _show_image(self, image: PILImage.Image) -> None:
        if self.is_attached and IMAGE_WIDGET is not None:
            await self.mount(IMAGE_WIDGET(image, classes="media-image"))

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
