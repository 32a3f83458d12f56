"""The full-screen app: chat, tool-call sidebar, server panel, approvals.

The app owns the agent, the engine and the hub, lays out the panes, and composes the helpers that
do the work (docs/architecture.md, ``ui/``): each Textual hook here (an ``@on`` handler, an action,
an override) hands its work to one of them in a line or two. Agent events arrive as Textual messages
and are shown from handlers on the screen's thread, the only code that changes widgets (text that
only extends the open part of a reply goes straight into its stream, which the reply's own task
takes in); long work (starting up, a turn, an approval) runs in workers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from textual import events, on
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.theme import Theme
from textual.widget import MountError, Widget
from textual.widgets import DataTable, Input, Static

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.config import Settings
from mcp_chat_tui.config.folder_trust import FolderFile
from mcp_chat_tui.conversation import Conversation, chat_agent
from mcp_chat_tui.engine import Engine
from mcp_chat_tui.servers import ServerHub, ServerStatus, begin_sdk_import
from mcp_chat_tui.transcript import Transcript, TranscriptRecorder
from mcp_chat_tui.ui import agent_messages as am
from mcp_chat_tui.ui import heap
from mcp_chat_tui.ui.agent_events import AgentEventView, model_cost
from mcp_chat_tui.ui.app_messages import EngineProgress, PolicyChanged, SaveChanged, ServerChanged
from mcp_chat_tui.ui.call_store import CallStore
from mcp_chat_tui.ui.catalog_controls import CatalogControls
from mcp_chat_tui.ui.conversation_actions import ConversationActions
from mcp_chat_tui.ui.dialog_keys import KeyGuard
from mcp_chat_tui.ui.format import DisplayClock
from mcp_chat_tui.ui.help import help_table, help_text
from mcp_chat_tui.ui.keys import APP_BINDINGS, binding_keys
from mcp_chat_tui.ui.model_controls import ModelControls
from mcp_chat_tui.ui.palette import PaletteCommands
from mcp_chat_tui.ui.reply_stream import ReplyController
from mcp_chat_tui.ui.request_dialogs import dialog_requests
from mcp_chat_tui.ui.saved_settings import SavedSettings
from mcp_chat_tui.ui.screens import STYLES_FOLDER
from mcp_chat_tui.ui.screens.detail import CallDetailScreen, TextScreen
from mcp_chat_tui.ui.server_controls import ServerControls
from mcp_chat_tui.ui.startup import StartUp
from mcp_chat_tui.ui.styles import preload_screen_css, preload_styles
from mcp_chat_tui.ui.themes import ThemesInUse
from mcp_chat_tui.ui.turns import TurnQueue
from mcp_chat_tui.ui.widgets.chat import ChatLog, chat_widget_classes
from mcp_chat_tui.ui.widgets.completion import CompletionMenu
from mcp_chat_tui.ui.widgets.footer import KeyFooter
from mcp_chat_tui.ui.widgets.prompt import PromptInput
from mcp_chat_tui.ui.widgets.sidebar import ServerTable, ToolCallTable
from mcp_chat_tui.ui.widgets.sidebar_pane import SidebarPane
from mcp_chat_tui.ui.widgets.status import StatusBar
from mcp_chat_tui.ui.workspace import Workspace


class ChatApp(App[int]):
    """``mcp-chat-tui MODEL``: the chat on the left, tool calls and servers on the right."""

    TITLE = "mcp-chat-tui"
    BINDINGS = [*APP_BINDINGS]  # a list of its own: Textual types it as a list of any binding form
    # Notifications at the chat's top-left, under the status bar: never over the sidebar rows they are about.
    CSS = "ToastRack { dock: top; align: left top; margin-top: 1; margin-bottom: 0; }"

    def __init__(
        self,
        *,
        engine: Engine,
        hub: ServerHub,
        policy: ApprovalPolicy,
        settings: Settings,
        settings_file: Path | None = None,
        model_label: str | None = None,
        clock: DisplayClock | None = None,
        theme_dirs: list[Path] | None = None,
        transcript_file: Path | None = None,
        transcript: Transcript | None = None,
        autosave: bool = True,
        open_resume: bool = False,
        folder_to_trust: FolderFile | None = None,
    ) -> None:
        self.saved_settings = SavedSettings(settings, settings_file, self)
        # Before Textual's __init__, which registers and looks up themes through it.
        self.themes_in_use = ThemesInUse(self, self.saved_settings, theme_dirs, super().get_theme, super().refresh_css)
        super().__init__()
        self.hub = hub
        self.policy = policy
        self.clock = clock or DisplayClock()
        self.agent = chat_agent(engine, hub, policy, settings)
        self.server_controls = ServerControls(self, hub, policy, self.clock, lambda: self.servers_table)
        policy.add_listener(self._post_policy_changed)
        self.ready = asyncio.Event()
        self.start_up = StartUp(self, self, folder_to_trust)
        self.unsaved: str | None = None  # why events of the conversation could not be saved (the exit code is then 1)
        self.turns = TurnQueue(self, self)
        self.conversation_view = ConversationActions(self, self, self.turns)
        self.catalog_controls = CatalogControls(self, hub, self.turns.queue_turn, self.show_engine_state)
        self.model_controls = ModelControls(self, lambda: self.model_label, self._turn_busy, self.show_engine_state)
        self.reply = ReplyController(lambda: self.chat, lambda: self.model_label, lambda: model_cost(self.engine))
        self.agent_view, self.key_guard = AgentEventView(self, self), KeyGuard(self)  # the agent's events; the keys
        self.call_store = CallStore(self.clock, lambda: self.calls_table)
        self.leaving = False  # shut down, or shutting down: nothing more is drawn
        self.open_resume = open_resume
        label = model_label or engine.model_name
        self.conversation = Conversation(self.agent, label, transcript=transcript, path=transcript_file)
        self.conversation.save, self.conversation.on_save_change = autosave, self._post_save_change
        self.built = False
        self.palette = PaletteCommands(self, self)
        self.themes_in_use.register()
        hub.step_up_prompt = self.server_controls.show_sign_in  # a call's sign-in for more access
        hub.client_requests = dialog_requests(self, self.conversation, self.agent_view.sink, yes=policy.yes)

    def _turn_busy(self) -> bool:
        """A turn runs or waits for its start (``/model`` switches only between turns)."""
        return self.turns.running or self.agent.busy

    def _post_policy_changed(self) -> None:
        """The approval policy changed (a toggle, a saved "always"): the marks it draws follow (``PolicyChanged``)."""
        self.post_message(PolicyChanged())

    def _post_save_change(self, path: Path, problem: str | None) -> None:
        """On the saver's thread: saving ``path`` failed (``problem``) or works again (None)."""
        self.post_message(SaveChanged(path, problem))

    # ----- what the helpers and the command line read of the app ------------------------------

    @property
    def settings(self) -> Settings:
        """The settings in effect (a choice made on screen changes them: ``SavedSettings``)."""
        return self.saved_settings.settings

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

    # ----- layout ----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        # The first frame is the status bar alone (model, "starting"), so the screen appears at
        # once; the panes follow on the next frame (``_build``): each new widget class costs its
        # CSS being parsed, which would otherwise hold the first frame back.
        yield StatusBar(self.model_label, id="status")

    def _layout(self) -> list[Widget]:
        prompt = PromptInput(placeholder="ask something (bye or quit leaves)", id="prompt")
        return [
            Workspace(
                Vertical(
                    ChatLog(id="chat"),
                    Horizontal(Static("prompt ->", id="prompt-label"), prompt, id="input-row"),
                    id="chat-column",
                ),
                SidebarPane(
                    Static("Tool calls", classes="pane-title"),
                    ToolCallTable(self.clock, self.server_controls.record_auto_run, self.agent.cancel_call, id="calls"),
                    Static("Servers", classes="pane-title"),
                    ServerTable(self.clock, self.server_controls.server_auto_run, id="servers"),
                    Static(id="server-reason"),
                    percent=self.settings.ui.sidebar_width,
                    focus_instead=prompt,
                    keep_width=lambda percent: self.saved_settings.keep(
                        ("ui", "sidebar_width"), percent, "sidebar width"
                    ),
                    id="sidebar",
                ),
                id="main",
            ),
            KeyFooter(),
        ]

    async def on_mount(self) -> None:
        self.themes_in_use.mounted()
        if short_secrets := self.agent.redactor.short_warning():
            self.notify(short_secrets, title="secret not hidden", severity="warning", timeout=10)
        self.call_after_refresh(self._build)

    async def _build(self) -> None:
        """The panes, after the first frame; then the model and the servers start."""
        if self.hub.statuses:  # the SDK imports while the panes are built, so the servers start sooner
            begin_sdk_import()
        preload_styles(self, chat_widget_classes())  # parsed with the panes' styles, not mid-reply
        preload_screen_css(self, STYLES_FOLDER)  # nor as a dialog opens
        # Into the app's own screen, whatever is on top of it by now (F1, the palette).
        await self.screen_stack[0].mount_all(self._layout())
        self.built = True
        if self.leaving or not self.is_running:  # left while the panes were mounted (SIGTERM at the first frame)
            return
        self.hub.add_observer(self._on_server_change)
        for status in self.hub.statuses:
            self.server_controls.show(status)
        prompt = self.query_one(PromptInput)
        prompt.focus()
        self.set_interval(0.5, self.calls_table.tick_running)
        if self.conversation.transcript.exchanges:
            try:
                await self.conversation_view.show_transcript(self.conversation.transcript)
            except (MountError, NoMatches):
                if not self.leaving:
                    raise
            if self.leaving:  # left while the conversation was being shown (SIGTERM)
                return
            self.conversation_view.attach_saver()
        await self.start_up.take_early_typing(prompt)  # after the conversation it continues
        self.start_up.start_services()
        if self.open_resume:
            self.action_resume()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Until the panes are built (one frame), only leaving, F1 and the palette work (``?`` is
        then typed, as the prompt will take it). The keys of the panes (F2-F5) are offered, in the
        footer too, for the panes the focus is not in."""
        if action == "focus_pane" and self.built:
            return self.focused is None or self.focused.id != parameters[0]  # a pane's id is its name
        return self.built or action in ("quit", "command_palette") or (action == "help" and not parameters)

    def on_key(self, event: events.Key) -> None:
        self.start_up.keep_early_typing(event)

    def get_key_display(self, binding: Binding) -> str:
        """The footer writes keys as the F1 screen and the README do: ``Ctrl+B``, ``Esc``, ``F1``."""
        return binding_keys(binding)

    async def on_event(self, event: events.Event) -> None:
        """Every event, before any binding: the keys are sorted for the screen meant (``KeyGuard``)."""
        if not self.key_guard.holds(event):
            await super().on_event(event)

    # ----- Textual's hooks the helpers answer ------------------------------------------------

    def get_theme(self, theme_name: str) -> Theme | None:
        return self.themes_in_use.get_theme(theme_name)

    def register_theme(self, theme: Theme) -> None:
        self.themes_in_use.changed(super().register_theme, theme)

    def unregister_theme(self, theme_name: str) -> None:
        self.themes_in_use.changed(super().unregister_theme, theme_name)

    def refresh_css(self, animate: bool = True) -> None:
        self.themes_in_use.refresh_css(animate)

    def delay_update(self, delay: float = 0.05) -> None:
        self.palette.hold_frames(delay)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        return [*super().get_system_commands(screen), *self.palette.commands()]

    def action_model_detail(self) -> None:
        self.palette.model_detail()

    def action_search(self) -> None:
        self.palette.search()

    def action_toggle_thinking(self) -> None:
        self.palette.toggle_thinking()

    # ----- start-up --------------------------------------------------------------------------

    @property
    def fatal_error(self) -> str | None:
        """Why the app cannot go on (the fatal screen's message; None: it can)."""
        return self.start_up.fatal_error

    @on(EngineProgress)
    def _engine_progress(self, message: EngineProgress) -> None:
        self.start_up.show_engine_progress(message.progress)

    @on(SaveChanged)
    def _save_changed(self, message: SaveChanged) -> None:
        self.conversation_view.save_changed(message.path, message.problem)

    def _on_server_change(self, status: ServerStatus) -> None:
        self.post_message(ServerChanged(status))

    @on(ServerChanged)
    def _server_changed(self, message: ServerChanged) -> None:
        self.server_controls.show(message.status)
        self.start_up.show_start_up()

    @on(PolicyChanged)
    def _policy_changed(self) -> None:
        if self.built and not self.leaving:
            self.server_controls.show_policy_marks()

    @on(DataTable.RowHighlighted, "#servers")
    def _server_highlighted(self, message: DataTable.RowHighlighted) -> None:
        self.server_controls.show_reason(message.row_key.value)

    @on(ServerTable.ServerAction)
    def _server_action(self, message: ServerTable.ServerAction) -> None:
        """The servers pane's keys (r, l, a, s, o) on the highlighted server."""
        controls = self.server_controls
        acts: dict[str, Callable[[str], object]] = {
            "restart": controls.restart,
            "log": controls.show_log,
            "toggle_auto_run": controls.toggle_server_auto_run,
            "sign_in": controls.sign_in,
            "resources": self.catalog_controls.open_resources,
        }
        acts[message.action](message.server)

    @on(ToolCallTable.ToggleAutoRun)
    def _toggle_from_calls(self, message: ToolCallTable.ToggleAutoRun) -> None:
        self.server_controls.toggle_tool_auto_run(message.server, message.tool)

    @on(DataTable.RowSelected, "#calls")
    def _open_call(self, message: DataTable.RowSelected) -> None:
        record = self.calls_table.records.get(message.row_key.value or "")  # (every row has its record's key)
        if record is not None:
            self.push_screen(CallDetailScreen(record, self.clock))

    @on(DataTable.RowSelected, "#servers")
    def _open_server(self, message: DataTable.RowSelected) -> None:
        name = message.row_key.value  # (every row has its server's name)
        if name is not None:
            self.server_controls.open_detail(name)

    # ----- prompts and turns -----------------------------------------------------------------

    @on(Input.Changed, "#prompt")
    def _prompt_changed(self, message: Input.Changed) -> None:
        prompt = message.input
        if isinstance(prompt, PromptInput) and prompt.is_attached:  # a change handled as the app closes: none
            self.catalog_controls.offer_completions(prompt)

    @on(PromptInput.Chosen)
    def _completion_chosen(self, message: PromptInput.Chosen) -> None:
        self.catalog_controls.take_completion(message.candidate)

    @on(CompletionMenu.Clicked)
    def _completion_clicked(self) -> None:
        self.query_one(PromptInput).action_choose()

    @on(Input.Submitted, "#prompt")
    async def _submitted(self, message: Input.Submitted) -> None:
        await self.turns.submitted(message.value)

    @on(am.AgentMessage)
    async def _agent_message(self, message: am.AgentMessage[object]) -> None:
        await self.agent_view.show(message)

    def show_engine_state(self, state: str, detail: str = "") -> None:
        """What the status bar says the engine or the turn is doing, with the detail that goes with it."""
        for bar in self.query(StatusBar):  # none once the screen is taken down
            bar.engine_state = state
            bar.detail = detail

    # ----- actions ---------------------------------------------------------------------------

    def action_retry(self) -> None:
        self.turns.retry()

    def action_stop(self) -> None:
        if self.catalog_controls.stop_waiting_for_reads() or self.model_controls.cancel_load():
            return
        if self.agent.stop():
            self.notify("stopped")

    def action_focus_pane(self, pane: str) -> None:
        """F2-F5. The focus moves now, not after the keys already waiting (``focus()`` defers it):
        a Ctrl+B right behind F3 must find the focus in the sidebar to take it out."""
        if pane in ("calls", "servers") and not self.sidebar.display:
            self.sidebar.toggle()
        widget = self.query_one(f"#{pane}")
        widget.screen.set_focus(widget)

    def action_toggle_sidebar(self) -> None:
        """Ctrl+B, the palette: the sidebar hidden or shown (``SidebarPane.toggle``)."""
        self.sidebar.toggle()

    def action_sidebar_width(self, steps: int) -> None:
        """F7 and F8, whatever has the focus: the sidebar narrower or wider (``SidebarPane.step_width``)."""
        self.sidebar.step_width(steps)

    @on(ChatLog.Typed)
    def _typed_in_chat(self, message: ChatLog.Typed) -> None:
        prompt = self.query_one(PromptInput)
        prompt.focus()
        if message.pasted:
            prompt.post_message(events.Paste(message.text))  # taken as the prompt takes a paste
        else:
            prompt.insert_text_at_cursor(message.text)

    def action_help(self, key: str = "") -> None:
        """The F1 screen (``key`` is ``?`` when that key asked for it)."""
        self.push_screen(TextScreen("Keys", help_text(), help_table()))

    def action_export(self) -> None:
        self.conversation_view.export()

    def action_resume(self) -> None:
        self.conversation_view.resume()

    async def open_conversation(self, path: Path) -> bool:
        """Replace the current conversation with a saved one (``ConversationActions.open_conversation``)."""
        return await self.conversation_view.open_conversation(path)

    async def action_clear_chat(self) -> None:
        dropped = self.turns.drop_waiting()
        left_unsaved = await self.conversation.clear()  # a stopped call is recorded before the file is let go
        self.reply.drop()  # first: the stopped turn's last text must not go to a reply being removed
        await self.chat.clear()
        self.conversation_view.forget_shown_conversation()
        self.conversation_view.left_conversation(left_unsaved)
        self.notify(f"chat cleared{dropped}: the next prompt starts a new conversation")

    async def action_quit(self, return_code: int = 0) -> None:
        """Leave: stop the reply, shut every server down, release the model."""
        self.agent.stop()
        await self.shutdown()
        self.exit(result=return_code, return_code=return_code)

    async def shutdown(self) -> None:
        if self.leaving:
            return
        self.leaving = True
        try:
            self.show_engine_state("shutting down", "the servers…")
        except Exception:  # noqa: BLE001 - the screen is already gone when the app unmounts
            pass
        problem = self.conversation.close()
        if problem is not None:
            self.unsaved = problem
        await self.hub.shutdown()
        await self.engine.close()
        heap.release()  # set aside when it was ready (ui/heap.py)

    async def on_unmount(self) -> None:
        await self.shutdown()
