"""What the hub keeps of one running server (``ServerRuntime``): its SDK client and task, its status,
its start-up and sign-in state; each part of the hub (tool calls, prompts and resources, callbacks,
sign-in, output) is handed one. And what a runtime says of itself: why a call cannot go to it for want
of sign-in, why its connection ended."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_chat_tui.core.tools import FailureKind
from mcp_chat_tui.servers.call_clock import ServerLife
from mcp_chat_tui.servers.oauth import OAuthSession, PersonClock, SignInPrompt
from mcp_chat_tui.servers.oauth_person import sign_in_hint
from mcp_chat_tui.servers.request_ties import CallsInFlight
from mcp_chat_tui.servers.starting import StartLife
from mcp_chat_tui.servers.state import ServerState, ServerStatus
from mcp_chat_tui.servers.stderr import StderrCapture

if TYPE_CHECKING:
    from mcp import Client


@dataclass(eq=False)
class ServerRuntime:
    """Live handles for one server; ``status`` is what observers see."""

    config: Any
    status: ServerStatus
    task: asyncio.Task[None] | None = None
    client: Client | None = None
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    stderr_closed: asyncio.Event = field(default_factory=asyncio.Event)
    capture: StderrCapture | None = None
    start_number: int = 0
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


def needs_sign_in(runtime: ServerRuntime) -> str:
    """Why a call cannot go to a server that needs sign-in, and what to do."""
    why = runtime.status.reason or sign_in_hint(runtime.config.name)
    return f"server {runtime.config.name!r} {why if why.startswith('needs sign-in') else f'needs sign-in: {why}'}"


def sign_in_failure(runtime: ServerRuntime) -> tuple[FailureKind, str] | None:
    """Why a call failed when its server's sign-in is the cause: the server needs sign-in (the call
    ended its tokens, or wanted more access), or it refused the call for want of scopes that a new
    sign-in would not give; None otherwise."""
    if runtime.status.state is ServerState.NEEDS_SIGN_IN:
        return FailureKind.NEEDS_SIGN_IN, needs_sign_in(runtime)
    provider = runtime.oauth.provider if runtime.oauth is not None else None
    if provider is not None and provider.refusal:
        refusal, provider.refusal = provider.refusal, ""
        return FailureKind.PROTOCOL_ERROR, f"server {runtime.config.name!r} {refusal}"
    return None


def gone_reason(runtime: ServerRuntime) -> str:
    """Why a server's connection ended (``runtime``: its hub runtime), for the dialogs of its requests."""
    if runtime.stopping:
        return f"server {runtime.config.name} was stopped or restarted"
    return f"server {runtime.config.name} stopped ({runtime.status.reason or runtime.status.state.value})"
