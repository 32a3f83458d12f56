"""A server's request to the client (a form, a sampled reply, a URL) lasts no longer than what it asks for.

A server asks during its own tool call (the spec ties its requests to the client request it
serves). When that call ends anyway (a result, its timeout, the user stopping it, its server
crashing) the person's answer can no longer reach anything: the request is withdrawn at once, and
the work answering it (a dialog, a question on the terminal) is cancelled with why, as its
``CancelledError``'s message. So is it when the server takes the request back
(``notifications/cancelled``) or its connection ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from mcp_chat_tui.core.tools import FailureKind, ToolCallResult

Answer = TypeVar("Answer")
WITHDRAWN = "withdrawn: "  # starts the message of a cancellation that says why a request ended


def withdrawal(exc: BaseException) -> str:
    """Why the request a cancelled piece of work answered ended ("" when it was cancelled otherwise)."""
    said = exc.args[0] if exc.args else None
    return said.removeprefix(WITHDRAWN) if isinstance(said, str) and said.startswith(WITHDRAWN) else ""


class CallsInFlight:
    """One server's calls under way, each with a future that says how it ended once it has."""

    def __init__(self) -> None:
        self._ends: set[asyncio.Future[str]] = set()

    def begin(self) -> asyncio.Future[str]:
        end: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._ends.add(end)
        return end

    def end(self, end: asyncio.Future[str], why: str) -> None:
        self._ends.discard(end)
        if not end.done():
            end.set_result(why)

    def server_gone(self, why: str) -> None:
        """The server stopped or lost its connection: every request asked during its calls is moot,
        even where the call itself waits on the answer (on 2026-07-28 the request is answered inside it)."""
        for end in self._ends:
            if not end.done():
                end.set_result(why)

    def now(self) -> set[asyncio.Future[str]]:
        """The calls under way now: a request asked meanwhile is for them."""
        return set(self._ends)


def how_it_ended(tool: str, result: ToolCallResult | None) -> str:
    """How a call ended, for the notice of a dialog it takes away."""
    if result is None:
        return f"the call of {tool} was stopped"
    failure = result.failure
    if failure is None:
        return f"the call of {tool} ended (the server answered it)"
    if failure.kind is FailureKind.TIMEOUT:
        return f"the call of {tool} timed out"
    if failure.kind is FailureKind.CRASHED:
        return f"the server stopped during the call of {tool}"
    return f"the call of {tool} ended: {failure.message}"


async def while_wanted(
    work: Awaitable[Answer], calls: set[asyncio.Future[str]], withdrawn: Callable[[], str], moot: Answer
) -> Answer:
    """``work``'s answer, or ``moot`` once every call in ``calls`` (those under way when the request came)
    has ended first: ``work`` is then cancelled with how they ended. Cancelled from outside (the
    server took the request back, or its connection ended), ``work`` is cancelled with ``withdrawn()``."""
    answering: asyncio.Future[Answer] = asyncio.ensure_future(work)
    try:
        while calls and not answering.done():
            waiting: set[asyncio.Future[Any]] = {answering, *calls}
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if not answering.done() and all(end.done() for end in calls):
                answering.cancel(WITHDRAWN + next(end.result() for end in calls))
                await asyncio.wait({answering})
                return moot if answering.cancelled() else answering.result()
        return await answering
    except asyncio.CancelledError:
        if not answering.done() and not getattr(answering, "cancelling", lambda: 0)():
            answering.cancel(WITHDRAWN + withdrawn())
        raise
