"""An OAuth 2.1 authorization server and an MCP server it protects, both on 127.0.0.1, built from
the SDK's own auth components (``create_auth_routes``, ``MCPServer(auth=..., token_verifier=...)``).

The authorization server runs on ``--as-port`` (metadata, registration, /authorize, /token) and
approves every authorization at once (or refuses it, with ``--refuse``), so a test plays the
browser by following the authorization URL. The MCP server runs on ``--port`` and answers 401
without a token it issued. ``GET /stats`` on the authorization server counts what it did (and
lists the client id and scope of each authorization); ``POST /revoke-all`` revokes every token (as
a user who signs the app out at the provider would).

``--basic-only``: the token endpoint takes pre-registered clients' secrets by HTTP Basic only, and
the metadata says so. ``--cimd URL``: the metadata says client metadata documents are supported,
and ``URL`` is taken as such a client id (its document listing the ``--redirect`` URIs), without
fetching it. ``--step-up``: the tool ``write_note`` wants the scope ``mcp:write`` besides ``mcp``
and answers 403 ``insufficient_scope`` without it; ``--forbid-always``: it answers so whatever the
token has, asking for ``mcp`` (which a new sign-in would not change). ``--slow S``: every answer of
both servers waits S seconds first (a server on a loaded machine).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import time
from typing import Any

import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.routes import build_metadata, create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

SCOPE = "mcp"
WRITE_SCOPE = "mcp:write"


class MemoryProvider:
    """Clients, codes and tokens in memory; every authorization is approved (or refused)."""

    def __init__(
        self, token_seconds: int, refuse: bool, pre_registered: dict[str, str], client_auth: str, cimd: str | None
    ) -> None:
        self.scopes = [SCOPE]
        self.client_auth = client_auth  # how pre-registered clients authenticate at the token endpoint
        self.cimd = cimd  # the client id taken as a client metadata document's URL
        self.token_seconds = token_seconds
        self.refuse = refuse
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.stats = {"registered": 0, "authorized": 0, "refused": 0, "code_exchanges": 0, "refreshes": 0}
        self.authorizations: list[dict[str, str | None]] = []  # the client id and scope of each
        self.pre_registered = pre_registered

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if client_id in self.pre_registered or client_id == self.cimd:
            secret = self.pre_registered.get(client_id) or None
            return OAuthClientInformationFull(
                client_id=client_id,
                client_secret=secret,
                redirect_uris=list(PRE_REGISTERED_REDIRECTS),  # compared as AnyUrl, as the app's are
                token_endpoint_auth_method=self.client_auth if secret else "none",
                scope=f"{SCOPE} {WRITE_SCOPE}",
            )
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.stats["registered"] += 1
        client_info.scope = " ".join(self.scopes)  # a registered client may ask for every scope offered
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if self.refuse:
            self.stats["refused"] += 1
            return construct_redirect_uri(
                str(params.redirect_uri),
                error="access_denied",
                error_description="the user said no",
                state=params.state,
            )
        self.stats["authorized"] += 1
        self.authorizations.append({"client_id": client.client_id, "scope": " ".join(params.scopes or []) or None})
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code: str) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(self, client, authorization_code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        self.stats["code_exchanges"] += 1
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token: RefreshToken, scopes: list[str]) -> OAuthToken:
        if self.refresh.pop(refresh_token.token, None) is None:
            raise TokenError("invalid_grant", "refresh token already used")
        self.stats["refreshes"] += 1
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = f"at-{secrets.token_urlsafe(24)}", f"rt-{secrets.token_urlsafe(24)}"
        expires = int(time.time()) + self.token_seconds
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.token_seconds,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )


class ProviderVerifier:
    """The MCP server's token check: asks the authorization server's memory (same process)."""

    def __init__(self, provider: MemoryProvider) -> None:
        self.provider = provider

    async def verify_token(self, token: str) -> AccessToken | None:
        return await self.provider.load_access_token(token)


PRE_REGISTERED_REDIRECTS: list[str] = []


class ScopeGate:
    """In front of the MCP server: a call of ``write_note`` whose token lacks ``mcp:write`` (with
    ``always``: any call of it) is answered 403 ``insufficient_scope``, naming the scope wanted."""

    def __init__(self, app, provider: MemoryProvider, metadata_url: str, always: bool) -> None:
        self.app, self.provider, self.metadata_url, self.always = app, provider, metadata_url, always

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body, more = body + message.get("body", b""), message.get("more_body", False)
        sent = False

        async def replay():
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        wanted = self._refused(scope, body)
        if wanted is None:
            await self.app(scope, replay, send)
            return
        challenge = f'Bearer error="insufficient_scope", scope="{wanted}", resource_metadata="{self.metadata_url}"'
        refusal = JSONResponse(
            {"error": "insufficient_scope", "error_description": f"{wanted} wanted"},
            status_code=403,
            headers={"WWW-Authenticate": challenge},
        )
        await refusal(scope, replay, send)

    def _refused(self, scope, body: bytes) -> str | None:
        """The scope a call of write_note is refused for, or None (not such a call, or allowed)."""
        try:
            message = json.loads(body)
        except ValueError:
            return None
        params = message.get("params") if isinstance(message, dict) else None
        if message.get("method") != "tools/call" or not isinstance(params, dict) or params.get("name") != "write_note":
            return None
        headers = dict(scope["headers"])
        token = headers.get(b"authorization", b"").decode().removeprefix("Bearer ")
        access = self.provider.access.get(token)
        if access is None:
            return None  # the MCP server's own 401
        if self.always:
            return SCOPE
        return None if WRITE_SCOPE in access.scopes else WRITE_SCOPE


def build(args: argparse.Namespace) -> tuple[Starlette, Starlette]:
    issuer = f"http://127.0.0.1:{args.as_port}"
    path = "sse" if args.sse else "mcp"
    resource = f"http://127.0.0.1:{args.port}/{path}"
    pre = dict(item.split(":", 1) if ":" in item else (item, "") for item in args.client)
    PRE_REGISTERED_REDIRECTS.extend(args.redirect)
    client_auth = "client_secret_basic" if args.basic_only else "client_secret_post"
    provider = MemoryProvider(args.token_seconds, args.refuse, pre, client_auth, args.cimd)
    scopes = [SCOPE, WRITE_SCOPE] if args.step_up or args.forbid_always else [SCOPE]
    provider.scopes = scopes
    registration = ClientRegistrationOptions(
        enabled=not args.no_registration, valid_scopes=scopes, default_scopes=scopes
    )
    routes = create_auth_routes(provider, AnyHttpUrl(issuer), client_registration_options=registration)
    metadata = build_metadata(AnyHttpUrl(issuer), None, registration, RevocationOptions(enabled=False))
    if args.basic_only:
        metadata.token_endpoint_auth_methods_supported = ["client_secret_basic"]
    metadata.client_id_metadata_document_supported = True if args.cimd else None

    async def authorization_server_metadata(request: Request) -> JSONResponse:
        return JSONResponse(metadata.model_dump(mode="json", exclude_none=True))

    async def stats(request: Request) -> JSONResponse:
        return JSONResponse({**provider.stats, "authorizations": provider.authorizations})

    async def revoke_all(request: Request) -> JSONResponse:
        provider.access.clear()
        provider.refresh.clear()
        return JSONResponse({"revoked": True})

    auth_app = Starlette(
        routes=[
            Route("/.well-known/oauth-authorization-server", authorization_server_metadata),  # before the SDK's
            *routes,
            Route("/stats", stats),
            Route("/revoke-all", revoke_all, methods=["POST"]),
        ]
    )
    server = MCPServer(
        "protected",
        token_verifier=ProviderVerifier(provider),
        auth=AuthSettings(
            issuer_url=AnyHttpUrl(issuer),
            resource_server_url=AnyHttpUrl(resource),
            required_scopes=[SCOPE],
            validate_token_resource=False,
        ),
    )

    @server.tool()
    def whoami() -> str:
        """Say which server this is."""
        return "protected"

    @server.tool()
    def my_token() -> str:
        """Repeat the bearer token this call came with (a careless server's echo)."""
        token = get_access_token()
        return f"you sent {token.token if token else 'nothing'}"

    if args.step_up or args.forbid_always:

        @server.tool()
        def write_note(text: str) -> str:
            """Keep a note (the token needs the scope mcp:write)."""
            return f"noted: {text}"

    mcp_app = server.sse_app() if args.sse else server.streamable_http_app()
    if args.step_up or args.forbid_always:
        metadata_url = f"http://127.0.0.1:{args.port}/.well-known/oauth-protected-resource/{path}"
        mcp_app = ScopeGate(mcp_app, provider, metadata_url, args.forbid_always)
    return auth_app, mcp_app


class Slow:
    """An ASGI app that waits ``seconds`` before each HTTP request is handled."""

    def __init__(self, app: Any, seconds: float) -> None:
        self.app, self.seconds = app, seconds

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await asyncio.sleep(self.seconds)
        await self.app(scope, receive, send)


def servers(args: argparse.Namespace) -> list[uvicorn.Server]:
    """The authorization server and the MCP server, each a uvicorn server on its port of 127.0.0.1."""
    auth_app, mcp_app = (Slow(app, args.slow) if args.slow else app for app in build(args))
    return [
        uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
        for app, port in ((auth_app, args.as_port), (mcp_app, args.port))
    ]


async def serve(both: list[uvicorn.Server]) -> None:
    await asyncio.gather(*(server.serve() for server in both))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True, help="the MCP server's port")
    parser.add_argument("--as-port", type=int, required=True, help="the authorization server's port")
    parser.add_argument("--sse", action="store_true", help="serve MCP over SSE at /sse instead of /mcp")
    parser.add_argument("--refuse", action="store_true", help="refuse every authorization (access_denied)")
    parser.add_argument("--token-seconds", type=int, default=3600)
    parser.add_argument("--no-registration", action="store_true", help="no dynamic client registration")
    parser.add_argument("--client", action="append", default=[], help="a pre-registered client, ID or ID:SECRET")
    parser.add_argument("--redirect", action="append", default=[], help="a pre-registered client's redirect URI")
    parser.add_argument("--basic-only", action="store_true", help="client secrets by HTTP Basic only")
    parser.add_argument("--cimd", help="a client id taken as a client metadata document's URL")
    parser.add_argument("--step-up", action="store_true", help="write_note wants the scope mcp:write")
    parser.add_argument("--forbid-always", action="store_true", help="write_note is always refused for want of mcp")
    parser.add_argument("--slow", type=float, default=0.0, help="seconds each answer waits first")
    return parser.parse_args(argv)


def main() -> None:
    asyncio.run(serve(servers(parse_args())))


if __name__ == "__main__":
    main()
