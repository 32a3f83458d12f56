"""Signing in to HTTP servers that answer 401: the SDK's ``OAuthClientProvider`` with the app's
storage, client id, loopback redirect and person. Why it is built so: docs/architecture.md,
"Signing in to HTTP servers"."""

from __future__ import annotations

import asyncio
import html
import logging
import socket
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthRegistrationError
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthMetadata
from mcp.shared.auth import OAuthToken as SdkToken
from mcp.shared.auth_utils import calculate_token_expiry
from pydantic import AnyUrl, BaseModel, ValidationError

from mcp_chat_tui import __version__
from mcp_chat_tui.servers.state import ServerState
from mcp_chat_tui.servers.token_vault import TokenVault, VaultError
from mcp_chat_tui.servers.transports import describe_start_failure

log = logging.getLogger(__name__)

CALLBACK_PATH = "/callback"
LOOPBACK_HOST = "127.0.0.1"


class SignInRequired(Exception):
    """The server wants a person to authorize the app, and there is none to ask now."""


class SignInFailed(Exception):
    """Signing in did not work: refused, cancelled, or the browser came back without a code."""


class _SignInRequiredIsNoError(logging.Filter):
    """The SDK logs every exception of the auth flow with its traceback, the expected
    ``SignInRequired`` of each start without a person too: that one is left out of the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], SignInRequired))


for _name in ("mcp.client.auth.oauth2", "mcp.client.streamable_http", "mcp.client.sse"):
    logging.getLogger(_name).addFilter(_SignInRequiredIsNoError())


def sign_in_hint(server: str) -> str:
    """What a user does about a server that needs sign-in (its state says that it does)."""
    return f"run mcp-chat-tui --sign-in {server}, or press s on it in the app's server panel"


# ----- the person ----------------------------------------------------------------------------


@dataclass(eq=False)
class SignInRequest:
    """One authorization for a person: the URL to open, and the end of it (the browser coming back)."""

    server: str
    url: str  # the full authorization URL
    redirect_uri: str
    outcome: asyncio.Future[AuthorizationCodeResult] = field(repr=False)

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

    async def wait(self, settled: asyncio.Event, timeout: float) -> None:
        """Wait for ``settled``; raises ``TimeoutError`` after ``timeout`` seconds not spent in the browser."""
        wait = timeout
        while True:
            try:
                await asyncio.wait_for(asyncio.shield(settled.wait()), wait)
                return
            except TimeoutError:
                since = time.monotonic() - self.done_at if self.done_at is not None else None
                if self.waiting:
                    wait = timeout
                elif since is not None and since < timeout:
                    wait = timeout - since
                else:
                    raise


class LoopbackListener:
    """The redirect target: a tiny HTTP listener on 127.0.0.1 that takes one ``/callback``."""

    def __init__(self, server: str, port: int = 0) -> None:
        self.server = server
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
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


# ----- what is kept --------------------------------------------------------------------------


class ServerTokenStorage:
    """The SDK's ``TokenStorage`` for one server, kept in a ``TokenVault`` under the server's URL.

    Besides the tokens and the registered client it keeps when the tokens expire and the
    authorization server's metadata, which the SDK holds in memory only: with them a token that
    expired since the last run is refreshed at its authorization server, with no browser.
    A client id given in ``mcp.json`` replaces any registered one.
    """

    def __init__(
        self,
        vault: TokenVault,
        key: str,
        configured_client: OAuthClientInformationFull | None,
        on_secret: Callable[[str], None],
    ) -> None:
        self.vault = vault
        self.key = key
        self.configured_client = configured_client
        self.on_secret = on_secret
        self.metadata_source: Callable[[], OAuthMetadata | None] = lambda: None
        self.record: dict[str, Any] = vault.load(key) or {}
        if configured_client is not None and self.record.get("client_id") != configured_client.client_id:
            self.record = {}  # tokens of another client
        self._note_secrets()

    async def get_tokens(self) -> SdkToken | None:
        return _parsed(SdkToken, self.record.get("tokens"))

    async def set_tokens(self, tokens: SdkToken) -> None:
        self.record["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        self.record["expires_at"] = calculate_token_expiry(tokens.expires_in) if tokens.expires_in else None
        metadata = self.metadata_source()
        if metadata is not None:
            self.record["metadata"] = metadata.model_dump(mode="json", exclude_none=True)
        if self.configured_client is not None:
            self.record["client_id"] = self.configured_client.client_id
        self._note_secrets()
        self.vault.save(self.key, self.record)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self.configured_client is not None:
            return self.configured_client
        return _parsed(OAuthClientInformationFull, self.record.get("client_info"))

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self.configured_client is not None:
            return
        self.record["client_info"] = client_info.model_dump(mode="json", exclude_none=True)
        self._note_secrets()
        self.vault.save(self.key, self.record)

    def forget_client(self) -> None:
        """Drop the registered client (its redirect URI cannot be served now): the SDK registers anew."""
        self.record.pop("client_info", None)
        self.record.pop("tokens", None)

    @property
    def expires_at(self) -> float | None:
        value = self.record.get("expires_at")
        return float(value) if isinstance(value, (int, float)) else None

    @property
    def metadata(self) -> OAuthMetadata | None:
        return _parsed(OAuthMetadata, self.record.get("metadata"))

    def registered_redirect_port(self) -> int | None:
        """The loopback port the registered client's redirect URI names, if any."""
        info = self.record.get("client_info") if self.configured_client is None else None
        uris = info.get("redirect_uris") if isinstance(info, dict) else None
        for uri in uris or []:
            parts = urlparse(str(uri))
            if parts.hostname == LOOPBACK_HOST and parts.port and parts.path == CALLBACK_PATH:
                return parts.port
        return None

    def _note_secrets(self) -> None:
        tokens = self.record.get("tokens") or {}
        client = self.record.get("client_info") or {}
        for value in (tokens.get("access_token"), tokens.get("refresh_token"), client.get("client_secret")):
            if isinstance(value, str) and value:
                self.on_secret(value)


_Model = TypeVar("_Model", bound=BaseModel)


def _parsed(model: type[_Model], data: Any) -> _Model | None:
    if not isinstance(data, dict):
        return None
    try:
        return model.model_validate(data)
    except ValidationError:
        return None


# ----- the provider --------------------------------------------------------------------------


class AppOAuthProvider(OAuthClientProvider):
    """The SDK's provider, told what it forgets between runs and reporting every failure.

    A failure inside the flow surfaces in the SDK's transport only as a log line while the
    request waits on; ``on_failure`` hears it, so the hub can say why at once.
    """

    def __init__(
        self,
        server_url: str,
        client_metadata: OAuthClientMetadata,
        *,
        store: ServerTokenStorage,
        on_failure: Callable[[Exception], None],
        redirect_handler: Callable[[str], Awaitable[None]],
        callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]],
    ) -> None:
        super().__init__(
            server_url,
            client_metadata,
            store,
            redirect_handler=redirect_handler,
            callback_handler=callback_handler,
        )
        self.store = store
        self.on_failure = on_failure
        store.metadata_source = lambda: self.context.oauth_metadata

    async def _initialize(self) -> None:
        await super()._initialize()
        if self.context.current_tokens is not None:
            self.context.token_expiry_time = self.store.expires_at
        if self.context.oauth_metadata is None:
            self.context.oauth_metadata = self.store.metadata

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = super().async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except Exception as exc:
            self.on_failure(exc)
            raise
        finally:
            await flow.aclose()


@dataclass(eq=False)
class OAuthSession:
    """Everything one connection to one server needs to sign in; ``close`` when the connection ends."""

    provider: AppOAuthProvider
    listener: LoopbackListener | None = None

    async def close(self) -> None:
        if self.listener is not None:
            await self.listener.close()


def open_oauth_session(
    config: Any,
    vault: TokenVault,
    *,
    prompt: SignInPrompt | None,
    on_failure: Callable[[Exception], None],
    on_secret: Callable[[str], None],
) -> OAuthSession:
    """The provider for ``config`` (an http or sse server whose ``oauth_settings`` is not None).

    With ``prompt``, a person is asked (a loopback listener is bound now, so the redirect URI is
    known before registering); without, reaching the authorization URL raises ``SignInRequired``.
    """
    settings = config.oauth_settings
    configured = None
    if settings.client_id:
        configured = OAuthClientInformationFull(
            client_id=settings.client_id,
            client_secret=settings.client_secret,
            token_endpoint_auth_method="client_secret_post" if settings.client_secret else "none",
            redirect_uris=None,
        )
    store = ServerTokenStorage(vault, config.url, configured, on_secret)
    listener = _listener(config.name, settings.callback_port, store) if prompt is not None else None
    redirect_uri = listener.redirect_uri if listener is not None else _redirect_uri(settings.callback_port, store)
    if configured is not None:
        configured.redirect_uris = [AnyUrl(redirect_uri)]
    metadata = OAuthClientMetadata(
        client_name="mcp-chat-tui",
        software_id="mcp-chat-tui",
        software_version=__version__,
        redirect_uris=[AnyUrl(redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="client_secret_post" if settings.client_secret else "none",
        scope=settings.scope,
    )
    redirect, callback = _person_handlers(config.name, redirect_uri, listener, prompt)
    provider = AppOAuthProvider(
        config.url,
        metadata,
        store=store,
        on_failure=on_failure,
        redirect_handler=redirect,
        callback_handler=callback,
    )
    return OAuthSession(provider, listener)


def _listener(server: str, callback_port: int | None, store: ServerTokenStorage) -> LoopbackListener:
    """The listener on ``callbackPort``, else on the port the registered client names (when it is
    free; if not, the client is registered again), else on any free port."""
    if callback_port is not None:
        try:
            return LoopbackListener(server, callback_port)
        except OSError as exc:
            raise SignInFailed(
                f"{server}: cannot listen on 127.0.0.1:{callback_port} for the sign-in's redirect "
                f"(oauth.callbackPort in mcp.json): {exc.strerror or exc}"
            ) from None
    registered = store.registered_redirect_port()
    if registered is not None:
        try:
            return LoopbackListener(server, registered)
        except OSError:
            store.forget_client()
    return LoopbackListener(server)


def _redirect_uri(callback_port: int | None, store: ServerTokenStorage) -> str:
    port = callback_port or store.registered_redirect_port() or free_loopback_port()
    return f"http://{LOOPBACK_HOST}:{port}{CALLBACK_PATH}"


def _person_handlers(
    server: str, redirect_uri: str, listener: LoopbackListener | None, prompt: SignInPrompt | None
) -> tuple[Callable[[str], Awaitable[None]], Callable[[], Awaitable[AuthorizationCodeResult]]]:
    """The SDK's redirect and callback handlers: show the URL to the person, wait for the browser."""
    pending: list[SignInRequest] = []

    async def redirect(url: str) -> None:
        if prompt is None or listener is None:
            raise SignInRequired(sign_in_hint(server))
        request = SignInRequest(server, url, redirect_uri, await listener.start())
        pending.append(request)
        await prompt(request)

    async def callback() -> AuthorizationCodeResult:
        request = pending.pop()
        return await asyncio.shield(request.outcome)  # a cancelled start must not cancel the person's outcome

    return redirect, callback


def oauth_failure(config: Any, exc: Exception, http_error: tuple[int, str] | None) -> tuple[ServerState, str]:
    """The state and reason a stopped sign-in leaves a server in."""
    if isinstance(exc, SignInRequired):
        return ServerState.NEEDS_SIGN_IN, str(exc)
    if isinstance(exc, SignInFailed):
        return ServerState.NEEDS_SIGN_IN, str(exc)
    if isinstance(exc, VaultError):
        return ServerState.FAILED, f"cannot keep its sign-in: {exc}"
    reason = describe_start_failure(config, exc, [], http_error)
    if http_error is None or http_error[0] not in (401, 403) or isinstance(exc, OAuthRegistrationError):
        return ServerState.FAILED, reason
    return ServerState.FAILED, f"{reason}; signing in with OAuth failed: {exc}"
