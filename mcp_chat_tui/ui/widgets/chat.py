"""The chat pane: user prompts, streamed assistant replies, thinking, and a card where each call happened."""

from __future__ import annotations

import asyncio
import re
import sys
import time

from markdown_it import MarkdownIt
from rich.markdown import Markdown as RichMarkdown
from textual import events
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Size
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Collapsible, Markdown, MarkdownViewer, Static, Tree, _collapsible, _markdown
from textual.widgets.markdown import MarkdownStream, MarkdownTableOfContents

from mcp_chat_tui.core.progress import progress_bar
from mcp_chat_tui.core.text import one_line, visible_controls
from mcp_chat_tui.ui.format import DisplayClock, literal
from mcp_chat_tui.ui.records import STATE_GLYPH, CallRecord, CallState
from mcp_chat_tui.ui.styles import widget_classes

MAX_EXCHANGES_SHOWN = 15
SEAL_AFTER = 2000  # characters of streamed Markdown after which a segment closes at the next paragraph break
PACE = 0.1  # seconds between updates of a streaming reply's Markdown at the least (10 a second at most)
MAX_PACE = 0.75  # seconds: text waits no longer than this to be shown
MODEL_SLOWDOWN = 0.02  # the share of a local model's speed the redraw budget gives up at most (``drawing_cost``)
MAX_SHARE = 0.25  # of one core: what the app's thread may use over a streaming reply, whatever the model
_AFTER_BLANK_LINE = re.compile(r"(?<=\n\n)")
_LIST_ITEM = re.compile(r"\s*([-*+]|\d+[.)])\s")


def drawing_cost(thread_share: float, spare_cores: float) -> float:
    """Seconds of generation a local model loses for each second of CPU the app's thread uses
    while a reply streams, given how busy generating keeps the process (``ThreadLoad``).

    Two things are taken from the model. The interpreter: Python runs one thread at a time, and
    while the app's thread draws, the model's thread waits whenever it needs it, which is
    ``thread_share`` of the time. A core: with less than one spare, the app's thread runs on one
    the model's threads (its Python thread, MLX's workers on a CPU) would have used. Measured on
    2 cores beside a small model on the CPU (a share of 0.65, 0.55 of a core spare: a cost of
    1.1), a burst of 10 ms of plain Python on the app's thread cost the model 8-9 ms, and over
    whole replies the app's 60-70 ms of drawing and handling text cost it about 90 ms; the
    interpreter alone would account for 6.5 and 40-45."""
    return thread_share + min(1.0, max(0.0, 1.0 - spare_cores))


def drawing_share(model_cost: float) -> float:
    """The share of a core the app's thread may use while a reply streams, when each second of
    it costs the model ``model_cost`` seconds (``drawing_cost``): ``MODEL_SLOWDOWN`` of the
    model's speed. A small model on a CPU, busy most of the time, leaves the app about 2% of a
    core; a large model on a GPU, whose thread mostly waits, leaves up to ``MAX_SHARE`` (and then
    ``PACE`` is what limits redraws)."""
    if model_cost * MAX_SHARE <= MODEL_SLOWDOWN:
        return MAX_SHARE
    return MODEL_SLOWDOWN / model_cost


class DrawingBudget:
    """How long a streaming reply's next redraw waits, so that over the whole reply the app's
    thread keeps to its ``drawing_share`` of a core.

    It counts the thread's CPU time since the reply began against the time that has passed,
    whatever the CPU was spent on: the prompt and the reply appearing at the start, batches of
    text arriving, redraws. What the thread has spent beyond its share is owed, and the next
    redraw waits it off; time in which little was drawn (a tool running, an approval waiting)
    leaves at most ``MAX_PACE`` of credit, so a quiet spell does not buy a burst of redraws. A
    redraw never waits more than ``MAX_PACE`` after the previous one began, and no more than
    ``MAX_PACE`` is ever owed. ``model_cost`` tells what each second of the thread's CPU costs
    the model (``drawing_cost``; 0 for a model that does not run in this process); it is read
    at each redraw."""

    def __init__(self, model_cost=lambda: 0.0, cpu_clock=time.thread_time, wall_clock=time.monotonic) -> None:
        self._model_cost = model_cost
        self._cpu_clock, self._wall_clock = cpu_clock, wall_clock
        self._cpu, self._at = cpu_clock(), wall_clock()
        self.owed = 0.0  # seconds of waiting; negative: credit

    def further_wait(self, since_update: float) -> float:
        """Seconds to wait still, ``since_update`` seconds after the last redraw began."""
        cpu, now = self._cpu_clock(), self._wall_clock()
        share = drawing_share(self._model_cost())
        # Time passing pays off what is owed, down to MAX_PACE of credit; the CPU spent is
        # counted after it (as if spent last, the case least kind to the model). What is owed
        # is kept to MAX_PACE too: a costly moment slows a few redraws, not the rest of the reply.
        credit_left = max(self.owed - (now - self._at), -MAX_PACE)
        self.owed = min(credit_left + (cpu - self._cpu) / share, MAX_PACE)
        self._cpu, self._at = cpu, now
        return max(0.0, min(self.owed, MAX_PACE - since_update))


class OneLayoutPass:
    """For the widgets of the chat (prompts, notices, replies and the blocks a streaming reply
    grows): a layout that finds their scrollable (virtual) size changed does not ask for a
    second layout, nor does a widget changed before it is mounted.

    Textual stores a new virtual size through a reactive that requests a layout and a full
    repaint of the widget, so every redraw of a growing reply was laid out and painted twice,
    the second time to find nothing changed: the reply, the Markdown widget and the chat log
    are as tall as the screen, so it repainted the whole chat. The layout that found the new
    size has placed everything already; the scrollbars are updated from it all the same, and a
    widget whose size changed is repainted by that layout. (Textual's own scrolling path stores
    the size the same way, without the extra layout.)"""

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        return super()._size_updated(size, virtual_size, container_size, layout=False)  # type: ignore[misc]

    def refresh(self, *regions, repaint: bool = True, layout: bool = False, recompose: bool = False):
        # A widget is laid out with the rest once it is mounted: whatever mounts it asks for a
        # layout of its parent after the widget's compose and mount handlers ran. A layout the
        # widget asks for before that (Markdown's blocks are given their text before they are
        # mounted, a reply mounts its header while composing) would stay pending and come after
        # that one: a second layout finding nothing to move.
        layout = layout and self.is_mounted  # type: ignore[attr-defined]
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)  # type: ignore[misc]


def _one_pass_blocks(blocks: dict[str, type[Widget]]) -> dict[str, type[Widget]]:
    """Markdown's block classes, each with ``OneLayoutPass`` (same names, so the same styles)."""
    made = {
        block: type(block.__name__, (OneLayoutPass, block), {"__module__": __name__}) for block in set(blocks.values())
    }
    return {name: made[block] for name, block in blocks.items()}


_PARSER: MarkdownIt | None = None


def shared_parser() -> MarkdownIt:
    """One Markdown parser for every reply. Textual's Markdown widget builds a new one for each
    update unless given a factory (half a millisecond, as long as parsing a long paragraph); a
    parser keeps no state between documents, so one serves them all."""
    global _PARSER
    if _PARSER is None:
        _PARSER = MarkdownIt("gfm-like")
    return _PARSER


class ReplyMarkdown(OneLayoutPass, Markdown):
    """The Markdown widget of a streaming reply: Textual's, with its blocks (paragraphs, lists,
    code, tables) taking one layout per update (``OneLayoutPass``) and one parser for all
    updates (``shared_parser``)."""

    BLOCKS = _one_pass_blocks(Markdown.BLOCKS)

    def __init__(self, markdown: str | None = None, **kwargs) -> None:
        kwargs.setdefault("parser_factory", shared_parser)
        super().__init__(markdown, **kwargs)

    def post_message(self, message: Message) -> bool:
        # Markdown announces its table of contents when mounted and after each whole update; the
        # message bubbles through every container up to the app, and the chat shows no contents.
        if isinstance(message, Markdown.TableOfContentsUpdated):
            return False
        return super().post_message(message)


class PacedMarkdownStream(MarkdownStream):
    """Textual's Markdown stream, taking in what arrived at most every ``PACE`` seconds, and less
    often when drawing is costly.

    Every update of the Markdown widget is a parse, a layout and a repaint on the app's thread,
    and a local model needs the same cores: each millisecond spent drawing is taken from
    generation. So after each update the stream waits as long as the reply's ``DrawingBudget``
    says: the app's thread keeps to its ``drawing_share`` of a core over the reply, and text
    waits no longer than ``MAX_PACE``. The first text is shown at once. ``stop`` still shows everything
    written, unless told the widget is about to be replaced."""

    def __init__(self, markdown_widget: Markdown, budget: DrawingBudget) -> None:
        super().__init__(markdown_widget)
        self.budget = budget
        self._show_the_rest = True

    def write_now(self, markdown_fragment: str) -> None:
        """``write`` without handing the loop over: the text is taken in at the next update."""
        if self._stopped:
            raise RuntimeError("Can't write to the stream after it has stopped.")
        if markdown_fragment:
            self._pending.append(markdown_fragment)
            self._new_markup.set()

    async def stop(self, *, show_the_rest: bool = True) -> None:
        """Stop the stream; ``show_the_rest=False`` leaves text not yet taken in out of the widget
        (which is about to give way to a static rendering of the whole text)."""
        self._show_the_rest = show_the_rest
        await super().stop()

    async def _run(self) -> None:
        try:
            while await self._new_markup.wait():
                began = time.monotonic()
                new_markdown = "".join(self._pending)
                self._pending.clear()
                self._new_markup.clear()
                await asyncio.shield(self.markdown_widget.append(new_markdown))
                await asyncio.sleep(PACE)
                # The layout and paint of this update happen after ``append`` returns, inside
                # the sleep: the budget reads the CPU time after it.
                wait = self.budget.further_wait(time.monotonic() - began)
                if wait > 0:
                    await asyncio.sleep(wait)
        except asyncio.CancelledError:
            pass
        new_markdown = "".join(self._pending)
        self._pending.clear()
        if new_markdown and self._show_the_rest:
            await self.markdown_widget.append(new_markdown)


class ChatLog(OneLayoutPass, VerticalScroll):
    """Scrolls with new content while the view is at the end; stays put once the user scrolls up.

    Only the last ``MAX_EXCHANGES_SHOWN`` exchanges stay mounted: every widget in
    the log is laid out again as a reply grows, so a long conversation would
    otherwise slow streaming down. The transcript keeps everything.
    """

    DEFAULT_CSS = """
    ChatLog { height: 1fr; padding: 0 1; }
    ChatLog > #hidden-note { color: $text-muted; text-style: italic; }
    """

    hidden_exchanges = 0

    class Typed(Message):
        """Text typed or pasted while the chat had the focus, meant for the prompt."""

        def __init__(self, text: str, *, pasted: bool = False) -> None:
            super().__init__()
            self.text = text
            self.pasted = pasted

    def on_mount(self) -> None:
        self.anchor()

    def on_key(self, event: events.Key) -> None:
        # Reading the chat and then typing is writing the next prompt: the letter goes there
        # rather than nowhere. Keys that do something (scrolling, the app's keys) keep doing it.
        if not event.is_printable or not event.character or event.key in self.app.active_bindings:
            return
        event.stop()
        event.prevent_default()
        self.post_message(self.Typed(event.character))

    def on_paste(self, event: events.Paste) -> None:
        event.stop()
        if event.text:
            self.post_message(self.Typed(event.text, pasted=True))

    async def add_prompt(self, message: UserMessage) -> None:
        await self.mount(message)
        await self.trim()

    async def trim(self, keep: int = MAX_EXCHANGES_SHOWN) -> None:
        prompts = [child for child in self.children if isinstance(child, UserMessage)]
        excess = len(prompts) - keep
        if excess <= 0:
            return
        first_kept = prompts[excess]
        old = []
        for child in self.children:
            if child is first_kept:
                break
            if child.id != "hidden-note":
                old.append(child)
        await self.remove_children(old)
        await self.note_hidden(excess)

    async def note_hidden(self, count: int) -> None:
        """Say that ``count`` more earlier exchanges are not shown (never mounted, or taken away)."""
        if count <= 0:
            return
        self.hidden_exchanges += count
        note = literal(f"… {self.hidden_exchanges} earlier exchange(s) not shown here; the transcript keeps them all")
        existing = self.query("#hidden-note")
        if existing:
            existing.first(Static).update(note)
        else:
            await self.mount(Static(note, id="hidden-note"), before=0)

    async def clear(self) -> None:
        self.hidden_exchanges = 0
        await self.remove_children()


class UserMessage(OneLayoutPass, Static):
    DEFAULT_CSS = """
    UserMessage { margin: 1 0 0 0; color: $text; text-style: bold; }
    """

    def __init__(self, prompt: str) -> None:
        text = literal("prompt -> ", "dim")
        text.append_text(literal(prompt))
        super().__init__(text)
        self.prompt = prompt


class Notice(OneLayoutPass, Static):
    DEFAULT_CSS = """
    Notice { color: $warning; margin: 1 0 0 0; }
    Notice.-error { color: $error; text-style: bold; }
    Notice.-muted { color: $text-muted; }
    """

    def __init__(self, text: str, *, error: bool = False, muted: bool = False) -> None:
        super().__init__(literal(text), classes="-error" if error else "-muted" if muted else "")


class ToolCallCard(Static):
    """A one-line card in the flow of the chat: tool, state, duration."""

    DEFAULT_CSS = """
    ToolCallCard { background: $panel; padding: 0 1; margin: 1 0 0 0; width: auto; max-width: 100%; }
    ToolCallCard.-done { border-left: wide $success; }
    ToolCallCard.-failed { border-left: wide $error; }
    ToolCallCard.-waiting { border-left: wide $warning; }
    """

    def __init__(self, record: CallRecord, clock: DisplayClock) -> None:
        super().__init__()
        self.record = record
        self.clock = clock
        self.refresh_card()

    def on_mount(self) -> None:
        # Textual keeps the measured width when the text changes while the card is being mounted:
        # the card would stay as wide as its first text ("proposed") and cut the new state off.
        self.refresh_card()

    def refresh_card(self) -> None:
        record = self.record
        text = literal(f"{STATE_GLYPH[record.state]} ", "bold")
        text.append_text(literal(record.tool, "bold"))
        text.append_text(literal(f"  {record.server}", "dim"))
        text.append_text(literal(f"  {record.state.value}"))
        if record.state.finished and record.duration is not None:
            text.append_text(literal(f"  {self.clock.duration(record.duration)}", "dim"))
        if record.state is CallState.INTERRUPTED:
            text.append_text(literal("  (it may or may not have run)", "italic"))
        if record.progress is not None:
            text.append_text(literal(f"\n{progress_bar(record.progress)} {record.progress.describe()}", "dim"))
        if record.state is CallState.MALFORMED:
            text.append_text(literal(f"\n{record.reason}\n", "italic"))
            text.append_text(literal(one_line(record.raw, 400), "dim"))
        self.update(text)
        self.set_class(record.state is CallState.DONE, "-done")
        failed = record.state in (
            CallState.ERROR,
            CallState.TIMEOUT,
            CallState.MALFORMED,
            CallState.DENIED,
            CallState.CANCELLED,
            CallState.INTERRUPTED,
        )
        self.set_class(failed, "-failed")
        self.set_class(record.state in (CallState.AWAITING, CallState.RUNNING, CallState.PROPOSED), "-waiting")


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

    class PartClosed(Message):
        """A long part of the reply was closed for good at a paragraph break (``SEAL_AFTER``)."""

    def __init__(self, model_label: str, model_cost=lambda: 0.0) -> None:
        super().__init__()
        self.model_label = model_label
        self._model_cost = model_cost
        self._segment: Markdown | None = None
        self._segment_text = ""
        self._closed_text = ""
        self._closed_segments: list[tuple[Markdown, str]] = []
        self._stream = None
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

    def compose(self):
        yield ReplyHeader(literal(f"◆ {self.model_label}"), classes="reply-header")
        yield self._spare

    def count_from_now(self) -> None:
        """The model starts generating now: the redraw budget counts the app's CPU time from here.
        The frame that showed the reply's header and first text widget was drawn before, so the
        model did not wait on it."""
        self._budget = DrawingBudget(self._model_cost)

    @property
    def text(self) -> str:
        """Every text segment so far, joined."""
        return self._closed_text + self._segment_text

    async def append_text(self, fragment: str) -> None:
        for piece in _AFTER_BLANK_LINE.split(visible_controls(fragment)):
            await self._append_piece(piece)

    def append_text_now(self, fragment: str) -> bool:
        """Take ``fragment`` into the open text part at once when it only extends it (no blank
        line, so nothing to close or start): True if taken, else ``append_text`` must do it."""
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
            self._stream = PacedMarkdownStream(self._segment, self._budget)
            self._stream.start()
        self._extend_segment(piece)
        await self._stream.write(piece)
        if len(self._segment_text) >= SEAL_AFTER and self._segment_text.endswith("\n\n") and self._may_end_here():
            # A long segment ends at a paragraph break and the text goes on in a new one: each
            # update costs what the open segment holds, not the whole reply.
            await self._seal_segment()

    def _extend_segment(self, piece: str) -> None:
        """Add ``piece`` to the open segment's text, keeping track of its code fences and of its
        last non-blank line."""
        self._segment_text += piece
        lines = (self._line_tail + piece).split("\n")
        self._line_tail = lines.pop()
        for line in lines:
            if line.lstrip(" ").startswith(("```", "~~~")):
                self._in_fence = not self._in_fence
            if line.strip():
                self._last_line = line

    def _may_end_here(self) -> bool:
        """At a blank line outside a code fence that does not follow a list item or indented text
        (a blank line inside a list keeps it one list)."""
        last = self._last_line
        return not self._in_fence and not last[:1].isspace() and not _LIST_ITEM.match(last)

    async def append_thinking(self, fragment: str) -> None:
        if self._thinking is None:
            await self._close_segment()
            await self._drop_spare()
            self._thinking = Static(classes="thinking")
            await self.mount(Collapsible(self._thinking, title="thinking", collapsed=True))
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
        """Stop the open segment's stream. Whatever it had not taken in yet comes with the whole
        text set just after, or with the static rendering that replaces the widget: it is not
        appended to the widget first."""
        if self._stream is not None:
            await self._stream.stop(show_the_rest=False)
            self._stream = None

    async def _seal_segment(self) -> None:
        """Close the open segment and show it as one static rendering, as a finished reply is."""
        await self._stop_stream()
        widget, text = self._segment, self._segment_text
        self._closed_text += text
        self._segment, self._segment_text = None, ""
        await self._show_static(widget, text)
        self.post_message(self.PartClosed())

    async def _show_static(self, widget: Markdown, text: str) -> None:
        """Put one static rendering of ``text`` in the place of its Markdown ``widget``."""
        await self.mount(ReplyText(RichMarkdown(text), classes="reply-text"), after=widget)
        await widget.remove()

    async def finish(self, note: str = "") -> None:
        """Close the reply. Its Markdown widgets become one static rendering each: a finished reply
        never changes, and fewer widgets keep the layout of a long chat cheap while the next reply streams."""
        await self._close_segment(show=False)
        await self._drop_spare()
        for widget, text in self._closed_segments:
            if widget.parent is self:
                await self._show_static(widget, text)
        self._closed_segments = []
        if note:
            await self.mount(ReplyText(literal(note), classes="reply-end"))
        self.finished = True


def chat_widget_classes() -> list[type[Widget]]:
    """Every widget class a reply may show: this module's, Markdown's blocks, the thinking's
    collapsible (not Markdown's viewer and table of contents, which the chat never uses)."""
    unused = (MarkdownViewer, MarkdownTableOfContents, Tree)
    return [cls for cls in widget_classes(sys.modules[__name__], _markdown, _collapsible) if cls not in unused]
