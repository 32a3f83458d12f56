"""The app's OAuth provider: the SDK's ``OAuthClientProvider`` told what the app's storage keeps, how a
client registered beforehand authenticates, which scopes to ask for, and reporting every failure.

Imported only when an HTTP server's connection needs to sign in (``oauth.open_oauth_session``): the
SDK's auth and HTTP parts it builds on are not among what the app's first frame waits for.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.utils import extract_field_from_www_auth, extract_scope_from_www_auth, union_scopes
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata, OAuthMetadata

from mcp_chat_tui.servers.oauth_storage import ServerTokenStorage, covers

MAX_STEP_UPS = 2  # new authorizations one connection makes for calls refused for want of scopes
SECRET_METHODS = ("client_secret_basic", "client_secret_post")


def client_auth_method(metadata: OAuthMetadata | None, has_secret: bool) -> str:
    """How a client registered beforehand authenticates at the token endpoint: ``none`` without a
    secret; else the first secret method the authorization server lists, and ``client_secret_basic``
    where it lists none (the default of RFC 8414)."""
    if not has_secret:
        return "none"
    listed = (metadata.token_endpoint_auth_methods_supported if metadata is not None else None) or []
    return next((method for method in listed if method in SECRET_METHODS), "client_secret_basic")


def insufficient_scope(response: httpx2.Response) -> bool:
    return response.status_code == 403 and extract_field_from_www_auth(response, "error") == "insufficient_scope"


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
        settings: Any,
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
            client_metadata_url=settings.client_metadata_url,
        )
        self.store = store
        self.settings = settings
        self.on_failure = on_failure
        self.challenge: str | None = None  # the scopes a refused call asked for, while its step-up runs
        self.step_ups = 0
        self.refusal = ""  # why the last call refused for want of scopes was not met with a new sign-in
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
                if insufficient_scope(response) and not self._step_up_helps(response):
                    return  # the 403 goes back to the transport: the call fails, the server stays
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except Exception as exc:
            self.on_failure(exc)
            raise
        finally:
            self.challenge = None
            await flow.aclose()

    def _step_up_helps(self, response: httpx2.Response) -> bool:
        """Whether a 403 ``insufficient_scope`` is worth a new authorization: not when the sign-in
        already has every scope it asks for, nor past ``MAX_STEP_UPS`` on this connection."""
        wanted = extract_scope_from_www_auth(response)
        tokens = self.context.current_tokens
        granted = tokens.scope if tokens is not None else None
        if wanted and tokens is not None and covers(granted, wanted):
            self.refusal = f"refused for want of {wanted}, which its sign-in has: signing in again would not help"
        elif self.step_ups >= MAX_STEP_UPS:
            self.refusal = f"refused for want of {wanted or 'more access'} after {MAX_STEP_UPS} new sign-ins"
        else:
            self.step_ups += 1
            self.challenge = wanted or ""
            return True
        return False

    async def _perform_authorization(self) -> httpx2.Request:
        """Before the person is asked: the scopes to ask for (``oauth.scope`` instead of the
        server's, and those a refused call wanted), remembered until a sign-in grants them."""
        scope = self.context.client_metadata.scope  # the server's choice; on a step-up, the union
        if self.settings.scope:
            scope = union_scopes(self.settings.scope, scope) if self.challenge is not None else self.settings.scope
        scope = union_scopes(scope, self.store.more_access)
        self.context.client_metadata.scope = scope
        if self.challenge is not None and scope:
            self.store.want_more_access(scope)
        return await super()._perform_authorization()

    async def _exchange_token_authorization_code(self, auth_code: str, code_verifier: str) -> httpx2.Request:
        self._choose_client_auth()
        return await super()._exchange_token_authorization_code(auth_code, code_verifier)

    async def _refresh_token(self) -> httpx2.Request:
        self._choose_client_auth()
        return await super()._refresh_token()

    def _choose_client_auth(self) -> None:
        """A client registered beforehand authenticates as ``tokenEndpointAuthMethod`` says, else as
        the authorization server's metadata allows (``client_auth_method``)."""
        configured, info = self.store.configured_client, self.context.client_info
        if configured is None or info is None or info.client_id != configured.client_id:
            return
        method = self.settings.token_endpoint_auth_method or client_auth_method(
            self.context.oauth_metadata, bool(configured.client_secret)
        )
        if info.token_endpoint_auth_method != method:
            self.context.client_info = info.model_copy(update={"token_endpoint_auth_method": method})
