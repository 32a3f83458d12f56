"""Signing in to HTTP servers that answer 401: the SDK's ``OAuthClientProvider`` with the app's
storage, client id, loopback redirect and person. Why it is built so: docs/architecture.md,
"Signing in to HTTP servers".

Besides the SDK's flow the provider chooses how a client registered beforehand authenticates at
the token endpoint (from the authorization server's metadata, or ``tokenEndpointAuthMethod``),
asks for the scopes ``oauth.scope`` names and those a refused call wanted, and meets a call
refused for want of scopes (403 ``insufficient_scope``) with one new authorization for the union
of the scopes, after which the SDK sends the call again once; a refusal for scopes the sign-in
already has is given back as it is (signing in again would not help).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from pydantic import AnyUrl

from mcp_chat_tui import __version__
from mcp_chat_tui.servers.oauth_person import (
    CALLBACK_PATH,
    LOOPBACK_HOST,
    LoopbackListener,
    MoreAccessRequired,
    PersonClock,
    SignInFailed,
    SignInPrompt,
    SignInRequest,
    SignInRequired,
    free_loopback_port,
    sign_in_hint,
)
from mcp_chat_tui.servers.oauth_storage import ServerTokenStorage
from mcp_chat_tui.servers.state import ServerState
from mcp_chat_tui.servers.token_vault import TokenVault, VaultError
from mcp_chat_tui.servers.transports import describe_start_failure

if TYPE_CHECKING:
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull

    from mcp_chat_tui.servers.oauth_provider import AppOAuthProvider

__all__ = ["PersonClock", "SignInFailed", "SignInPrompt", "SignInRequest", "SignInRequired", "MoreAccessRequired"]

log = logging.getLogger(__name__)

Person = Callable[[bool], SignInPrompt | None]
"""Who to ask now (called with True for a call refused for want of scopes), or None: nobody."""


class _SignInRequiredIsNoError(logging.Filter):
    """The SDK logs every exception of the auth flow with its traceback, the expected
    ``SignInRequired`` of each start without a person too: that one is left out of the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], SignInRequired))


for _name in ("mcp.client.auth.oauth2", "mcp.client.streamable_http", "mcp.client.sse"):
    logging.getLogger(_name).addFilter(_SignInRequiredIsNoError())


@dataclass(eq=False)
class OAuthSession:
    """Everything one connection to one server needs to sign in; ``close`` when the connection ends."""

    provider: AppOAuthProvider
    handlers: _PersonHandlers

    async def close(self) -> None:
        await self.handlers.close()


def open_oauth_session(
    config: Any,
    vault: TokenVault,
    *,
    person: Person,
    signing_in: bool,
    on_failure: Callable[[Exception], None],
    on_secret: Callable[[str], None],
) -> OAuthSession:
    """The provider for ``config`` (an http or sse server whose ``oauth_settings`` is not None).

    ``person`` says who to ask when the authorization URL is reached; with nobody, a start raises
    ``SignInRequired`` and a call refused for want of scopes ``MoreAccessRequired``. While
    ``signing_in``, a loopback listener is bound now, so the redirect URI is known before
    registering; otherwise one is bound on that URI's port when a person is asked.
    """
    from mcp.shared.auth import OAuthClientMetadata

    from mcp_chat_tui.servers.oauth_provider import AppOAuthProvider

    settings = config.oauth_settings
    configured = _configured_client(settings)
    store = ServerTokenStorage(vault, config.url, configured, on_secret, settings.client_metadata_url)
    listener = _listener(config.name, settings.callback_port, store) if signing_in else None
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
    handlers = _PersonHandlers(config.name, redirect_uri, listener, person)
    provider = AppOAuthProvider(
        config.url,
        metadata,
        store=store,
        settings=settings,
        on_failure=on_failure,
        redirect_handler=handlers.redirect,
        callback_handler=handlers.callback,
    )
    handlers.provider = provider
    return OAuthSession(provider, handlers)


def _configured_client(settings: Any) -> OAuthClientInformationFull | None:
    """The client registered beforehand that mcp.json names (its auth method is chosen at the
    token endpoint: ``AppOAuthProvider._choose_client_auth``), or None."""
    from mcp.shared.auth import OAuthClientInformationFull

    if not settings.client_id:
        return None
    return OAuthClientInformationFull(
        client_id=settings.client_id,
        client_secret=settings.client_secret,
        token_endpoint_auth_method=settings.token_endpoint_auth_method
        or ("client_secret_basic" if settings.client_secret else "none"),
        redirect_uris=None,
    )


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


class _PersonHandlers:
    """The SDK's redirect and callback handlers: show the URL to the person, wait for the browser."""

    def __init__(self, server: str, redirect_uri: str, listener: LoopbackListener | None, person: Person) -> None:
        self.server = server
        self.redirect_uri = redirect_uri
        self.listener = listener
        self.person = person
        self.provider: AppOAuthProvider | None = None
        self.pending: list[SignInRequest] = []

    async def redirect(self, url: str) -> None:
        more = self._more_access()
        prompt = self.person(more is not None)
        if prompt is None:
            if more is not None:
                raise MoreAccessRequired(self.server, more)
            raise SignInRequired(sign_in_hint(self.server))
        if self.listener is None:
            try:
                self.listener = LoopbackListener(self.server, urlparse(self.redirect_uri).port or 0)
            except OSError as exc:
                raise SignInFailed(
                    f"{self.server}: cannot listen on {self.redirect_uri} for the sign-in's redirect: "
                    f"{exc.strerror or exc}"
                ) from None
        request = SignInRequest(
            self.server, url, self.redirect_uri, await self.listener.start(), more_access=more or ""
        )
        self.pending.append(request)
        await prompt(request)

    def _more_access(self) -> str | None:
        """The scopes this authorization asks for when a call was refused for want of scopes
        (None: it is no such authorization)."""
        provider = self.provider
        if provider is None or provider.challenge is None:
            return None
        return provider.context.client_metadata.scope or provider.challenge or "more access"

    async def callback(self) -> AuthorizationCodeResult:
        request = self.pending.pop()
        return await asyncio.shield(request.outcome)  # a cancelled start must not cancel the person's outcome

    async def close(self) -> None:
        if self.listener is not None:
            await self.listener.close()


def oauth_failure(config: Any, exc: Exception, http_error: tuple[int, str] | None) -> tuple[ServerState, str]:
    """The state and reason a stopped sign-in leaves a server in."""
    from mcp.client.auth import OAuthRegistrationError

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
