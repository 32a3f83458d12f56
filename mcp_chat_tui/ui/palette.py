"""The command palette's entries of the app: clearing, exporting, resuming, the sidebar, resources,
then one entry per server (restart, sign in), per tool (auto-run) and per theme.

A part of ``ChatApp`` (mixed into it, before ``App``, whose own entries come first).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.app import SystemCommand
from textual.screen import Screen

from mcp_chat_tui.core.tools import ToolSpec
from mcp_chat_tui.transcript.search import Match
from mcp_chat_tui.ui.app_base import ChatAppBase
from mcp_chat_tui.ui.format import palette_text
from mcp_chat_tui.ui.screens.model import ModelDetailScreen
from mcp_chat_tui.ui.screens.search import SearchScreen
from mcp_chat_tui.ui.widgets.chat import UserMessage
from mcp_chat_tui.ui.widgets.scrolling import scroll_to_now


class PaletteCommands(ChatAppBase):
    """``ChatApp``'s palette: uses its ``hub``, ``policy`` and actions."""

    def action_model_detail(self) -> None:
        """The model detail: its generation settings in effect and where each came from (also: a click on the status bar)."""
        self.push_screen(ModelDetailScreen(self.model_label, self.engine))

    def action_search(self) -> None:
        """Search the saved conversations; the one chosen opens at its match."""

        def chosen(match: Match | None) -> None:
            if match is not None:
                self.run_worker(self._open_at(match), group="open")

        self.push_screen(SearchScreen(), callback=chosen)

    async def _open_at(self, match: Match) -> None:
        if match.path != self.transcript_file and not await self.open_conversation(match.path):
            return
        shown = list(self.chat.query(UserMessage))
        index = match.exchange - (len(self.recorder.transcript.exchanges) - len(shown))
        if not 0 <= index < len(shown):
            self.notify(f"the match is in exchange #{match.exchange + 1}, older than the chat shows", markup=False)
            return
        self.call_after_refresh(scroll_to_now, self.chat, shown[index], top=True)

    def action_toggle_thinking(self) -> None:
        """Ctrl+T: the latest reply's thinking opened, or closed again."""
        if not self.chat.toggle_last_thinking():
            self.notify("no reply in the chat has any thinking", timeout=3)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Clear the chat", "Start a new conversation", self.action_clear_chat)
        yield SystemCommand("Export the transcript", "Write this conversation to a file you choose", self.action_export)
        yield SystemCommand("Resume a conversation", "Open a saved conversation", self.action_resume)
        yield SystemCommand(
            "Search conversations", "Find a word in every saved conversation, open it there", self.action_search
        )
        yield SystemCommand("Hide or show the sidebar", "Tool calls and servers", self.action_toggle_sidebar)
        yield SystemCommand(
            "Browse resources", "Every server's resources and templates", self.catalog_controls.open_resources
        )
        yield SystemCommand(
            "Switch model",
            "The models this machine has; the conversation goes on with the one chosen",
            self.model_controls.pick,
        )
        yield SystemCommand(
            "Model and generation settings",
            "Temperature, top-p, max tokens, seed… and where each came from",
            self.action_model_detail,
        )
        # The palette reads titles and help as markup: names and reasons from servers are escaped.
        for status in self.hub.statuses:
            yield SystemCommand(
                palette_text(f"Restart server {status.name}"),
                palette_text(status.summary()),
                lambda name=status.name: self.server_controls.restart(name),
            )
        yield from self.server_controls.sign_in_commands()
        for spec in self.hub.tools():
            state = "runs without asking" if self.policy.runs_without_asking(spec) else "asks first"
            yield SystemCommand(
                palette_text(f"Toggle auto-run: {spec.server} › {tool_in_palette(spec)}"),
                f"now {state}",
                lambda s=spec: self.server_controls.toggle_tool_auto_run(s.server, s.name),
                discover=False,
            )
        for name in sorted(self.available_themes):
            yield SystemCommand(
                f"Change theme: {name}",
                "saved in config.toml",
                lambda n=name: setattr(self, "theme", n),
                discover=False,
            )


def tool_in_palette(spec: ToolSpec) -> str:
    """A tool as the palette names it: its title and name, or its name."""
    return f"{spec.shown_title} ({spec.name})" if spec.shown_title else spec.name
