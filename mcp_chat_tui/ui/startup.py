"""Start-up, a helper ``ChatApp`` composes: the model and the servers start together; a model that
cannot load shows the fatal screen, a server that cannot start is shown failed and the app goes on
without it. Keys typed before the prompt exists are kept for it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

from textual import events
from textual.app import App

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.config.folder_trust import FolderFile
from mcp_chat_tui.core.collector import START_UP_LIMIT_SECONDS, resume_collector
from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.core.paths import demo_model_path
from mcp_chat_tui.core.text import counted, one_line
from mcp_chat_tui.core.tools import BUILTIN_SERVER
from mcp_chat_tui.demo import try_asking_line
from mcp_chat_tui.engine import Engine, LoadProgress
from mcp_chat_tui.servers import ServerHub, ServerState, ServerStatus, import_sdk
from mcp_chat_tui.ui import heap
from mcp_chat_tui.ui.app_messages import EngineProgress
from mcp_chat_tui.ui.folder_trust import settle_folder_trust
from mcp_chat_tui.ui.format import DisplayClock
from mcp_chat_tui.ui.screens.fatal import FatalScreen
from mcp_chat_tui.ui.widgets.chat import ChatLog, Notice, UserMessage
from mcp_chat_tui.ui.widgets.prompt import PromptInput
from mcp_chat_tui.ui.widgets.status import StatusBar

if TYPE_CHECKING:
    from mcp_chat_tui.ui.agent_events import AgentEventView
    from mcp_chat_tui.ui.server_controls import ServerControls
    from mcp_chat_tui.ui.turns import TurnQueue

SETTLED_POLL_SECONDS = 0.25  # how often start-up looks whether only slow servers are left starting


class StartUpHost(Protocol):
    """What start-up uses of the app besides Textual's own (``ChatApp`` is one)."""

    @property
    def hub(self) -> ServerHub: ...

    @property
    def engine(self) -> Engine: ...

    @property
    def agent(self) -> Agent: ...

    @property
    def policy(self) -> ApprovalPolicy: ...

    @property
    def clock(self) -> DisplayClock: ...

    @property
    def model_label(self) -> str: ...

    @property
    def chat(self) -> ChatLog: ...

    @property
    def status_bar(self) -> StatusBar: ...

    @property
    def ready(self) -> asyncio.Event: ...  # set here once the model is loaded and the servers have settled

    @property
    def built(self) -> bool: ...  # the panes are mounted

    @property
    def leaving(self) -> bool: ...

    @property
    def turns(self) -> TurnQueue: ...  # lines typed early sent; a resumed reply or summaries due started

    @property
    def agent_view(self) -> AgentEventView: ...  # the agent's events (a resumed conversation's results fitted)

    @property
    def server_controls(self) -> ServerControls: ...  # a starting server's row

    def show_engine_state(self, state: str, detail: str = "") -> None: ...

    async def action_quit(self, return_code: int = 0) -> None: ...


class StartUp:
    """Loads the model and starts the servers, showing what it waits for; ``fatal_error`` says why
    the app cannot go on (None: it can). Keys typed before the prompt exists are kept for it.

    Args:
        app: Where it posts the model's progress, sets its timers, opens the folder's dialogs and
            the fatal screen, says what happened, and runs the start.
        host: The app's model, servers, chat, status bar, turns and prompt (``StartUpHost``).
        folder_to_trust: A folder's ``mcp.json`` to ask about before any server starts (None: none).
    """

    def __init__(self, app: App[Any], host: StartUpHost, folder_to_trust: FolderFile | None = None) -> None:
        self.app = app
        self.host = host
        self.folder_to_trust = folder_to_trust
        self.fatal_error: str | None = None
        self._model_loading = False  # between the start and the model being loaded
        self._typed_early = ""  # printable keys that came before the prompt

    def keep_early_typing(self, event: events.Key) -> None:
        """Text typed before the prompt exists (keys sent as the app starts) is kept for it, Enter too."""
        if self.host.built:
            return
        if event.key in ("enter", "ctrl+j"):  # Enter pressed before the terminal was set up comes as Ctrl+J
            self._typed_early += "\n"
        elif event.is_printable and event.character:
            self._typed_early += event.character
        else:
            return
        event.stop()

    async def take_early_typing(self, prompt: PromptInput) -> None:
        """Give the prompt what was typed before it existed: each line ended with Enter is sent."""
        *sent, draft = self._typed_early.split("\n")
        self._typed_early = ""
        for line in sent:
            await self.host.turns.send(line)
        prompt.put_back(draft)

    def start_services(self) -> None:
        """Load the model and start the servers together, in a worker (one at a time)."""
        self.app.run_worker(self._start_services(), name="start_services", group="startup", exclusive=True)

    async def _start_services(self) -> None:
        """Load the model and start the servers together, showing progress; a failure is fatal."""
        app, host = self.app, self.host
        self._model_loading = True
        self.show_start_up()
        app.set_interval(1.0, self._tick_starting)
        app.set_timer(START_UP_LIMIT_SECONDS, resume_collector)  # a start this long waits on a download or a server
        servers = asyncio.ensure_future(self._start_servers())
        if host.hub.statuses:  # the SDK before the model's libraries: the servers' processes start meanwhile
            await import_sdk()
        load = asyncio.ensure_future(host.engine.load(self._post_engine_progress))
        try:
            await load
        except UserFacingError as exc:
            servers.cancel()
            self._fatal(str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - any load failure is fatal and shown, not raised
            servers.cancel()
            self._fatal(f"cannot load model {host.model_label!r}: {exc}")
            return
        self._model_loading = False
        host.status_bar.compute = host.engine.compute_label
        if host.engine.speed_hint:  # a real model on a CPU without a fast BLAS: how to get one, once
            app.notify(host.engine.speed_hint, title="the model could run faster", severity="warning", timeout=30)
        self.show_start_up()
        await self._servers_settled(servers)
        if host.leaving or self.fatal_error is not None:  # leaving: the servers were stopped, not started
            return
        await self._say_settled(servers)
        host.show_engine_state("ready")
        host.status_bar.hide_download()
        host.ready.set()
        heap.settle()  # what start-up built (a loaded conversation too) is not walked again
        # A resumed conversation's results, now the context is known.
        host.agent.fit_loaded_results(host.agent_view.sink)
        host.turns.start_if_owed()

    async def _say_settled(self, servers: asyncio.Future[None]) -> None:
        """In the chat: the servers that failed, those still starting (and, once they settle, how),
        those that need a sign-in, and the welcome of an empty chat."""
        hub, chat = self.host.hub, self.host.chat
        await self._say_failed([s for s in hub.statuses if s.state in (ServerState.FAILED, ServerState.CRASHED)])
        starting = [s for s in hub.statuses if s.state is ServerState.STARTING]
        if starting:
            names = ", ".join(s.name for s in starting)
            await chat.mount(Notice(f"still starting: {names}; its tools are offered once it is ready (F4)"))
            servers.add_done_callback(lambda _: self.app.call_later(self._late_servers, [s.name for s in starting]))
        signing = [s.name for s in hub.statuses if s.state is ServerState.NEEDS_SIGN_IN]
        if signing:
            how = "press s on it in the server panel (F4), or use the palette (Ctrl+P)"
            await chat.mount(Notice(f"needs sign-in: {', '.join(signing)}: {how}"))
        if not chat.query(UserMessage):
            await chat.mount(Notice(self._welcome_text(), muted=True), before=0)

    def show_engine_progress(self, progress: LoadProgress) -> None:
        """The model's download or conversion in the status bar's bar; once it loads, what start-up waits for."""
        if progress.stage in ("download", "convert"):  # a model fetched, or a GGUF file made an MLX folder
            self.host.status_bar.show_download(progress.bytes_done, progress.bytes_total)
            total = f" of {progress.bytes_total / 1e6:.1f} MB" if progress.bytes_total else ""
            self.host.show_engine_state(progress.doing, f"{progress.bytes_done / 1e6:.1f}{total}")
        elif progress.stage == "load":
            self.host.status_bar.hide_download()
            self.show_start_up()

    def _post_engine_progress(self, progress: LoadProgress) -> None:
        """The model's load progress, to the app's queue (from whichever thread the engine reports it on)."""
        self.app.post_message(EngineProgress(progress))

    async def _servers_settled(self, servers: asyncio.Future[None]) -> None:
        """Wait for the servers' start; a resumed conversation waits for all of them (its calls need
        them), else those still starting past the longest init timeout go on behind a working chat."""
        if self.host.turns.resume_pending:
            await servers
            return
        while not servers.done():  # (a folder's mcp.json being asked about starts nothing yet)
            starting = [s for s in self.host.hub.statuses if s.state is ServerState.STARTING]
            if starting and all(s.starting_for() >= self._init_timeout(s.name) for s in starting):
                return
            await asyncio.wait({servers}, timeout=SETTLED_POLL_SECONDS)

    def _init_timeout(self, name: str) -> float:
        own: float | None = getattr(self.host.hub.config(name), "init_timeout", None)  # mcp.json's, for this server
        return own or self.host.hub.init_timeout

    async def _say_failed(self, failed: list[ServerStatus]) -> None:
        """Servers that failed: named in the chat with why and how to retry; the app goes on without
        them (a server is never worth the whole app; ``on_server_failure`` is for ``-p`` and ``--plain``)."""
        if failed:
            why = "; ".join(f"{s.name}: {s.reason}" for s in failed)
            retry = "r on it in the server panel (F4) starts it again"
            await self.host.chat.mount(Notice(f"continuing without {why} ({retry})", error=True))

    async def _late_servers(self, names: list[str]) -> None:
        """Servers that were still starting when the chat opened have settled: those that failed are said."""
        if self.host.leaving:
            return
        statuses = [self.host.hub.status(name) for name in names]
        await self._say_failed([s for s in statuses if s.state in (ServerState.FAILED, ServerState.CRASHED)])
        ready = [s.name for s in statuses if s.state.usable]
        if ready:
            await self.host.chat.mount(Notice(f"ready now: {', '.join(ready)}", muted=True))

    async def _start_servers(self) -> None:
        """Start every server; a folder's mcp.json not trusted yet is asked about first, its servers
        joining the hub on a yes (ui/folder_trust.py)."""
        if self.folder_to_trust is not None:
            try:
                await settle_folder_trust(self.app, self.host.hub, self.host.chat, self.folder_to_trust)
            except UserFacingError as exc:
                self._fatal(str(exc), state=("failed", f"to load {self.folder_to_trust.source}"))
                return
        await self.host.hub.start_all()

    def show_start_up(self) -> None:
        """What start-up still waits for, from the model's and the servers' state now:
        "loading the model; starting 2 servers…", then "starting 1 server…"."""
        if self.host.ready.is_set() or self.fatal_error is not None or self.host.status_bar.download is not None:
            return
        starting = [s for s in self.host.hub.statuses if s.state is ServerState.STARTING]
        servers = f"{counted(len(starting), 'server')}…"
        if len(starting) == 1:  # which, for how long, and what it said last (npx's download)
            said = one_line(starting[0].last_stderr_line(), 50)
            servers = f"{starting[0].name}, {self.host.clock.duration(starting[0].starting_for())}" + (
                f": {said}" if said else "…"
            )
        if self._model_loading:
            self.host.show_engine_state("loading", f"the model; starting {servers}" if starting else "the model…")
        elif starting:
            self.host.show_engine_state("starting", servers)

    def _tick_starting(self) -> None:
        """Once a second while a server starts: its time and last stderr line, in its row and the status bar."""
        for status in self.host.hub.statuses:
            if status.state is ServerState.STARTING:
                self.host.server_controls.show(status)
        self.show_start_up()

    def _welcome_text(self) -> str:
        """The first line of an empty chat: what is ready, and how tool calls will be handled."""
        offered = self.host.hub.tools()  # what the model is given, as the status bar counts them
        tools = [spec for spec in offered if spec.server != BUILTIN_SERVER]  # the servers' own
        servers = counted(len({spec.server for spec in tools}), "server")
        ready = f"{self.host.model_label} is ready with {counted(len(offered), 'tool')} from {servers}."
        if len(offered) > len(tools):
            own = ", ".join(spec.name for spec in offered if spec.server == BUILTIN_SERVER)
            ready = (
                f"{self.host.model_label} is ready with {counted(len(offered), 'tool')}: {len(tools)} from {servers} "
                f"and the app's own {own}."
            )
        how = {
            "ask": "You approve each tool call before it runs.",
            "auto": "Tool calls run without asking.",
            "auto-readonly": "Read-only tools of trusted servers run without asking; the others ask first.",
        }.get(self.host.policy.mode, "")
        if self.host.policy.yes:
            how = "Tool calls run without asking (--yes)."
        demo = f" {try_asking_line()}" if self.host.engine.model_name == demo_model_path() else ""
        return f"{ready} {how}{demo} Type below and press Enter; F1 lists every key."

    def _fatal(self, message: str, state: tuple[str, str] = ("failed", "to load the model")) -> None:
        """End the app with ``message`` on the fatal screen; ``state`` is what the status bar says
        failed (the model, unless a server is named)."""
        resume_collector()  # the start is over (core/collector.py)
        self.fatal_error = message
        self.host.show_engine_state(*state)
        self.app.push_screen(FatalScreen(message), callback=lambda _: self.host.action_quit(return_code=1))
