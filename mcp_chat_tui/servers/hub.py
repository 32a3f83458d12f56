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
from mcp_chat_tui.servers.callbacks import ClientCallbacks
from mcp_chat_tui.servers.calls import ToolCalls
from mcp_chat_tui.servers.catalog import CatalogAccess
from mcp_chat_tui.servers.client_context import LogListener, ServerContext, is_modern
from mcp_chat_tui.servers.incoming_requests import DEFAULT_SAMPLING_PER_MINUTE, ClientRequests, RequestDesk
from mcp_chat_tui.servers.listing import list_all_tools, tool_spec
from mcp_chat_tui.servers.noise import STDOUT_RULE, noise_excerpt, noise_line, unreadable_message
from mcp_chat_tui.servers.oauth import PersonClock
from mcp_chat_tui.servers.oauth_sign_in import SignIn
from mcp_chat_tui.servers.output import ServerOutput
from mcp_chat_tui.servers.roots import Roots
from mcp_chat_tui.servers.runtime import ServerRuntime, gone_reason
from mcp_chat_tui.servers.sdk_import import import_sdk
from mcp_chat_tui.servers.starting import StartLife, silent_reason
from mcp_chat_tui.servers.state import ServerState, ServerStatus
from mcp_chat_tui.servers.stderr import StderrCapture, log_file_name
from mcp_chat_tui.servers.tasks import server_runs_tasks, set_apart_task_tools, task_support
from mcp_chat_tui.servers.token_vault import TOKEN_FILE_NAME, TokenVault
from mcp_chat_tui.servers.transports import (
    describe_start_failure,
    exit_reason,
    http_transport,
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
        self._runtimes: dict[str, ServerRuntime] = {}
        self._observers: list[Observer] = []
        self._tools: list[ToolSpec] = []
        self._by_model_name: dict[str, ToolSpec] = {}
        self._sampling_per_minute = sampling_per_minute
        for config in servers:
            self._add_runtime(config)

    def _add_runtime(self, config: Any) -> ServerRuntime:
        transport = config.type
        status = ServerStatus(name=config.name, transport=transport, sampling_per_minute=self._sampling_per_minute)
        status.log_level = getattr(config, "log_level", None) or status.log_level
        if getattr(config, "disabled", False):
            status.state = ServerState.DISABLED
        if self.log_dir is not None and transport == "stdio":
            status.log_path = self.log_dir / f"{log_file_name(config.name)}.log"
        self._runtimes[config.name] = ServerRuntime(config=config, status=status)
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

    def _changed(self, runtime: ServerRuntime, *, tools_changed: bool = False) -> None:
        if tools_changed:
            self._rebuild_tool_index()
        for observer in list(self._observers):
            try:
                observer(runtime.status)
            except Exception:  # an observer's bug must not take the hub down
                log.exception("server observer failed")

    def _set_state(self, runtime: ServerRuntime, state: ServerState, reason: str = "") -> None:
        offers_tools_changed = runtime.status.state.usable != state.usable
        runtime.status.state = state
        runtime.status.reason = self.redactor.text(reason)
        self._changed(runtime, tools_changed=offers_tools_changed)

    @property
    def statuses(self) -> list[ServerStatus]:
        return [runtime.status for runtime in self._runtimes.values()]

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
        specs = [spec for live in self._runtimes.values() if live.status.state.usable for spec in live.status.tools]
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
        runtimes = [runtime for runtime in self._runtimes.values() if runtime.status.state != ServerState.DISABLED]
        await asyncio.gather(*(self._start(runtime) for runtime in runtimes))
        return self.statuses

    async def restart(self, name: str) -> ServerStatus:
        """Stop one server (if running) and start it again; other servers are untouched."""
        runtime = self._runtimes[name]
        await self._stop(runtime, final_state=ServerState.STOPPED)
        runtime.status.restarts += 1
        await self._start(runtime)
        return runtime.status

    async def _start(self, runtime: ServerRuntime) -> None:
        runtime.start_number += 1
        start_number = runtime.start_number
        runtime.stop = asyncio.Event()
        runtime.settled = asyncio.Event()
        runtime.stderr_closed = asyncio.Event()
        runtime.stopping = False
        runtime.init_timed_out = False
        runtime.stdout_noise = ""
        runtime.start_refused = ""
        runtime.refused_state = ServerState.FAILED
        runtime.person = PersonClock()
        runtime.start_life = StartLife()
        runtime.status.stderr_tail.clear()
        runtime.status.started_at = datetime.now()
        runtime.status.start_seconds = None
        runtime.status.tools = []
        runtime.status.refused_tools = []
        runtime.status.unsupported_tools = []
        runtime.status.tool_pages_unread = False
        runtime.status.prompts, runtime.status.resources, runtime.status.resource_templates = [], [], []
        runtime.status.catalog_problems, runtime.status.subscribed = [], {}
        self._set_state(runtime, ServerState.STARTING)
        timeout = runtime.config.init_timeout or self.init_timeout
        started = time.perf_counter()
        name = f"mcp-server-{runtime.config.name}"
        runtime.task = asyncio.create_task(self._own(runtime, start_number, started), name=name)
        try:
            await self._wait_for_start(runtime, timeout)
        except TimeoutError:
            runtime.init_timed_out = True
            # Read before the stop below ends it: a process that exited did not hang, though its
            # closed connection may not have reached the client yet (a loaded machine).
            exit_code = await runtime.start_life.exited()
            runtime.task.cancel()
            await asyncio.wait({runtime.task}, timeout=STOP_WAIT_SECONDS)
            if exit_code is not None:
                reason = exit_reason(exit_code, list(runtime.status.stderr_tail))
            elif runtime.stdout_noise:
                reason = (
                    f"no answer to initialize within {timeout:g} s; its stdout had "
                    f"{noise_excerpt(runtime.stdout_noise)}, which is not JSON-RPC: {STDOUT_RULE}"
                )
            else:
                reason = silent_reason(timeout, runtime.start_life, list(runtime.status.stderr_tail))
            self._set_state(runtime, ServerState.FAILED, reason)
        if runtime.start_refused and runtime.status.state == ServerState.STARTING:
            self._set_state(runtime, runtime.refused_state, runtime.start_refused)

    async def _own(self, runtime: ServerRuntime, start_number: int, started: float) -> None:
        """The one task that holds this server's SDK client from start to stop."""
        import anyio

        try:
            client = self._new_client(runtime, start_number)
            async with client:
                if runtime.capture is not None:
                    runtime.capture.release_write_end()
                runtime.client = client
                await self._list_tools(runtime, client)
                await self._read_catalog(runtime, client)
                await self._send_log_level(runtime, client)
                self._record_server_info(runtime, client)
                runtime.status.start_seconds = time.perf_counter() - started
                self._set_state(runtime, ServerState.READY)
                runtime.settled.set()
                async with anyio.create_task_group() as group:
                    if self._wants_listen(client):
                        group.start_soon(self._listen_for_tool_changes, runtime, client)
                    self._watch_catalog(runtime, client)
                    await runtime.stop.wait()
                    group.cancel_scope.cancel()
        except asyncio.CancelledError:
            if not (runtime.init_timed_out or runtime.stopping or runtime.start_refused):
                raise
        except BaseException as exc:  # noqa: BLE001 - every failure becomes a state the user sees
            if isinstance(root_cause(exc), (KeyboardInterrupt, SystemExit)):
                raise
            await self._client_failed(runtime, start_number, exc)
        finally:
            runtime.client = None
            runtime.calls.server_gone(gone_reason(runtime))
            await self._close_oauth(runtime)
            for task in (runtime.refresh_task, runtime.catalog_task, runtime.catalog_refresh):
                if task is not None and not task.done():
                    task.cancel()
            if runtime.log_shown_soon is not None:  # observers hear of the last log messages with the state change
                runtime.log_shown_soon.cancel()
                runtime.log_shown_soon = None
            if runtime.capture is not None:
                runtime.capture.release_write_end()
            runtime.settled.set()

    async def _client_failed(self, runtime: ServerRuntime, start_number: int, exc: BaseException) -> None:
        """The client's task failed: the server crashed if it was running, else its start failed."""
        config = runtime.config
        if runtime.capture is not None:
            runtime.capture.release_write_end()
            try:
                await asyncio.wait_for(runtime.stderr_closed.wait(), 1.0)
            except TimeoutError:
                pass
        # A running server whose sign-in ended (``_oauth_failed``) keeps saying so.
        signed_out = runtime.status.state is ServerState.NEEDS_SIGN_IN
        if start_number == runtime.start_number and not (runtime.stopping or runtime.start_refused or signed_out):
            if runtime.status.state.usable:
                self._set_state(runtime, ServerState.CRASHED, f"connection lost: {root_cause(exc)}")
            else:
                reason = self._oauth_refusal(runtime) or describe_start_failure(
                    config, exc, list(runtime.status.stderr_tail), runtime.http_error, await runtime.start_life.exited()
                )
                if runtime.stdout_noise:
                    reason += (
                        f"; its stdout had {noise_excerpt(runtime.stdout_noise)}, which is not JSON-RPC ({STDOUT_RULE})"
                    )
                self._set_state(runtime, ServerState.FAILED, reason)

    def _transport(self, runtime: ServerRuntime, start_number: int) -> Any:
        config = runtime.config
        if (memory := memory_transport(config)) is not None:  # a test's server object, connected in memory
            runtime.capture = None
            return memory
        if config.type == "stdio":
            loop = asyncio.get_running_loop()
            runtime.capture = StderrCapture(
                loop,
                runtime.status.log_path,
                on_lines=partial(self._on_stderr, runtime, start_number),
                on_closed=partial(self._on_stderr_closed, runtime, start_number),
                redact=self.redactor.text,
            )
            return stdio_transport(config, runtime.capture.errlog, runtime.start_life.spawned)
        runtime.capture = None
        runtime.http_error = None
        auth = self._oauth(runtime, start_number)
        if config.type == "sse":
            return sse_transport(config.url, dict(config.headers), auth)

        def note(code: int, phrase: str) -> None:
            runtime.start_life.heard()  # an answer is a sign of life while starting (servers/starting.py)
            # 404 and 405 are normal while the SDK probes which protocol the server speaks.
            if code in (401, 403, 407) or code >= 500:
                runtime.http_error = (code, phrase)

        return http_transport(config.url, dict(config.headers), note, auth)

    async def _list_tools(self, runtime: ServerRuntime, client: Client, refresh: bool = False) -> None:
        """Read every page of the tool list into the status: valid tools, and those refused with why."""
        listing = await list_all_tools(client, refresh=refresh, max_pages=MAX_TOOL_PAGES)
        runs_tasks = server_runs_tasks(client)
        runtime.status.unsupported_tools = listing.unsupported + set_apart_task_tools(listing, runs_tasks)
        specs = [
            tool_spec(runtime.config.name, t, self.redactor, task_support(t) if runs_tasks else "")
            for t in listing.tools
        ]
        filters = [runtime.config.tool_filter(), self.tool_filters.get(runtime.config.name, ToolFilter())]
        runtime.status.tools, runtime.status.not_offered_tools = split_offered(specs, lambda spec: spec.name, filters)
        runtime.status.refused_tools = listing.refused
        runtime.status.tool_pages_read, runtime.status.tool_pages_unread = listing.pages_read, listing.pages_unread

    def _record_server_info(self, runtime: ServerRuntime, client: Client) -> None:
        info = client.server_info
        redact = self.redactor.text
        runtime.status.server_name = redact(info.name) if info else ""
        runtime.status.server_version = redact(info.version) if info and info.version else ""
        runtime.status.protocol_version = client.protocol_version or ""
        capabilities = client.server_capabilities
        runtime.status.capabilities = [
            name
            for name in ("tools", "prompts", "resources", "logging", "completions")
            if getattr(capabilities, name, None) is not None
        ]
        runtime.status.instructions = redact(client.instructions or "")

    # ----- notifications and stderr ----------------------------------------------------------

    @staticmethod
    def _wants_listen(client: Client) -> bool:
        tools_capability = client.server_capabilities.tools
        return is_modern(client) and tools_capability is not None and bool(tools_capability.list_changed)

    async def _listen_for_tool_changes(self, runtime: ServerRuntime, client: Client) -> None:
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    self._want_refresh(runtime, client)
        except Exception as exc:  # noqa: BLE001 - losing the stream only loses live tool updates
            log.info("tool-change stream of %s ended: %s", runtime.config.name, exc)

    def _want_refresh(self, runtime: ServerRuntime, client: Client) -> None:
        """The tool list changed: read it again soon, one reading at a time however many changes
        arrive (a burst within REFRESH_SETTLE_SECONDS is one reading; changes during a reading
        cause one more after it, so the last change is never missed)."""
        runtime.refresh_wanted = True
        if runtime.refresh_task is None or runtime.refresh_task.done():
            runtime.refresh_task = asyncio.get_running_loop().create_task(self._refresh_while_wanted(runtime, client))

    async def _refresh_while_wanted(self, runtime: ServerRuntime, client: Client) -> None:
        while runtime.refresh_wanted and runtime.client is client:
            await asyncio.sleep(REFRESH_SETTLE_SECONDS)
            runtime.refresh_wanted = False
            await self._refresh_tools(runtime, client)

    async def _refresh_tools(self, runtime: ServerRuntime, client: Client) -> None:
        try:
            await self._list_tools(runtime, client, refresh=True)
        except Exception as exc:  # noqa: BLE001
            runtime.status.stderr_tail.append(
                self.redactor.text(f"[mcp-chat-tui] refreshing the tool list failed: {exc}")
            )
        self._changed(runtime, tools_changed=True)

    async def _on_message(self, runtime: ServerRuntime, start_number: int, message: Any) -> None:
        import mcp_types

        if start_number != runtime.start_number:
            return
        # A message that could not be read is a protocol problem, while starting too (the stdio
        # transport fails the request it answered, so a start ends at once saying why); anything
        # else on stdout is noise.
        if isinstance(message, Exception) and (problem := unreadable_message(message)):
            self._on_unreadable_message(runtime, problem)
        elif isinstance(message, Exception):
            self._on_stdout_noise(runtime, noise_line(message))
        elif isinstance(message, mcp_types.ToolListChangedNotification) and runtime.client is not None:
            self._want_refresh(runtime, runtime.client)
        elif isinstance(message, mcp_types.ElicitCompleteNotification):
            self.requests.completed(runtime.config.name, message.params.elicitation_id)
        elif isinstance(message, mcp_types.ProgressNotification):  # a task's: the SDK matched it to no request
            await self._task_progress(runtime, message.params)
        else:
            self._catalog_message(runtime, message)

    # ----- stopping --------------------------------------------------------------------------

    async def _stop(self, runtime: ServerRuntime, final_state: ServerState) -> None:
        task = runtime.task
        if task is None or task.done():
            if runtime.status.state.usable or runtime.status.state == ServerState.STARTING:
                self._set_state(runtime, final_state)
            return
        runtime.stopping = True
        runtime.stop.set()
        if not runtime.settled.is_set():
            task.cancel()
        done, _ = await asyncio.wait({task}, timeout=STOP_WAIT_SECONDS)
        if not done:
            task.cancel()
            await asyncio.wait({task}, timeout=STOP_WAIT_SECONDS)
        if runtime.status.state.usable or runtime.status.state == ServerState.STARTING:
            self._set_state(runtime, final_state)

    async def stop(self, name: str) -> None:
        await self._stop(self._runtimes[name], ServerState.STOPPED)

    async def shutdown(self) -> None:
        """Stop every server: close stdin, then terminate, then kill (the SDK's escalation), all at once.
        Calls running as tasks are left to their servers (``leaving``), not cancelled: set before the
        first wait, so a turn the app stopped just before (``action_quit``) sends no ``tasks/cancel``."""
        self.leaving = True
        await asyncio.gather(*(self._stop(runtime, ServerState.STOPPED) for runtime in self._runtimes.values()))

    async def __aenter__(self) -> ServerHub:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await asyncio.shield(self.shutdown())
