"""The reply being streamed into the chat, owned by the app and driven by the agent's events."""

from __future__ import annotations

from collections.abc import Callable

from textual.widget import Widget

from mcp_chat_tui.ui.widgets.chat import ChatLog
from mcp_chat_tui.ui.widgets.reply import AssistantReply


class ReplyController:
    """Opens the reply of a turn, streams its text into it, adds its cards and closes it.

    Args:
        chat: The chat log the replies go into.
        model_label: The name each reply starts with (the model answering now).
        model_cost: What a second of the app's CPU costs the model while it generates.
    """

    def __init__(
        self, chat: Callable[[], ChatLog], model_label: Callable[[], str], model_cost: Callable[[], float]
    ) -> None:
        self._chat = chat
        self._model_label = model_label
        self._model_cost = model_cost
        self.widget: AssistantReply | None = None

    @property
    def is_open(self) -> bool:
        """Whether a reply is streaming."""
        return self.widget is not None

    @property
    def text(self) -> str:
        """The open reply's text so far ("" when none is open)."""
        return self.widget.text if self.widget is not None else ""

    async def start(self) -> None:
        """Mount a new reply (its header and the widget its first text streams into)."""
        self.widget = AssistantReply(self._model_label(), self._model_cost)
        await self._chat().mount(self.widget)

    def continue_with(self, reply: AssistantReply | None) -> None:
        """Take ``reply`` (already in the chat) as the open one, or none."""
        self.widget = reply

    async def count_from_now(self) -> None:
        """The model starts generating: open a reply if none is, and start its drawing budget."""
        if self.widget is None:  # not opened before the turn (the chat was cleared meanwhile)
            await self.start()
        assert self.widget is not None
        self.widget.count_from_now()

    def append_now(self, text: str) -> bool:
        """Put ``text`` straight into the open part of the reply if it only extends it.

        Returns:
            Whether it was taken (else ``append`` must take it).
        """
        return self.widget is not None and self.widget.append_text_now(text)

    async def append(self, text: str) -> None:
        """Add text to the reply."""
        if self.widget is not None:
            await self.widget.append_text(text)

    async def append_thinking(self, text: str) -> None:
        """Add thinking to the reply."""
        if self.widget is not None:
            await self.widget.append_thinking(text)

    async def add_widget(self, item: Widget) -> None:
        """Show ``item`` (a card, a notice) in the reply, or in the chat when none is open."""
        if self.widget is not None:
            await self.widget.add_widget(item)
        else:
            await self._chat().mount(item)

    async def finish(self, note: str = "") -> None:
        """Close the reply, ending it with ``note`` (why it stopped) if given."""
        if self.widget is not None:
            await self.widget.finish(note)
        self.widget = None

    def drop(self) -> None:
        """Forget the reply without closing it (the chat is being cleared)."""
        self.widget = None
