"""The server hub: starts every configured MCP server through the official SDK, tracks it, calls its tools.

One asyncio task per server holds its SDK ``Client`` from start to stop; observers hear every state
change through a plain callback; everything a server says passes through the hub's ``Redactor`` first.
Its parts are mixed in: tool calls (``calls.py``), sign-in (``oauth_sign_in.py``), prompts and resources
(``catalog.py``), logging and roots (``client_context.py``). The SDK is imported where it is used."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_chat_tui.core.memory import keep_freed_memory
from mcp_chat_tui.core.paths import user_data_dir
from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.core.server_identity import ServerIdentity
from mcp_chat_tui.core.tool_filter import ToolFilter, split_offered
from mcp_chat_tui.core.tools import ToolSpec, unique_model_names
from mcp_chat_tui.servers.builtin import builtin_specs
from mcp_chat_tui.servers.call_clock import ServerLife
from mcp_chat_tui.servers.callbacks import ClientCallbacks
from mcp_chat_tui.servers.calls import ToolCalls
from mcp_chat_tui.servers.catalog import CatalogAccess
from mcp_chat_tui.servers.client_context import LogListener, ServerContext, is_modern
from mcp_chat_tui.servers.incoming_requests import DEFAULT_SAMPLING_PER_MINUTE, ClientRequests, RequestDesk
from mcp_chat_tui.servers.listing import list_all_tools, tool_spec
from mcp_chat_tui.servers.noise import STDOUT_RULE, noise_excerpt, noise_line, unreadable_message
from mcp_chat_tui.servers.oauth import OAuthSession, PersonClock, SignInPrompt
from mcp_chat_tui.servers.oauth_sign_in import SignIn
from mcp_chat_tui.servers.output import ServerOutput
from mcp_chat_tui.servers.request_ties import CallsInFlight, gone_reason
from mcp_chat_tui.servers.roots import Roots
from mcp_chat_tui.servers.starting import StartLife, silent_reason
from mcp_chat_tui.servers.state import ServerState, ServerStatus
from mcp_chat_tui.servers.stderr import StderrCapture, log_file_name
from mcp_chat_tui.servers.tasks import server_runs_tasks, set_apart_task_tools, task_support
from mcp_chat_tui.servers.token_vault import TOKEN_FILE_NAME, TokenVault
from mcp_chat_tui.servers.transports import (
    describe_start_failure,
    http_transport,
    import_sdk,
    memory_transport,
    root_cause,
    sse_transport,
    stdio_transport,
)

if TYPE_CHECKING:
    from mcp import Client

log = logging.getLogger(__name__)

DEFAULT_INIT_TIMEOUT = 10.0
DEFAULT_TOOL_TIMEOUT = 90.0
MAX_RESULT_CHARS = 100_000
MAX_TOOL_PAGES = 100
REFRESH_SETTLE_SECONDS = 0.1  # tool-list changes this close together cause one reading
STOP_WAIT_SECONDS = 10.0

Observer = Callable[[ServerStatus], None]


@dataclass(eq=False)
class _Runtime:
    """Live handles for one server; ``status`` is what observers see."""

    config: Any
    status: ServerStatus
    task: asyncio.Task[None] | None = None
    client: Client | None = None
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    stderr_closed: asyncio.Event = field(default_factory=asyncio.Event)
    capture: StderrCapture | None = None
    generation: int = 0
    stopping: bool = False
    init_timed_out: bool = False
    http_error: tuple[int, str] | None = None
    refresh_task: asyncio.Task[None] | None = None
    refresh_wanted: bool = False
    stdout_noise: str = ""  # the first line on stdout that was not JSON-RPC, while starting
    start_refused: str = ""  # why the start was given up before the init timeout
    refused_state: ServerState = ServerState.FAILED  # the state a start given up leaves
    oauth: OAuthSession | None = None
    sign_in_prompt: SignInPrompt | None = None  # a person to ask, while signing in
    person: PersonClock = field(default_factory=PersonClock)  # their time is not the init timeout's
    start_life: StartLife = field(default_factory=StartLife)  # signs of life while starting (starting.py)
    catalog_task: asyncio.Task[None] | None = None  # the prompt and resource change stream (2026-07-28)
    catalog_refresh: asyncio.Task[None] | None = None  # reading prompts and resources again
    catalog_wanted: bool = False
    answers_awaited: set[asyncio.Future[str]] = field(default_factory=set)  # calls in flight, told a lost answer
    task_calls: dict[str, Any] = field(default_factory=dict)  # calls run as tasks, by task id (task_calls.py)
    task_progress: dict[Any, Any] = field(default_factory=dict)  # their progress relays, by progress token

    log_shown_soon: asyncio.TimerHandle | None = None
    # A person's time on the server's requests (a form, a sampled reply), which no call's clock counts.
    life: ServerLife = field(default_factory=ServerLife)
    calls: CallsInFlight = field(default_factory=CallsInFlight)  # what its requests are for (request_ties.py)


class ServerHub(CatalogAccess, ServerContext, ToolCalls, ClientCallbacks, ServerOutput, SignIn):
    """Runs the configured servers; ``async with ServerHub(...)`` starts nothing, ``start_all()`` does."""

    def __init__(
        self,
        servers: Iterable[Any],
        *,
        init_timeout: float = DEFAULT_INIT_TIMEOUT,
        tool_timeout: float = DEFAULT_TOOL_TIMEOUT,
        log_dir: Path | None = None,
        max_result_chars: int = MAX_RESULT_CHARS,
        redactor: Redactor | None = None,
        token_vault: TokenVault | None = None,
        sampling_per_minute: int = DEFAULT_SAMPLING_PER_MINUTE,
        roots: Roots | None = None,
        tool_filters: dict[str, ToolFilter] | None = None,
    ) -> None:
        keep_freed_memory()  # large results reuse the heap (core/memory.py)
        self.init_timeout = init_timeout
        self.tool_filters = tool_filters or {}  # config.toml's [server_tools.NAME], besides mcp.json's own
        self.token_vault = token_vault or TokenVault(user_data_dir() / TOKEN_FILE_NAME)
        self.roots = roots if roots is not None else Roots()
        self._log_listeners: list[LogListener] = []
        self.redactor = redactor if redactor is not None else Redactor()
        self.requests = RequestDesk(self.redactor, sampling_per_minute)  # sampling and elicitation
        self.tool_timeout = tool_timeout
        self.log_dir = log_dir
        self.max_result_chars = max_result_chars
        self._runtimes: dict[str, _Runtime] = {}
        self._observers: list[Observer] = []
        self._tools: list[ToolSpec] = []
        self._by_model_name: dict[str, ToolSpec] = {}
        self._sampling_per_minute = sampling_per_minute
        for config in servers:
            self._add_runtime(config)

    def _add_runtime(self, config: Any) -> _Runtime:
        transport = config.type
        status = ServerStatus(name=config.name, transport=transport, sampling_per_minute=self._sampling_per_minute)
        status.log_level = getattr(config, "log_level", None) or status.log_level
        if getattr(config, "disabled", False):
            status.state = ServerState.DISABLED
        if self.log_dir is not None and transport == "stdio":
            status.log_path = self.log_dir / f"{log_file_name(config.name)}.log"
        self._runtimes[config.name] = _Runtime(config=config, status=status)
        return self._runtimes[config.name]

    def add_servers(self, servers: Iterable[Any]) -> None:
        """Servers configured once the app is running (a folder's mcp.json the user just trusted);
        observers hear of each. None is started: ``start_all()`` does that. A name already here is
        an error, never a replacement."""
        configs = list(servers)
        taken = [config.name for config in configs if config.name in self._runtimes]
        if taken:
            raise ValueError(f"servers already configured: {', '.join(taken)}")
        for config in configs:
            self._changed(self._add_runtime(config))

    # ----- observing -------------------------------------------------------------------------

    def add_observer(self, observer: Observer) -> None:
        self._observers.append(observer)

    def remove_observer(self, observer: Observer) -> None:
        if observer in self._observers:
            self._observers.remove(observer)

    def _changed(self, rt: _Runtime, *, tools_changed: bool = False) -> None:
        if tools_changed:
            self._rebuild_tool_index()
        for observer in list(self._observers):
            try:
                observer(rt.status)
            except Exception:  # an observer's bug must not take the hub down
                log.exception("server observer failed")

    def _set_state(self, rt: _Runtime, state: ServerState, reason: str = "") -> None:
        offers_tools_changed = rt.status.state.usable != state.usable
        rt.status.state = state
        rt.status.reason = self.redactor.text(reason)
        self._changed(rt, tools_changed=offers_tools_changed)

    @property
    def statuses(self) -> list[ServerStatus]:
        return [rt.status for rt in self._runtimes.values()]

    def status(self, name: str) -> ServerStatus:
        return self._runtimes[name].status

    def config(self, name: str) -> Any:
        """The configuration ``name`` was started from."""
        return self._runtimes[name].config

    def identity(self, name: str) -> ServerIdentity | None:
        """Which server runs under ``name`` (its program or URL); None for a name no server has here."""
        runtime = self._runtimes.get(name)
        identity = getattr(runtime.config, "identity", None) if runtime is not None else None
        return identity() if identity is not None else None

    @property
    def client_requests(self) -> ClientRequests:
        """Who answers the servers' sampling and elicitation requests (declines until a front end sets it)."""
        return self.requests.handler

    @client_requests.setter
    def client_requests(self, handler: ClientRequests) -> None:
        self.requests.handler = handler

    # ----- tools -----------------------------------------------------------------------------

    def _rebuild_tool_index(self) -> None:
        specs = [spec for rt in self._runtimes.values() if rt.status.state.usable for spec in rt.status.tools]
        specs += builtin_specs() if self.has_resources() else []
        self._tools = unique_model_names(specs)
        self._by_model_name = {spec.model_name: spec for spec in self._tools}

    def tools(self) -> list[ToolSpec]:
        """Every tool of every usable server, each with a model-facing name no other tool has, and
        the built-in resource tools when a server has resources (``servers/builtin.py``)."""
        return list(self._tools)

    def find_tool(self, model_name: str) -> ToolSpec | None:
        """The (server, tool) behind a name the model used."""
        return self._by_model_name.get(model_name)

    # ----- starting --------------------------------------------------------------------------

    async def start_all(self) -> list[ServerStatus]:
        """Start every enabled server concurrently; returns when each is ready or has failed."""
        await import_sdk()
        runtimes = [rt for rt in self._runtimes.values() if rt.status.state != ServerState.DISABLED]
        await asyncio.gather(*(self._start(rt) for rt in runtimes))
        return self.statuses

    async def restart(self, name: str) -> ServerStatus:
        """Stop one server (if running) and start it again; other servers are untouched."""
        rt = self._runtimes[name]
        await self._stop(rt, final_state=ServerState.STOPPED)
        rt.status.restarts += 1
        await self._start(rt)
        return rt.status

    async def _start(self, rt: _Runtime) -> None:
        rt.generation += 1
        generation = rt.generation
        rt.stop = asyncio.Event()
        rt.settled = asyncio.Event()
        rt.stderr_closed = asyncio.Event()
        rt.stopping = False
        rt.init_timed_out = False
        rt.stdout_noise = ""
        rt.start_refused = ""
        rt.refused_state = ServerState.FAILED
        rt.person = PersonClock()
        rt.start_life = StartLife()
        rt.status.stderr_tail.clear()
        rt.status.started_at = datetime.now()
        rt.status.start_seconds = None
        rt.status.tools = []
        rt.status.refused_tools = []
        rt.status.unsupported_tools = []
        rt.status.tool_pages_unread = False
        rt.status.prompts, rt.status.resources, rt.status.resource_templates = [], [], []
        rt.status.catalog_problems, rt.status.subscribed = [], {}
        self._set_state(rt, ServerState.STARTING)
        timeout = rt.config.init_timeout or self.init_timeout
        started = time.perf_counter()
        rt.task = asyncio.create_task(self._own(rt, generation, started), name=f"mcp-server-{rt.config.name}")
        try:
            await self._wait_for_start(rt, timeout)
        except TimeoutError:
            rt.init_timed_out = True
            rt.task.cancel()
            await asyncio.wait({rt.task}, timeout=STOP_WAIT_SECONDS)
            if rt.stdout_noise:
                reason = (
                    f"no answer to initialize within {timeout:g} s; its stdout had "
                    f"{noise_excerpt(rt.stdout_noise)}, which is not JSON-RPC: {STDOUT_RULE}"
                )
            else:
                reason = silent_reason(timeout, rt.start_life, list(rt.status.stderr_tail))
            self._set_state(rt, ServerState.FAILED, reason)
        if rt.start_refused and rt.status.state == ServerState.STARTING:
            self._set_state(rt, rt.refused_state, rt.start_refused)

    async def _own(self, rt: _Runtime, generation: int, started: float) -> None:
        """The one task that holds this server's SDK client from start to stop."""
        import anyio

        try:
            client = self._new_client(rt, generation)
            async with client:
                if rt.capture is not None:
                    rt.capture.release_write_end()
                rt.client = client
                await self._list_tools(rt, client)
                await self._read_catalog(rt, client)
                await self._send_log_level(rt, client)
                self._record_server_info(rt, client)
                rt.status.start_seconds = time.perf_counter() - started
                self._set_state(rt, ServerState.READY)
                rt.settled.set()
                async with anyio.create_task_group() as group:
                    if self._wants_listen(client):
                        group.start_soon(self._listen_for_tool_changes, rt, client)
                    self._watch_catalog(rt, client)
                    await rt.stop.wait()
                    group.cancel_scope.cancel()
        except asyncio.CancelledError:
            if not (rt.init_timed_out or rt.stopping or rt.start_refused):
                raise
        except BaseException as exc:  # noqa: BLE001 - every failure becomes a state the user sees
            if isinstance(root_cause(exc), (KeyboardInterrupt, SystemExit)):
                raise
            await self._client_failed(rt, generation, exc)
        finally:
            rt.client = None
            rt.calls.server_gone(gone_reason(rt))
            await self._close_oauth(rt)
            for task in (rt.refresh_task, rt.catalog_task, rt.catalog_refresh):
                if task is not None and not task.done():
                    task.cancel()
            if rt.log_shown_soon is not None:  # observers hear of the last log messages with the state change
                rt.log_shown_soon.cancel()
                rt.log_shown_soon = None
            if rt.capture is not None:
                rt.capture.release_write_end()
            rt.settled.set()

    async def _client_failed(self, rt: _Runtime, generation: int, exc: BaseException) -> None:
        """The client's task failed: the server crashed if it was running, else its start failed."""
        config = rt.config
        if rt.capture is not None:
            rt.capture.release_write_end()
            try:
                await asyncio.wait_for(rt.stderr_closed.wait(), 1.0)
            except TimeoutError:
                pass
        # A running server whose sign-in ended (``_oauth_failed``) keeps saying so.
        signed_out = rt.status.state is ServerState.NEEDS_SIGN_IN
        if generation == rt.generation and not (rt.stopping or rt.start_refused or signed_out):
            if rt.status.state.usable:
                self._set_state(rt, ServerState.CRASHED, f"connection lost: {root_cause(exc)}")
            else:
                reason = self._oauth_refusal(rt) or describe_start_failure(
                    config, exc, list(rt.status.stderr_tail), rt.http_error, await rt.start_life.exited()
                )
                if rt.stdout_noise:
                    reason += (
                        f"; its stdout had {noise_excerpt(rt.stdout_noise)}, which is not JSON-RPC ({STDOUT_RULE})"
                    )
                self._set_state(rt, ServerState.FAILED, reason)

    def _transport(self, rt: _Runtime, generation: int) -> Any:
        config = rt.config
        if (memory := memory_transport(config)) is not None:  # a test's server object, connected in memory
            rt.capture = None
            return memory
        if config.type == "stdio":
            loop = asyncio.get_running_loop()
            rt.capture = StderrCapture(
                loop,
                rt.status.log_path,
                on_lines=partial(self._on_stderr, rt, generation),
                on_closed=partial(self._on_stderr_closed, rt, generation),
                redact=self.redactor.text,
            )
            return stdio_transport(config, rt.capture.errlog, rt.start_life.spawned)
        rt.capture = None
        rt.http_error = None
        auth = self._oauth(rt, generation)
        if config.type == "sse":
            return sse_transport(config.url, dict(config.headers), auth)

        def note(code: int, phrase: str) -> None:
            # 404 and 405 are normal while the SDK probes which protocol the server speaks.
            if code in (401, 403, 407) or code >= 500:
                rt.http_error = (code, phrase)

        return http_transport(config.url, dict(config.headers), note, auth)

    async def _list_tools(self, rt: _Runtime, client: Client, refresh: bool = False) -> None:
        """Read every page of the tool list into the status: valid tools, and those refused with why."""
        listing = await list_all_tools(client, refresh=refresh, max_pages=MAX_TOOL_PAGES)
        runs_tasks = server_runs_tasks(client)
        rt.status.unsupported_tools = listing.unsupported + set_apart_task_tools(listing, runs_tasks)
        specs = [
            tool_spec(rt.config.name, t, self.redactor, task_support(t) if runs_tasks else "") for t in listing.tools
        ]
        filters = [rt.config.tool_filter(), self.tool_filters.get(rt.config.name, ToolFilter())]
        rt.status.tools, rt.status.not_offered_tools = split_offered(specs, lambda spec: spec.name, filters)
        rt.status.refused_tools = listing.refused
        rt.status.tool_pages_read, rt.status.tool_pages_unread = listing.pages_read, listing.pages_unread

    def _record_server_info(self, rt: _Runtime, client: Client) -> None:
        info = client.server_info
        redact = self.redactor.text
        rt.status.server_name = redact(info.name) if info else ""
        rt.status.server_version = redact(info.version) if info and info.version else ""
        rt.status.protocol_version = client.protocol_version or ""
        capabilities = client.server_capabilities
        rt.status.capabilities = [
            name
            for name in ("tools", "prompts", "resources", "logging", "completions")
            if getattr(capabilities, name, None) is not None
        ]
        rt.status.instructions = redact(client.instructions or "")

    # ----- notifications and stderr ----------------------------------------------------------

    @staticmethod
    def _wants_listen(client: Client) -> bool:
        tools_capability = client.server_capabilities.tools
        return is_modern(client) and tools_capability is not None and bool(tools_capability.list_changed)

    async def _listen_for_tool_changes(self, rt: _Runtime, client: Client) -> None:
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    self._want_refresh(rt, client)
        except Exception as exc:  # noqa: BLE001 - losing the stream only loses live tool updates
            log.info("tool-change stream of %s ended: %s", rt.config.name, exc)

    def _want_refresh(self, rt: _Runtime, client: Client) -> None:
        """The tool list changed: read it again soon, one reading at a time however many changes
        arrive (a burst within REFRESH_SETTLE_SECONDS is one reading; changes during a reading
        cause one more after it, so the last change is never missed)."""
        rt.refresh_wanted = True
        if rt.refresh_task is None or rt.refresh_task.done():
            rt.refresh_task = asyncio.get_running_loop().create_task(self._refresh_while_wanted(rt, client))

    async def _refresh_while_wanted(self, rt: _Runtime, client: Client) -> None:
        while rt.refresh_wanted and rt.client is client:
            await asyncio.sleep(REFRESH_SETTLE_SECONDS)
            rt.refresh_wanted = False
            await self._refresh_tools(rt, client)

    async def _refresh_tools(self, rt: _Runtime, client: Client) -> None:
        try:
            await self._list_tools(rt, client, refresh=True)
        except Exception as exc:  # noqa: BLE001
            rt.status.stderr_tail.append(self.redactor.text(f"[mcp-chat-tui] refreshing the tool list failed: {exc}"))
        self._changed(rt, tools_changed=True)

    async def _on_message(self, rt: _Runtime, generation: int, message: Any) -> None:
        import mcp_types

        if generation != rt.generation:
            return
        # A message that could not be read is a protocol problem, while starting too (the stdio
        # transport fails the request it answered, so a start ends at once saying why); anything
        # else on stdout is noise.
        if isinstance(message, Exception) and (problem := unreadable_message(message)):
            self._on_unreadable_message(rt, problem)
        elif isinstance(message, Exception):
            self._on_stdout_noise(rt, noise_line(message))
        elif isinstance(message, mcp_types.ToolListChangedNotification) and rt.client is not None:
            self._want_refresh(rt, rt.client)
        elif isinstance(message, mcp_types.ElicitCompleteNotification):
            self.requests.completed(rt.config.name, message.params.elicitation_id)
        elif isinstance(message, mcp_types.ProgressNotification):  # a task's: the SDK matched it to no request
            await self._task_progress(rt, message.params)
        else:
            self._catalog_message(rt, message)

    # ----- stopping --------------------------------------------------------------------------

    async def _stop(self, rt: _Runtime, final_state: ServerState) -> None:
        task = rt.task
        if task is None or task.done():
            if rt.status.state.usable or rt.status.state == ServerState.STARTING:
                self._set_state(rt, final_state)
            return
        rt.stopping = True
        rt.stop.set()
        if not rt.settled.is_set():
            task.cancel()
        done, _ = await asyncio.wait({task}, timeout=STOP_WAIT_SECONDS)
        if not done:
            task.cancel()
            await asyncio.wait({task}, timeout=STOP_WAIT_SECONDS)
        if rt.status.state.usable or rt.status.state == ServerState.STARTING:
            self._set_state(rt, final_state)

    async def stop(self, name: str) -> None:
        await self._stop(self._runtimes[name], ServerState.STOPPED)

    async def shutdown(self) -> None:
        """Stop every server: close stdin, then terminate, then kill (the SDK's escalation), all at once.
        Calls running as tasks are left to their servers (``leaving``), not cancelled: set before the
        first wait, so a turn the app stopped just before (``action_quit``) sends no ``tasks/cancel``."""
        self.leaving = True
        await asyncio.gather(*(self._stop(rt, ServerState.STOPPED) for rt in self._runtimes.values()))

    async def __aenter__(self) -> ServerHub:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await asyncio.shield(self.shutdown())
