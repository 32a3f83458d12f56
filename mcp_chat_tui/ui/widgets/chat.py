"""The chat pane: user prompts, streamed assistant replies, thinking, and a card where each call happened."""

from __future__ import annotations

import asyncio
import time

from rich.markdown import Markdown as RichMarkdown
from rich.text import Text
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Collapsible, Markdown, Static

from mcp_chat_tui.core.text import one_line, visible_controls
from mcp_chat_tui.ui.format import DisplayClock, literal
from mcp_chat_tui.ui.records import STATE_GLYPH, CallRecord, CallState


MAX_EXCHANGES_SHOWN = 15
STREAM_REFRESH = 0.1  # seconds: streamed text reaches the Markdown widget at most this often
MAX_SEGMENT_BLOCKS = 8  # a streaming Markdown widget is closed at the next paragraph break past this many blocks


class ChatLog(VerticalScroll):
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

    def on_mount(self) -> None:
        self.anchor()

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
        self.hidden_exchanges += excess
        await self.remove_children(old)
        note = literal(f"… {self.hidden_exchanges} earlier exchange(s) not shown here; the transcript keeps them all")
        existing = self.query("#hidden-note")
        if existing:
            existing.first(Static).update(note)
        else:
            await self.mount(Static(note, id="hidden-note"), before=0)

    async def clear(self) -> None:
        self.hidden_exchanges = 0
        await self.remove_children()


class UserMessage(Static):
    DEFAULT_CSS = """
    UserMessage { margin: 1 0 0 0; color: $text; text-style: bold; }
    """

    def __init__(self, prompt: str) -> None:
        text = literal("prompt -> ", "dim")
        text.append_text(literal(prompt))
        super().__init__(text)
        self.prompt = prompt


class Notice(Static):
    DEFAULT_CSS = """
    Notice { color: $warning; margin: 1 0 0 0; }
    Notice.-error { color: $error; text-style: bold; }
    """

    def __init__(self, text: str, *, error: bool = False) -> None:
        super().__init__(literal(text), classes="-error" if error else "")


class ToolCallCard(Static):
    """A one-line card in the flow of the chat: tool, state, duration."""

    DEFAULT_CSS = """
    ToolCallCard { background: $panel; padding: 0 1; margin: 1 0 0 0; width: auto; max-width: 100%; }
    ToolCallCard.-done { border-left: wide $success; }
    ToolCallCard.-failed { border-left: wide $error; }
    ToolCallCard.-waiting { border-left: wide $warning; }
    """

    def __init__(self, record: CallRecord, clock: DisplayClock) -> None:
        # The first text goes to the constructor, not through update(): an update before the card
        # is mounted leaves a layout request pending, and Textual then keeps the width measured at
        # mount for the next state too (the card would show "awaiting" cut from "awaiting approval").
        super().__init__(self._card_text(record, clock))
        self.record = record
        self.clock = clock
        self._set_state_classes()

    @staticmethod
    def _card_text(record: CallRecord, clock: DisplayClock) -> Text:
        text = literal(f"{STATE_GLYPH[record.state]} ", "bold")
        text.append_text(literal(record.tool, "bold"))
        text.append_text(literal(f"  {record.server}", "dim"))
        text.append_text(literal(f"  {record.state.value}"))
        if record.state.finished and record.duration is not None:
            text.append_text(literal(f"  {clock.duration(record.duration)}", "dim"))
        if record.state is CallState.MALFORMED:
            text.append_text(literal(f"\n{record.reason}\n", "italic"))
            text.append_text(literal(one_line(record.raw, 400), "dim"))
        return text

    def refresh_card(self) -> None:
        self.update(self._card_text(self.record, self.clock))
        self._set_state_classes()

    def _set_state_classes(self) -> None:
        state = self.record.state
        self.set_class(state is CallState.DONE, "-done")
        failed = state in (CallState.ERROR, CallState.TIMEOUT, CallState.MALFORMED, CallState.DENIED)
        self.set_class(failed, "-failed")
        self.set_class(state in (CallState.AWAITING, CallState.RUNNING, CallState.PROPOSED), "-waiting")


class AssistantReply(Vertical):
    """One assistant turn: text segments streamed as Markdown, with tool-call cards between them.

    Streaming is kept cheap, because every change of a widget's height makes Textual lay out the
    whole screen again: text reaches the Markdown widget at most every ``STREAM_REFRESH`` seconds
    (not once per token), and a segment past ``MAX_SEGMENT_BLOCKS`` blocks is closed at the next
    paragraph break, so the widget being streamed into stays small however long the reply. A
    closed segment never changes again and becomes one static rendering.
    """

    DEFAULT_CSS = """
    AssistantReply { height: auto; margin: 1 0 0 0; }
    AssistantReply > .reply-header { color: $primary; text-style: bold; }
    AssistantReply Markdown { margin: 0; padding: 0; }
    AssistantReply Collapsible { margin: 0; padding: 0; border: none; background: transparent; }
    AssistantReply .thinking { color: $text-muted; text-style: italic; }
    AssistantReply .reply-end { color: $warning; }
    """

    def __init__(self, model_label: str) -> None:
        super().__init__()
        self.model_label = model_label
        self._segment: Markdown | None = None
        self._segment_text = ""
        self._closed_text = ""
        self._stream = None
        self._unwritten: list[str] = []
        self._flush_timer = None
        self._last_flush = 0.0
        self._thinking: Static | None = None
        self._thinking_text = ""
        self._lock = asyncio.Lock()  # the flush timer runs in its own task
        self.finished = False

    def compose(self):
        yield Static(literal(f"◆ {self.model_label}"), classes="reply-header")

    @property
    def text(self) -> str:
        """Every text segment so far, joined."""
        return self._closed_text + self._segment_text

    async def append_text(self, fragment: str) -> None:
        async with self._lock:
            await self._append(visible_controls(fragment))

    async def append_thinking(self, fragment: str) -> None:
        async with self._lock:
            if self._thinking is None:
                await self._close_segment()
                self._thinking = Static(classes="thinking")
                await self.mount(Collapsible(self._thinking, title="thinking", collapsed=True))
            self._thinking_text += fragment
            self._thinking.update(literal(self._thinking_text))

    async def add_widget(self, widget: Widget) -> None:
        """A card or notice between text segments: the next text starts a new segment."""
        async with self._lock:
            await self._close_segment()
            self._thinking = None
            self._thinking_text = ""
            await self.mount(widget)

    async def finish(self, note: str = "") -> None:
        """Close the reply: its last segment becomes static too (a finished reply never changes)."""
        async with self._lock:
            await self._close_segment()
            if note:
                await self.mount(Static(literal(note), classes="reply-end"))
            self.finished = True

    async def _append(self, fragment: str) -> None:
        if self._segment is None:
            if not fragment.strip():
                return
            self._segment = Markdown()
            self._segment_text = ""
            await self.mount(self._segment)
            self._stream = Markdown.get_stream(self._segment)
        self._segment_text += fragment
        self._unwritten.append(fragment)
        if self._flush_timer is None:
            wait = self._last_flush + STREAM_REFRESH - time.monotonic()
            if wait <= 0:
                await self._flush()
            else:
                self._flush_timer = self.set_timer(wait, self._flush_later)

    async def _flush_later(self) -> None:
        async with self._lock:
            self._flush_timer = None
            await self._flush()

    async def _flush(self) -> None:
        """Hand the text that arrived since the last flush to the Markdown stream."""
        if self._stream is None or not self._unwritten:
            return
        pending = "".join(self._unwritten)
        self._unwritten = []
        self._last_flush = time.monotonic()
        await self._stream.write(pending)
        cut = self._split_point()
        if cut is not None:
            tail = self._segment_text[cut:]
            self._segment_text = self._segment_text[:cut]
            await self._close_segment()
            await self._append(tail)

    def _split_point(self) -> int | None:
        """Where a long streaming segment may end: after its last paragraph break outside a code fence."""
        if self._segment is None or len(self._segment.children) < MAX_SEGMENT_BLOCKS:
            return None
        cut = self._segment_text.rfind("\n\n")
        if cut < 0 or self._segment_text.count("```", 0, cut) % 2:
            return None
        return cut + 2

    async def _close_segment(self) -> None:
        """End the streaming segment. It never changes again, so it becomes one static rendering:
        fewer widgets keep the layout of a long chat cheap while more text streams."""
        if self._flush_timer is not None:
            self._flush_timer.stop()
            self._flush_timer = None
        self._unwritten = []  # the static rendering below shows the whole segment text
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        if self._segment is not None:
            segment, text = self._segment, self._segment_text
            self._closed_text += text
            self._segment_text = ""
            self._segment = None
            await self.mount(Static(RichMarkdown(text), classes="reply-text"), after=segment)
            await segment.remove()
