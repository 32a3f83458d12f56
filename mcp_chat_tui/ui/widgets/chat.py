"""The chat pane: the log, user prompts, notices and the card where each call happened."""

from __future__ import annotations

import sys

from textual import events
from textual.message import Message
from textual.widget import Widget
from textual.widgets import MarkdownViewer, Static, Tree, _collapsible, _markdown
from textual.widgets.markdown import MarkdownTableOfContents

from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.core.progress import progress_bar
from mcp_chat_tui.core.text import counted, one_line
from mcp_chat_tui.ui.call_records import CallRecord
from mcp_chat_tui.ui.format import DisplayClock, literal
from mcp_chat_tui.ui.styles import widget_classes
from mcp_chat_tui.ui.widgets import reply
from mcp_chat_tui.ui.widgets.one_pass import OneLayoutPass
from mcp_chat_tui.ui.widgets.scrolling import Scroll, scroll_to_now

MAX_EXCHANGES_SHOWN = 15


class ChatLog(OneLayoutPass, Scroll):
    """The conversation, following new content at the end; the last ``MAX_EXCHANGES_SHOWN`` exchanges stay mounted."""

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

    def watch_has_focus(self, _has_focus: bool) -> None:
        # Only the chat's own style follows its focus (its tint): no rule styles what is inside it by
        # it (tests/test_focus_restyle.py checks the app's style sheets). Textual restyles every
        # widget inside, a hundred and more in a long chat, on each F2 and each key that leaves it.
        self.app.stylesheet.update_nodes([self], animate=True)

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
        """Show a prompt sent; the chat goes to its end and follows the reply again, wherever the
        user had scrolled (scrolling up releases the anchor until the end is reached again)."""
        await self.mount(message)
        await self.trim()
        self.anchor()

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
        note = literal(
            f"… {counted(self.hidden_exchanges, 'earlier exchange')} not shown here; the transcript keeps them all"
        )
        existing = self.query("#hidden-note")
        if existing:
            existing.first(Static).update(note)
        else:
            await self.mount(Static(note, id="hidden-note"), before=0)

    async def clear(self) -> None:
        self.hidden_exchanges = 0
        await self.remove_children()

    def toggle_last_thinking(self) -> bool:
        """Open the latest reply's thinking, or close it when open (False: no reply has any)."""
        from textual.widgets import Collapsible

        found = [widget for widget in self.query(Collapsible) if widget.title == reply.THINKING_TITLE]
        if not found:
            return False
        found[-1].collapsed = not found[-1].collapsed
        self.call_after_refresh(scroll_to_now, self, found[-1])
        return True


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
        text = literal(f"{record.state.glyph} ", "bold")
        text.append_text(literal(record.shown_tool, "bold"))
        text.append_text(literal(f"  {record.server}" + (f" › {record.tool}" if record.title else ""), "dim"))
        text.append_text(literal(f"  {record.state.label}"))
        if record.state.finished and record.duration is not None:
            text.append_text(literal(f"  {self.clock.duration(record.duration)}", "dim"))
        if record.state is CallState.INTERRUPTED and record.task is None:
            text.append_text(literal("  (it may or may not have run)", "italic"))
        if record.state is CallState.REPEATED:
            text.append_text(literal(f"  (not run: the model already had the result of {record.repeat_of})", "italic"))
        if record.cut_for_model:
            text.append_text(literal("  ✂ cut for the model", "italic"))
        if record.task is not None and (not record.state.finished or record.task.finished_while_closed):
            text.append_text(literal(f"\n⧗ {record.task.describe()}", "dim"))
        if record.progress is not None and not record.state.finished:  # once over, the outcome says it
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


def chat_widget_classes() -> list[type[Widget]]:
    """Every widget class the chat may show: this module's, a reply's, Markdown's blocks, the collapsible."""
    unused = (MarkdownViewer, MarkdownTableOfContents, Tree)  # Markdown's, never shown in the chat
    modules = (sys.modules[__name__], reply, _markdown, _collapsible)
    return [cls for cls in widget_classes(*modules) if cls not in unused]
