"""The person side of signing in: what a server waiting for sign-in raises, the request shown to
the person (the authorization address and the end of it), their time (which no init timeout
counts), and the loopback listener the browser comes back to."""

from __future__ import annotations

import asyncio
import html
import os
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlparse

if TYPE_CHECKING:
    from mcp.shared.auth import AuthorizationCodeResult


CALLBACK_PATH = "/callback"
LOOPBACK_HOST = "127.0.0.1"


class SignInRequired(Exception):
    """The server wants a person to authorize the app, and there is none to ask now."""


class MoreAccessRequired(SignInRequired):
    """A call was refused for want of scopes (403 ``insufficient_scope``), and there is nobody to
    sign in again with more access now; the scopes to ask for are kept for the next sign-in."""

    def __init__(self, server: str, scope: str) -> None:
        super().__init__(f"needs sign-in with more access ({scope}): {sign_in_hint(server)}")
        self.scope = scope


class SignInFailed(Exception):
    """Signing in did not work: refused, cancelled, or the browser came back without a code."""


def sign_in_hint(server: str) -> str:
    """What a user does about a server that needs sign-in (its state says that it does)."""
    return f"run mcp-chat-tui --sign-in {server}, or press s on it in the app's server panel"


@dataclass(eq=False)
class SignInRequest:
    """One authorization for a person: the URL to open, and the end of it (the browser coming back)."""

    server: str
    url: str  # the full authorization URL
    redirect_uri: str
    outcome: asyncio.Future[AuthorizationCodeResult] = field(repr=False)
    more_access: str = ""  # the scopes a call was refused for, when this sign-in asks for more access

    def cancel(self, why: str = "sign-in cancelled") -> None:
        """The person gave up: the sign-in fails with ``why``."""
        if not self.outcome.done():
            self.outcome.set_exception(SignInFailed(f"{self.server}: {why}"))

    async def finished(self) -> None:
        """Return once the browser came back, the sign-in failed, or it was cancelled."""
        await asyncio.wait({self.outcome})


SignInPrompt = Callable[[SignInRequest], Awaitable[None]]
"""Shows a ``SignInRequest`` to the person (and may open the browser); returns once shown."""


@dataclass
class PersonClock:
    """A start's time with a person in the browser, which its init timeout does not count."""

    waiting: bool = False
    done_at: float | None = None

    def timed(self, prompt: SignInPrompt, wanted: Callable[[], bool], server: str) -> SignInPrompt:
        """``prompt``, timed; once ``wanted()`` is false it raises ``SignInRequired`` instead."""

        async def ask(request: SignInRequest) -> None:
            if not wanted():
                raise SignInRequired(sign_in_hint(server))
            self.waiting = True
            request.outcome.add_done_callback(self._came_back)
            await prompt(request)

        return ask

    def _came_back(self, _: object) -> None:
        self.waiting, self.done_at = False, time.monotonic()


class LoopbackListener:
    """The redirect target: a tiny HTTP listener on 127.0.0.1 that takes one ``/callback``."""

    def __init__(self, server: str, port: int = 0) -> None:
        self.server = server
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if os.name == "posix":
            # The browser's connection to the last sign-in leaves the port in TIME_WAIT for a
            # minute; on POSIX this binds it all the same (never a port another program listens on).
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._socket.bind((LOOPBACK_HOST, port))
        except OSError:
            self._socket.close()
            raise
        self._socket.listen(8)
        self.port = self._socket.getsockname()[1]
        self._outcome: asyncio.Future[AuthorizationCodeResult] | None = None
        self._serving: asyncio.Server | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://{LOOPBACK_HOST}:{self.port}{CALLBACK_PATH}"

    async def start(self) -> asyncio.Future[AuthorizationCodeResult]:
        """Start taking the callback; the future holds its code, or why it failed."""
        self._outcome = asyncio.get_running_loop().create_future()
        if self._serving is None:
            self._serving = await asyncio.start_server(self._answer, sock=self._socket)
        return self._outcome

    async def close(self) -> None:
        """Stop listening; a sign-in still waiting for the browser fails (its dialog closes)."""
        if self._outcome is not None and not self._outcome.done():
            self._outcome.set_exception(SignInFailed(f"{self.server}: the sign-in was stopped"))
            self._outcome.exception()  # retrieved: nobody may be left to await it
        if self._serving is not None:
            self._serving.close()
            await self._serving.wait_closed()
        else:
            self._socket.close()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            while (await asyncio.wait_for(reader.readline(), 10)).strip():
                pass  # the headers: nothing in them matters
            parts = request_line.split()
            target = urlparse(parts[1]) if len(parts) >= 2 else None
            if target is None or target.path != CALLBACK_PATH or self._outcome is None:
                await _respond(writer, 404, "Not the sign-in callback.")
                return
            status, page = self._take(parse_qs(target.query))
            await _respond(writer, status, page)
        except (OSError, TimeoutError, UnicodeError):
            pass
        finally:
            writer.close()

    def _take(self, query: dict[str, list[str]]) -> tuple[int, str]:
        """The callback's query: a code (the sign-in goes on) or an error (it fails)."""
        from mcp.shared.auth import AuthorizationCodeResult

        assert self._outcome is not None
        first = {key: values[0] for key, values in query.items() if values}
        if self._outcome.done():
            return 409, "This sign-in is over; start it again from mcp-chat-tui."
        if "error" in first:
            detail = f" ({first['error_description']})" if first.get("error_description") else ""
            why = f"{self.server}: the authorization server refused the sign-in: {first['error']}{detail}"
            self._outcome.set_exception(SignInFailed(why))
            return 400, f"Sign-in refused: {first['error']}{detail}. You can close this tab."
        if not first.get("code"):
            self._outcome.set_exception(SignInFailed(f"{self.server}: the browser came back without a code"))
            return 400, "No authorization code came back. You can close this tab."
        self._outcome.set_result(
            AuthorizationCodeResult(code=first["code"], state=first.get("state"), iss=first.get("iss"))
        )
        return 200, f"Signed in to {self.server}. You can close this tab and go back to mcp-chat-tui."


async def _respond(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    body = f"<!doctype html><meta charset=utf-8><title>mcp-chat-tui</title><p>{html.escape(text)}</p>".encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 409: "Conflict"}[status]
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n"
    )
    writer.write(head.encode() + body)
    await writer.drain()


def free_loopback_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK_HOST, 0))
        port: int = probe.getsockname()[1]
        return port
