"""Start-up, a part of ``ChatApp``: the model and the servers start together; a model that cannot load
shows the fatal screen, a server that cannot start is shown failed and the app goes on without it."""

from __future__ import annotations

import asyncio

from textual import work

from mcp_chat_tui.config.folder_trust import FolderFile
from mcp_chat_tui.core.collector import START_UP_LIMIT_SECONDS, resume_collector
from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.core.paths import demo_model_path
from mcp_chat_tui.core.text import counted, one_line
from mcp_chat_tui.core.tools import BUILTIN_SERVER
from mcp_chat_tui.demo import try_asking_line
from mcp_chat_tui.engine import LoadProgress
from mcp_chat_tui.servers import ServerState, ServerStatus, import_sdk
from mcp_chat_tui.ui import heap
from mcp_chat_tui.ui.app_base import ChatAppBase
from mcp_chat_tui.ui.app_messages import EngineProgress
from mcp_chat_tui.ui.folder_trust import settle_folder_trust
from mcp_chat_tui.ui.screens.fatal import FatalScreen
from mcp_chat_tui.ui.widgets.chat import Notice, UserMessage

SETTLED_POLL_SECONDS = 0.25  # how often start-up looks whether only slow servers are left starting


class StartUp(ChatAppBase):
    """Start-up of ``ChatApp``: uses its ``engine``, ``hub``, ``chat``, ``status_bar`` and ``ready``."""

    folder_to_trust: FolderFile | None = None  # a folder's mcp.json to ask about before any server starts

    @work(exclusive=True, group="startup")
    async def start_services(self) -> None:
        """Load the model and start the servers together, showing progress; a failure is fatal."""
        self._model_loading = True
        self._show_start_up()
        self.set_interval(1.0, self._tick_starting)
        self.set_timer(START_UP_LIMIT_SECONDS, resume_collector)  # a start this long waits on a download or a server
        servers = asyncio.ensure_future(self._start_servers())
        if self.hub.statuses:  # the SDK before the model's libraries: the servers' processes start meanwhile
            await import_sdk()
        load = asyncio.ensure_future(self.engine.load(self._post_engine_progress))
        try:
            await load
        except UserFacingError as exc:
            servers.cancel()
            self._fatal(str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - any load failure is fatal and shown, not raised
            servers.cancel()
            self._fatal(f"cannot load model {self.model_label!r}: {exc}")
            return
        self._model_loading = False
        self.status_bar.compute = self.engine.compute_label
        if self.engine.speed_hint:  # a real model on a CPU without a fast BLAS: how to get one, once
            self.notify(self.engine.speed_hint, title="the model could run faster", severity="warning", timeout=30)
        self._show_start_up()
        await self._servers_settled(servers)
        if self._shut_down or self.fatal_error is not None:  # leaving: the servers were stopped, not started
            return
        await self._say_failed([s for s in self.hub.statuses if s.state in (ServerState.FAILED, ServerState.CRASHED)])
        starting = [s for s in self.hub.statuses if s.state is ServerState.STARTING]
        if starting:
            names = ", ".join(s.name for s in starting)
            await self.chat.mount(Notice(f"still starting: {names}; its tools are offered once it is ready (F4)"))
            servers.add_done_callback(lambda _: self.call_later(self._late_servers, [s.name for s in starting]))
        signing = [s.name for s in self.hub.statuses if s.state is ServerState.NEEDS_SIGN_IN]
        if signing:
            how = "press s on it in the server panel (F4), or use the palette (Ctrl+P)"
            await self.chat.mount(Notice(f"needs sign-in: {', '.join(signing)}: {how}"))
        if not self.chat.query(UserMessage):
            await self.chat.mount(Notice(self._welcome_text(), muted=True), before=0)
        self._engine_state("ready")
        self.status_bar.hide_download()
        self.ready.set()
        heap.settle()  # what start-up built (a loaded conversation too) is not walked again
        self.agent.fit_loaded_results(self._sink)  # a resumed conversation's results, now the context is known
        if (self._resume_pending or self.agent.summaries_due) and not self._turn_running:
            self._turn_running = True
            self.run_turns()

    def _post_engine_progress(self, progress: LoadProgress) -> None:
        """The model's load progress, to the app's queue (from whichever thread the engine reports it on)."""
        self.post_message(EngineProgress(progress))

    async def _servers_settled(self, servers: asyncio.Future[None]) -> None:
        """Wait for the servers' start; a resumed conversation waits for all of them (its calls need
        them), else those still starting past the longest init timeout go on behind a working chat."""
        if self._resume_pending:
            await servers
            return
        while not servers.done():  # (a folder's mcp.json being asked about starts nothing yet)
            starting = [s for s in self.hub.statuses if s.state is ServerState.STARTING]
            if starting and all(s.starting_for() >= self._init_timeout(s.name) for s in starting):
                return
            await asyncio.wait({servers}, timeout=SETTLED_POLL_SECONDS)

    def _init_timeout(self, name: str) -> float:
        own: float | None = getattr(self.hub.config(name), "init_timeout", None)  # mcp.json's, for this server
        return own or self.hub.init_timeout

    async def _say_failed(self, failed: list[ServerStatus]) -> None:
        """Servers that failed: named in the chat with why and how to retry; the app goes on without
        them (a server is never worth the whole app; ``on_server_failure`` is for ``-p`` and ``--plain``)."""
        if failed:
            why = "; ".join(f"{s.name}: {s.reason}" for s in failed)
            retry = "r on it in the server panel (F4) starts it again"
            await self.chat.mount(Notice(f"continuing without {why} ({retry})", error=True))

    async def _late_servers(self, names: list[str]) -> None:
        """Servers that were still starting when the chat opened have settled: those that failed are said."""
        if self._shut_down:
            return
        statuses = [self.hub.status(name) for name in names]
        await self._say_failed([s for s in statuses if s.state in (ServerState.FAILED, ServerState.CRASHED)])
        ready = [s.name for s in statuses if s.state.usable]
        if ready:
            await self.chat.mount(Notice(f"ready now: {', '.join(ready)}", muted=True))

    async def _start_servers(self) -> None:
        """Start every server; a folder's mcp.json not trusted yet is asked about first, its servers
        joining the hub on a yes (ui/folder_trust.py)."""
        if self.folder_to_trust is not None:
            try:
                await settle_folder_trust(self, self.folder_to_trust)
            except UserFacingError as exc:
                self._fatal(str(exc), state=("failed", f"to load {self.folder_to_trust.source}"))
                return
        await self.hub.start_all()

    def _show_start_up(self) -> None:
        """What start-up still waits for, from the model's and the servers' state now:
        "loading the model; starting 2 servers…", then "starting 1 server…"."""
        if self.ready.is_set() or self.fatal_error is not None or self.status_bar.download is not None:
            return
        starting = [s for s in self.hub.statuses if s.state is ServerState.STARTING]
        servers = f"{counted(len(starting), 'server')}…"
        if len(starting) == 1:  # which, for how long, and what it said last (npx's download)
            said = one_line(starting[0].last_stderr_line(), 50)
            servers = f"{starting[0].name}, {self.clock.duration(starting[0].starting_for())}" + (
                f": {said}" if said else "…"
            )
        if self._model_loading:
            self._engine_state("loading", f"the model; starting {servers}" if starting else "the model…")
        elif starting:
            self._engine_state("starting", servers)

    def _tick_starting(self) -> None:
        """Once a second while a server starts: its time and last stderr line, in its row and the status bar."""
        for status in self.hub.statuses:
            if status.state is ServerState.STARTING:
                self._show_server(status)
        self._show_start_up()

    def _welcome_text(self) -> str:
        """The first line of an empty chat: what is ready, and how tool calls will be handled."""
        offered = self.hub.tools()  # what the model is given, as the status bar counts them
        tools = [spec for spec in offered if spec.server != BUILTIN_SERVER]  # the servers' own
        servers = counted(len({spec.server for spec in tools}), "server")
        ready = f"{self.model_label} is ready with {counted(len(offered), 'tool')} from {servers}."
        if len(offered) > len(tools):
            own = ", ".join(spec.name for spec in offered if spec.server == BUILTIN_SERVER)
            ready = (
                f"{self.model_label} is ready with {counted(len(offered), 'tool')}: {len(tools)} from {servers} "
                f"and the app's own {own}."
            )
        how = {
            "ask": "You approve each tool call before it runs.",
            "auto": "Tool calls run without asking.",
            "auto-readonly": "Read-only tools of trusted servers run without asking; the others ask first.",
        }.get(self.policy.mode, "")
        if self.policy.yes:
            how = "Tool calls run without asking (--yes)."
        demo = f" {try_asking_line()}" if self.engine.model_name == demo_model_path() else ""
        return f"{ready} {how}{demo} Type below and press Enter; F1 lists every key."

    def _fatal(self, message: str, state: tuple[str, str] = ("failed", "to load the model")) -> None:
        """End the app with ``message`` on the fatal screen; ``state`` is what the status bar says
        failed (the model, unless a server is named)."""
        resume_collector()  # the start is over (core/collector.py)
        self.fatal_error = message
        self._engine_state(*state)
        self.push_screen(FatalScreen(message), callback=lambda _: self.action_quit(return_code=1))
