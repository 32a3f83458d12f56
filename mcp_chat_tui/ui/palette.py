"""The command palette's entries of the app: clearing, exporting, resuming, the sidebar, resources,
then one entry per server (restart, sign in), per tool (auto-run) and per theme; and what the entries
and keys of its own do (the model's detail, search, the thinking shown), and how the palette's
closing holds the frames.

A helper ``ChatApp`` composes: its ``get_system_commands`` gives Textual's entries, then these.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Protocol

from textual.app import App, SystemCommand

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.core.tools import ToolSpec
from mcp_chat_tui.engine import Engine
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.transcript import TranscriptRecorder
from mcp_chat_tui.transcript.search import Match
from mcp_chat_tui.ui.catalog_controls import CatalogControls
from mcp_chat_tui.ui.format import palette_text
from mcp_chat_tui.ui.model_controls import ModelControls
from mcp_chat_tui.ui.screens.model import ModelDetailScreen
from mcp_chat_tui.ui.screens.search import SearchScreen
from mcp_chat_tui.ui.server_controls import ServerControls
from mcp_chat_tui.ui.widgets.chat import ChatLog, UserMessage
from mcp_chat_tui.ui.widgets.scrolling import scroll_to_now


class PaletteHost(Protocol):
    """What the palette uses of the app besides Textual's own (``ChatApp`` is one)."""

    @property
    def hub(self) -> ServerHub: ...

    @property
    def policy(self) -> ApprovalPolicy: ...

    @property
    def engine(self) -> Engine: ...

    @property
    def model_label(self) -> str: ...

    @property
    def chat(self) -> ChatLog: ...

    @property
    def recorder(self) -> TranscriptRecorder: ...

    @property
    def transcript_file(self) -> Path | None: ...

    @property
    def server_controls(self) -> ServerControls: ...

    @property
    def catalog_controls(self) -> CatalogControls: ...

    @property
    def model_controls(self) -> ModelControls: ...

    async def open_conversation(self, path: Path) -> bool: ...

    async def action_clear_chat(self) -> None: ...

    def action_export(self) -> None: ...

    def action_resume(self) -> None: ...

    def action_toggle_sidebar(self) -> None: ...


class PaletteCommands:
    """The app's entries in the command palette, and the actions of its own they and the keys call.

    Args:
        app: Where its screens open, its search's choice opens in a worker, what it found is said,
            and the theme is set; also whose frames the palette's closing holds.
        host: The app's servers, policy, model, chat, conversation, helpers and actions (``PaletteHost``).
    """

    def __init__(self, app: App[Any], host: PaletteHost) -> None:
        self.app = app
        self.host = host

    def model_detail(self) -> None:
        """The model detail: its generation settings in effect and where each came from (also: a click on the status bar)."""
        self.app.push_screen(ModelDetailScreen(self.host.model_label, self.host.engine))

    def search(self) -> None:
        """Search the saved conversations; the one chosen opens at its match."""

        def chosen(match: Match | None) -> None:
            if match is not None:
                self.app.run_worker(self._open_at(match), group="open")

        self.app.push_screen(SearchScreen(), callback=chosen)

    async def _open_at(self, match: Match) -> None:
        host = self.host
        if match.path != host.transcript_file and not await host.open_conversation(match.path):
            return
        shown = list(host.chat.query(UserMessage))
        index = match.exchange - (len(host.recorder.transcript.exchanges) - len(shown))
        if not 0 <= index < len(shown):
            self.app.notify(f"the match is in exchange #{match.exchange + 1}, older than the chat shows", markup=False)
            return
        self.app.call_after_refresh(scroll_to_now, host.chat, shown[index], top=True)

    def toggle_thinking(self) -> None:
        """Ctrl+T: the latest reply's thinking opened, or closed again."""
        if not self.host.chat.toggle_last_thinking():
            self.app.notify("no reply in the chat has any thinking", timeout=3)

    def hold_frames(self, delay: float) -> None:
        """For ``ChatApp.delay_update``: Textual's holds the frames for ``delay`` (the command
        palette's closing: the screen under it is not drawn before the command chosen has acted);
        here until that command has acted (the messages queued by now are handled), ``delay`` at
        most. A theme chosen is drawn once it is applied, not 50 ms after the palette closed at the
        soonest; a screen a command opens comes in the same frame as before."""
        app = self.app
        held = ExitStack()
        held.enter_context(app.batch_update())
        released = False

        def release() -> None:  # by the first of the two that comes
            nonlocal released
            if not released:
                released = True
                limit.stop()
                held.close()
                app.screen.refresh()  # a frame drawn meanwhile never reached the terminal

        limit = app.set_timer(delay, release, name="delay_update")
        app.call_later(app.call_later, release)  # behind what is queued now: the command chosen

    def commands(self) -> Iterator[SystemCommand]:
        """The app's own entries, after Textual's."""
        host, app = self.host, self.app
        yield SystemCommand("Clear the chat", "Start a new conversation", host.action_clear_chat)
        yield SystemCommand("Export the transcript", "Write this conversation to a file you choose", host.action_export)
        yield SystemCommand("Resume a conversation", "Open a saved conversation", host.action_resume)
        yield SystemCommand(
            "Search conversations", "Find a word in every saved conversation, open it there", self.search
        )
        yield SystemCommand("Hide or show the sidebar", "Tool calls and servers", host.action_toggle_sidebar)
        yield SystemCommand(
            "Browse resources", "Every server's resources and templates", host.catalog_controls.open_resources
        )
        yield SystemCommand(
            "Switch model",
            "The models this machine has; the conversation goes on with the one chosen",
            host.model_controls.pick,
        )
        yield SystemCommand(
            "Model and generation settings",
            "Temperature, top-p, max tokens, seed… and where each came from",
            self.model_detail,
        )
        # The palette reads titles and help as markup: names and reasons from servers are escaped.
        for status in host.hub.statuses:
            yield SystemCommand(
                palette_text(f"Restart server {status.name}"),
                palette_text(status.summary()),
                lambda name=status.name: host.server_controls.restart(name),
            )
        yield from host.server_controls.sign_in_commands()
        for spec in host.hub.tools():
            state = "runs without asking" if host.policy.runs_without_asking(spec) else "asks first"
            yield SystemCommand(
                palette_text(f"Toggle auto-run: {spec.server} › {tool_in_palette(spec)}"),
                f"now {state}",
                lambda s=spec: host.server_controls.toggle_tool_auto_run(s.server, s.name),
                discover=False,
            )
        for name in sorted(app.available_themes):
            yield SystemCommand(
                f"Change theme: {name}",
                "saved in config.toml",
                lambda n=name: setattr(app, "theme", n),
                discover=False,
            )


def tool_in_palette(spec: ToolSpec) -> str:
    """A tool as the palette names it: its title and name, or its name."""
    return f"{spec.shown_title} ({spec.name})" if spec.shown_title else spec.name
