"""What the hub's SDK client declares and sends besides tool calls: roots, log level.

Small functions the hub delegates to, so ``hub.py`` stays the place that owns the client.
2025-11-25 connections set the log level with ``logging/setLevel`` and hear of new roots
through ``notifications/roots/list_changed``; 2026-07-28 connections carry the level on each
request (``_meta``) and have no client notifications (a server asks for the roots each time).
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.servers.notifications import LogEntry, instructions_prompt, log_text
from mcp_chat_tui.servers.roots import ROOTS_USAGE, Roots, parse_roots_command

if TYPE_CHECKING:
    import mcp_types
    from mcp import Client

    from mcp_chat_tui.servers.runtime import ServerRuntime

log = logging.getLogger(__name__)

LogListener = Callable[[str, LogEntry], None]
LOG_SHOW_DELAY = 0.05  # log messages within this time tell observers once (a flooding server costs one redraw)
SETTLE_WAIT_SECONDS = 5.0  # the longest a model request waits for a tool list being read again


def is_modern(client: Client) -> bool:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return client.protocol_version in MODERN_PROTOCOL_VERSIONS


def roots_result(paths: list[Path]) -> mcp_types.ListRootsResult:
    """The answer to ``roots/list``: each folder as a ``file://`` URI named by its last part."""
    import mcp_types

    return mcp_types.ListRootsResult(
        roots=[mcp_types.Root(uri=path.as_uri(), name=path.name or str(path)) for path in paths]
    )


async def send_log_level(client: Client, level: str) -> bool:
    """Ask a 2025-11-25 server that offers logging for ``level`` and above; False when the
    protocol has no ``logging/setLevel`` or the server offers no logging (nothing is sent)."""
    from mcp.shared.exceptions import MCPDeprecationWarning

    if is_modern(client) or client.server_capabilities.logging is None:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await client.set_logging_level(level)  # type: ignore[arg-type]
    return True


def log_level_meta(client: Client, level: str) -> dict[str, Any] | None:
    """The ``_meta`` that asks a 2026-07-28 server for log messages at ``level`` with one request."""
    from mcp_types import LOG_LEVEL_META_KEY

    return {LOG_LEVEL_META_KEY: level} if is_modern(client) else None


async def send_roots_changed(client: Client) -> bool:
    """``notifications/roots/list_changed`` where the protocol has it; returns whether it was sent."""
    from mcp.shared.exceptions import MCPDeprecationWarning

    if is_modern(client):
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await client.send_roots_list_changed()
    return True


def log_entry(params: mcp_types.LoggingMessageNotificationParams, redactor: Redactor) -> LogEntry:
    """A log notification as a redacted entry stamped with the time it came."""
    return LogEntry(
        time=datetime.now(),
        level=str(params.level),
        logger=redactor.text(params.logger or ""),
        text=redactor.text(log_text(params.data)),
    )


def roots_change_note(told: int) -> str:
    """What servers learn of a change of roots, in a person's words (``told``: the servers told now)."""
    later = "every server sees the new roots the next time it asks for them"
    if told == 0:
        return later
    servers = "1 server was" if told == 1 else f"{told} servers were"
    return f"{servers} told at once; the others see the new roots the next time they ask"


class ServerContext:
    """The hub's part for logging, roots, instructions and tool-list settling (mixed into
    ``ServerHub``; uses its ``_runtimes``, ``redactor``, ``roots``, ``_log_listeners``, ``_changed``)."""

    _runtimes: dict[str, ServerRuntime]
    redactor: Redactor
    roots: Roots
    _log_listeners: list[LogListener]
    _changed: Callable[..., None]

    def add_log_listener(self, listener: LogListener) -> None:
        """``listener(server, entry)`` hears every log message, redacted, as it comes."""
        self._log_listeners.append(listener)

    async def _on_log(
        self, runtime: ServerRuntime, start_number: int, params: mcp_types.LoggingMessageNotificationParams
    ) -> None:
        if start_number != runtime.start_number:
            return
        entry = log_entry(params, self.redactor)
        runtime.status.log.add(entry)
        for listener in list(self._log_listeners):
            try:
                listener(runtime.config.name, entry)
            except Exception:  # a listener's bug must not take the hub down
                log.exception("log listener failed")
        if runtime.log_shown_soon is None:  # observers hear of a burst once
            runtime.log_shown_soon = asyncio.get_running_loop().call_later(LOG_SHOW_DELAY, self._log_shown, runtime)

    def _log_shown(self, runtime: ServerRuntime) -> None:
        runtime.log_shown_soon = None
        self._changed(runtime)

    async def set_log_level(self, name: str, level: str) -> str:
        """Ask one server for log messages at ``level`` and above, from now on; returns how."""
        runtime = self._runtimes[name]
        runtime.status.log_level = level
        self._changed(runtime)
        client = runtime.client
        if client is None:
            return f"{name}: log level {level} (from its next start)"
        if await self._send_log_level(runtime, client):
            return f"{name}: log level {level} (sent with logging/setLevel)"
        if is_modern(client):
            return f"{name}: log level {level} (asked for with each request)"
        return f"{name}: log level {level} (the server offers no logging)"

    async def _send_log_level(self, runtime: ServerRuntime, client: Client) -> bool:
        try:
            return await send_log_level(client, runtime.status.log_level)
        except Exception as exc:  # noqa: BLE001 - a refused level loses only log messages
            runtime.status.stderr_tail.append(self.redactor.text(f"[mcp-chat-tui] logging/setLevel failed: {exc}"))
            return False

    async def _list_roots(self, runtime: ServerRuntime, _context: Any) -> mcp_types.ListRootsResult:
        return roots_result(self.roots.for_server(runtime.config.name))

    async def roots_changed(self) -> int:
        """Tell every running server whose protocol has it that the roots changed; returns how many were told."""
        told = 0
        for runtime in self._runtimes.values():
            if runtime.client is not None and runtime.status.state.usable:
                try:
                    told += await send_roots_changed(runtime.client)
                except Exception as exc:  # noqa: BLE001
                    runtime.status.stderr_tail.append(
                        self.redactor.text(f"[mcp-chat-tui] roots/list_changed failed: {exc}")
                    )
        return told

    async def roots_command(self, text: str) -> str | None:
        """Run a ``/roots`` line (list, add PATH, remove PATH); returns what to tell the user,
        None when ``text`` is not a ``/roots`` line."""
        command = parse_roots_command(text)
        if command is None:
            return None
        action, argument = command
        if action == "help":
            return ROOTS_USAGE
        if action == "list":
            return f"roots offered to every server: {self.roots.describe_shared()} ({ROOTS_USAGE})"
        try:
            said = self.roots.add(argument) if action == "add" else self.roots.remove(argument)
        except ValueError as exc:
            return f"roots unchanged: {exc}"
        told = await self.roots_changed()
        return f"{said}; {roots_change_note(told)}"

    def instructions_prompt(self) -> str:
        """The usable servers' instructions for the system prompt, each under its name, each capped."""
        return instructions_prompt(
            [
                (runtime.config.name, runtime.status.instructions)
                for runtime in self._runtimes.values()
                if runtime.status.state.usable
            ]
        )

    async def settle_tools(self) -> None:
        """Wait until every tool, prompt and resource list a server said changed has been read again
        (a model request made next sees the new tools, the built-in resource tools included).
        Notifications that came with a call's result are handled first."""
        await self._settle(lambda runtime: (runtime.refresh_task, runtime.catalog_refresh))

    async def settle_catalog(self) -> None:
        """Wait until every prompt and resource list a server said changed has been read again (the
        ``list_resources`` that follows sees the new list)."""
        await self._settle(lambda runtime: (runtime.catalog_refresh,))

    async def _settle(self, readings: Callable[[Any], tuple[asyncio.Task[None] | None, ...]]) -> None:
        for _ in range(3):  # the SDK hands each notification to its own task: let those run
            await asyncio.sleep(0)
        pending = {
            task for runtime in self._runtimes.values() for task in readings(runtime) if task and not task.done()
        }
        if pending:
            await asyncio.wait(pending, timeout=SETTLE_WAIT_SECONDS)
