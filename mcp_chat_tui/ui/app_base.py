"""What the parts of ``ChatApp`` share, declared once with its types.

``ChatApp`` (ui/app.py) is built from parts, one file each (ui/agent_events.py, ui/conversation_actions.py, …),
and composes helpers that keep their own state (``ServerControls``, ``ModelControls``,
``SavedSettings``, …). Each part subclasses ``ChatAppBase``, so that what a part uses of the app
(its state, its widgets, a helper, a method of another part) has a declared type that mypy checks,
in the part and in the part that defines it. The state and the helpers are set in
``ChatApp.__init__``; the widgets are found on the app's screen. Being an ``App`` (a
``MessagePump``), each part also has its ``@on`` handlers found by Textual.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.config import Settings
from mcp_chat_tui.conversation import Conversation, ModelSwitcher
from mcp_chat_tui.engine import Engine
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.transcript import TranscriptRecorder
from mcp_chat_tui.ui.agent_messages import ReplyText
from mcp_chat_tui.ui.call_store import CallStore
from mcp_chat_tui.ui.catalog_controls import CatalogControls
from mcp_chat_tui.ui.format import DisplayClock
from mcp_chat_tui.ui.model_controls import ModelControls
from mcp_chat_tui.ui.queued_prompt import QueuedPrompt
from mcp_chat_tui.ui.reply_stream import ReplyController
from mcp_chat_tui.ui.saved_settings import SavedSettings
from mcp_chat_tui.ui.server_controls import ServerControls
from mcp_chat_tui.ui.widgets.chat import ChatLog
from mcp_chat_tui.ui.widgets.sidebar import ServerTable, ToolCallTable
from mcp_chat_tui.ui.widgets.sidebar_pane import SidebarPane
from mcp_chat_tui.ui.widgets.status import StatusBar

if TYPE_CHECKING:
    from textual.worker import Worker

    from mcp_chat_tui.agent.events import AgentEvent
    from mcp_chat_tui.core.attachments import Attachment
    from mcp_chat_tui.servers import ServerStatus


class ChatAppBase(App[int]):
    """The app's state and widgets, and the methods one part of the app calls in another."""

    hub: ServerHub
    policy: ApprovalPolicy
    saved_settings: SavedSettings  # the settings in effect, and where a choice made on screen is kept
    clock: DisplayClock
    agent: Agent
    conversation: Conversation
    ready: asyncio.Event  # set once the model is loaded and the servers have settled
    unsaved: str | None  # why events of the conversation could not be saved (the exit code is then 1)
    reply: ReplyController
    server_controls: ServerControls  # the servers' actions and rows
    model_controls: ModelControls  # /model: the picker and the switch
    catalog_controls: CatalogControls  # the servers' prompts and resources at the prompt box
    call_store: CallStore
    built: bool  # the panes are mounted
    open_resume: bool
    _queue: list[QueuedPrompt]
    _turn_running: bool
    _compact_asked: bool
    _retry_asked: bool
    _resume_pending: bool
    _queued_text: ReplyText | None
    _agent_messages: int
    _dialog_coming: bool
    _shut_down: bool

    @property
    def settings(self) -> Settings:
        return self.saved_settings.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        self.saved_settings.settings = settings

    @property
    def settings_file(self) -> Path | None:
        return self.saved_settings.path

    @property
    def model_switcher(self) -> ModelSwitcher | None:
        """What ``/model`` switches with (set by the command line; None: not available)."""
        return self.model_controls.switcher

    @model_switcher.setter
    def model_switcher(self, switcher: ModelSwitcher | None) -> None:
        self.model_controls.switcher = switcher

    def stop_waiting_for_reads(self) -> bool:
        """Esc or a cleared chat: a prompt waiting for its resources is not sent (``CatalogControls``)."""
        return self.catalog_controls.stop_waiting_for_reads()

    def _show_server(self, status: ServerStatus) -> None:
        """A server's row and count as ``status`` says (``ServerControls.show``; start-up calls it)."""
        self.server_controls.show(status)

    @property
    def engine(self) -> Engine:
        """The model answering now (``/model`` changes it)."""
        return self.agent.engine

    @property
    def model_label(self) -> str:
        """How the model answering now is named (status bar, replies, the transcript)."""
        return self.conversation.model_label

    @property
    def recorder(self) -> TranscriptRecorder:
        return self.conversation.recorder

    @property
    def transcript_file(self) -> Path | None:
        """The conversation's file (None until the first prompt names a new one)."""
        return self.conversation.path

    @property
    def status_bar(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def calls_table(self) -> ToolCallTable:
        return self.query_one(ToolCallTable)

    @property
    def servers_table(self) -> ServerTable:
        return self.query_one(ServerTable)

    @property
    def chat(self) -> ChatLog:
        return self.query_one(ChatLog)

    @property
    def sidebar(self) -> SidebarPane:
        return self.query_one(SidebarPane)

    if TYPE_CHECKING:
        # Defined by one part, called by others (the part is named); for the checker only, so that
        # the part's own definition is the one that runs.

        def _engine_state(self, state: str, detail: str = "") -> None: ...  # ChatApp

        async def _queue_turn(self, prompt: str, attachments: Sequence[Attachment] = ()) -> None: ...  # ChatApp

        def run_turns(self) -> Worker[None]: ...  # ChatApp (a worker)

        async def action_quit(self, return_code: int = 0) -> None: ...  # ChatApp

        async def action_clear_chat(self) -> None: ...  # ChatApp

        def _sink(self, event: AgentEvent) -> None: ...  # AgentEventView

        async def _open_reply(self) -> None: ...  # AgentEventView

        async def _wait_until_drawn(self) -> None: ...  # AgentEventView

        def _let_call_frames_go(self) -> None: ...  # AgentEventView

        async def open_conversation(self, path: Path) -> bool: ...  # ConversationActions

        def action_export(self) -> None: ...  # ConversationActions

        def action_resume(self) -> None: ...  # ConversationActions

        def action_toggle_sidebar(self) -> None: ...  # ChatApp
