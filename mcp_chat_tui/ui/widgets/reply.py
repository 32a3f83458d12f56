"""An assistant's reply in the chat: Markdown text streamed in parts, thinking, and the cards between them."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, cast

from markdown_it import MarkdownIt
from rich.markdown import Markdown as RichMarkdown
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Collapsible, Markdown, Static
from textual.widgets.markdown import MarkdownBlock

from mcp_chat_tui.core.text import visible_controls
from mcp_chat_tui.ui.format import literal
from mcp_chat_tui.ui.streaming import DrawingBudget, PacedMarkdownStream
from mcp_chat_tui.ui.widgets.one_pass import OneLayoutPass

SEAL_AFTER = 2000  # characters of streamed Markdown after which a segment closes at the next paragraph break
_AFTER_BLANK_LINE = re.compile(r"(?<=\n\n)")
_LIST_ITEM = re.compile(r"\s*([-*+]|\d+[.)])\s")


THINKING_TITLE = "thinking"  # the collapsed block under a reply with what the model thought (Ctrl+T opens it)


def _one_pass_blocks(blocks: dict[str, type[MarkdownBlock]]) -> dict[str, type[MarkdownBlock]]:
    """Markdown's block classes, each with ``OneLayoutPass`` (same names, so the same styles)."""
    made = {  # (``type`` makes each class; only ``cast`` can say it is the block's subclass)
        block: cast(type[MarkdownBlock], type(block.__name__, (OneLayoutPass, block), {"__module__": __name__}))
        for block in set(blocks.values())
    }
    return {name: made[block] for name, block in blocks.items()}


_PARSER: MarkdownIt | None = None


def shared_parser() -> MarkdownIt:
    """One Markdown parser for every reply (Textual's widget would build one per update)."""
    global _PARSER
    if _PARSER is None:
        _PARSER = MarkdownIt("gfm-like")
    return _PARSER


class ReplyMarkdown(OneLayoutPass, Markdown):
    """Textual's Markdown widget with one layout pass per update and the ``shared_parser``."""

    BLOCKS = _one_pass_blocks(Markdown.BLOCKS)

    def __init__(self, markdown: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("parser_factory", shared_parser)
        super().__init__(markdown, **kwargs)

    def post_message(self, message: Message) -> bool:
        # Markdown announces its table of contents when mounted and after each whole update; the
        # message bubbles through every container up to the app, and the chat shows no contents.
        if isinstance(message, Markdown.TableOfContentsUpdated):
            return False
        return super().post_message(message)


class ReplyHeader(OneLayoutPass, Static):
    """The line a reply starts with: the model's name."""


class ReplyText(OneLayoutPass, Static):
    """A closed part of a reply, drawn once, or the note a stopped reply ends with."""


class AssistantReply(OneLayoutPass, Vertical):
    """One assistant turn: text segments streamed as Markdown, with tool-call cards between them."""

    DEFAULT_CSS = """
    AssistantReply { height: auto; margin: 1 0 0 0; }
    AssistantReply > .reply-header { color: $primary; text-style: bold; }
    AssistantReply Markdown { margin: 0; padding: 0; }
    AssistantReply Collapsible { margin: 0; padding: 0; border: none; background: transparent; }
    AssistantReply .thinking { color: $text-muted; text-style: italic; }
    AssistantReply .reply-end { color: $warning; }
    """

    def __init__(self, model_label: str, model_cost: Callable[[], float] = lambda: 0.0) -> None:
        super().__init__()
        self.model_label = model_label
        self._model_cost = model_cost
        self._segment: Markdown | None = None
        self._segment_text = ""
        self._closed_text = ""
        self._closed_segments: list[tuple[Markdown, str]] = []
        self._stream: PacedMarkdownStream | None = None  # the open segment's (None: no segment is open)
        self._budget = DrawingBudget(model_cost)  # from the start of the turn (``count_from_now``)
        self._in_fence, self._line_tail, self._last_line = False, "", ""
        self._thinking: Static | None = None
        self._thinking_text = ""
        # The first text segment's widget, mounted with the header before the model starts:
        # mounting a Markdown widget costs the app's thread a few milliseconds, which the first
        # text would otherwise take from the model. Used while it is still the reply's last
        # child; removed once anything else comes first.
        self._spare: ReplyMarkdown | None = ReplyMarkdown()
        self.finished = False

    def compose(self) -> ComposeResult:
        yield ReplyHeader(literal(f"◆ {self.model_label}"), classes="reply-header")
        if self._spare is not None:
            yield self._spare

    def count_from_now(self) -> None:
        """The model starts generating now: the drawing budget counts the app's CPU time from here."""
        self._budget = DrawingBudget(self._model_cost)

    @property
    def text(self) -> str:
        """Every text segment so far, joined."""
        return self._closed_text + self._segment_text

    async def append_text(self, fragment: str) -> None:
        for piece in _AFTER_BLANK_LINE.split(visible_controls(fragment)):
            await self._append_piece(piece)

    def append_text_now(self, fragment: str) -> bool:
        """Take ``fragment`` into the open text part at once if it only extends it.

        Returns:
            Whether it was taken (else ``append_text`` must take it).
        """
        if self._stream is None:
            return False
        text = visible_controls(fragment)
        if "\n\n" in self._segment_text[-1:] + text:
            return False
        self._extend_segment(text)
        self._stream.write_now(text)
        return True

    async def _append_piece(self, piece: str) -> None:
        """Text with at most one blank line, at its end."""
        if not piece:
            return
        stream = self._stream
        if self._segment is None:
            if not piece.strip():  # space between segments: kept in the text, nothing to show
                self._closed_text += piece
                return
            if self._spare is not None:
                self._segment, self._spare = self._spare, None
            else:
                self._segment = ReplyMarkdown()
                await self.mount(self._segment)
            self._segment_text = ""
            self._in_fence, self._line_tail, self._last_line = False, "", ""
            stream = self._stream = PacedMarkdownStream(self._segment, self._budget)
            stream.start()
        assert stream is not None  # an open segment has its stream
        self._extend_segment(piece)
        await stream.write(piece)
        if len(self._segment_text) >= SEAL_AFTER and self._segment_text.endswith("\n\n") and self._may_end_here():
            # A long segment ends at a paragraph break and the text goes on in a new one: each
            # update costs what the open segment holds, not the whole reply.
            await self._seal_segment()

    def _extend_segment(self, piece: str) -> None:
        """Add ``piece`` to the open segment's text, following its code fences and last non-blank line."""
        self._segment_text += piece
        lines = (self._line_tail + piece).split("\n")
        self._line_tail = lines.pop()
        for line in lines:
            if line.lstrip(" ").startswith(("```", "~~~")):
                self._in_fence = not self._in_fence
            if line.strip():
                self._last_line = line

    def _may_end_here(self) -> bool:
        """Whether the segment may close here: outside a code fence, not within a list or indented text."""
        last = self._last_line
        return not self._in_fence and not last[:1].isspace() and not _LIST_ITEM.match(last)

    async def append_thinking(self, fragment: str) -> None:
        if self._thinking is None:
            await self._close_segment()
            await self._drop_spare()
            self._thinking = Static(classes="thinking")
            await self.mount(Collapsible(self._thinking, title=THINKING_TITLE, collapsed=True))
        self._thinking_text += fragment
        self._thinking.update(literal(self._thinking_text))

    async def add_widget(self, widget: Widget) -> None:
        """A card or notice between text segments: the next text starts a new segment."""
        await self._close_segment()
        await self._drop_spare()
        self._thinking = None
        self._thinking_text = ""
        await self.mount(widget)

    async def _drop_spare(self) -> None:
        """Something other than text comes first: the unused first segment goes."""
        if self._spare is not None:
            spare, self._spare = self._spare, None
            await spare.remove()

    async def _close_segment(self, *, show: bool = True) -> None:
        """End the open segment; ``show=False`` when it is about to be replaced (no last Markdown update)."""
        await self._stop_stream()
        if self._segment is not None:
            if show:
                await self._segment.update(self._segment_text)
            self._closed_text += self._segment_text
            self._closed_segments.append((self._segment, self._segment_text))
            self._segment_text = ""
            self._segment = None

    async def _stop_stream(self) -> None:
        """Stop the open segment's stream; text it has not taken in comes with what replaces it."""
        if self._stream is not None:
            await self._stream.stop(show_the_rest=False)
            self._stream = None

    async def _seal_segment(self) -> None:
        """Close the open segment and show it as one static rendering, as a finished reply is."""
        await self._stop_stream()
        widget, text = self._segment, self._segment_text
        if widget is None:  # (called with a segment open)
            return
        self._closed_text += text
        self._segment, self._segment_text = None, ""
        await self._show_static(widget, text)

    async def _show_static(self, widget: Markdown, text: str) -> None:
        """Put one static rendering of ``text`` in the place of its Markdown ``widget``."""
        await self.mount(ReplyText(RichMarkdown(text), classes="reply-text"), after=widget)
        await widget.remove()

    async def finish(self, note: str = "") -> None:
        """Close the reply, each Markdown widget becoming one static rendering.

        Args:
            note: Why the reply ended early, shown at its end.
        """
        await self._close_segment(show=False)
        await self._drop_spare()
        for widget, text in self._closed_segments:
            if widget.parent is self:
                await self._show_static(widget, text)
        self._closed_segments = []
        if note:
            await self.mount(ReplyText(literal(note), classes="reply-end"))
        self.finished = True
