"""An OAuth 2.1 authorization server and an MCP server it protects, both on 127.0.0.1, built from
the SDK's own auth components (``create_auth_routes``, ``MCPServer(auth=..., token_verifier=...)``).

The authorization server runs on ``--as-port`` (metadata, registration, /authorize, /token) and
approves every authorization at once (or refuses it, with ``--refuse``), so a test plays the
browser by following the authorization URL. The MCP server runs on ``--port`` and answers 401
without a token it issued. ``GET /stats`` on the authorization server counts what it did; ``POST /revoke-all`` revokes every
token (as a user who signs the app out at the provider would).
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import time

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
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

SCOPE = "mcp"


class MemoryProvider:
    """Clients, codes and tokens in memory; every authorization is approved (or refused)."""

    def __init__(self, token_seconds: int, refuse: bool, pre_registered: dict[str, str]) -> None:
        self.token_seconds = token_seconds
        self.refuse = refuse
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.stats = {"registered": 0, "authorized": 0, "refused": 0, "code_exchanges": 0, "refreshes": 0}
        self.pre_registered = pre_registered

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if client_id in self.pre_registered:
            secret = self.pre_registered[client_id] or None
            return OAuthClientInformationFull(
                client_id=client_id,
                client_secret=secret,
                redirect_uris=[AnyHttpUrl(uri) for uri in PRE_REGISTERED_REDIRECTS],
                token_endpoint_auth_method="client_secret_post" if secret else "none",
                scope=SCOPE,
            )
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.stats["registered"] += 1
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


def build(args: argparse.Namespace) -> tuple[Starlette, Starlette]:
    issuer = f"http://127.0.0.1:{args.as_port}"
    resource = f"http://127.0.0.1:{args.port}/{'sse' if args.sse else 'mcp'}"
    pre = dict(item.split(":", 1) if ":" in item else (item, "") for item in args.client)
    PRE_REGISTERED_REDIRECTS.extend(args.redirect)
    provider = MemoryProvider(args.token_seconds, args.refuse, pre)
    routes = create_auth_routes(
        provider,
        AnyHttpUrl(issuer),
        client_registration_options=ClientRegistrationOptions(
            enabled=not args.no_registration, valid_scopes=[SCOPE], default_scopes=[SCOPE]
        ),
    )

    async def stats(request: Request) -> JSONResponse:
        return JSONResponse(provider.stats)

    async def revoke_all(request: Request) -> JSONResponse:
        provider.access.clear()
        provider.refresh.clear()
        return JSONResponse({"revoked": True})

    auth_app = Starlette(routes=[*routes, Route("/stats", stats), Route("/revoke-all", revoke_all, methods=["POST"])])
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

    mcp_app = server.sse_app() if args.sse else server.streamable_http_app()
    return auth_app, mcp_app


async def serve(args: argparse.Namespace) -> None:
    auth_app, mcp_app = build(args)
    servers = [
        uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
        for app, port in ((auth_app, args.as_port), (mcp_app, args.port))
    ]
    await asyncio.gather(*(server.serve() for server in servers))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True, help="the MCP server's port")
    parser.add_argument("--as-port", type=int, required=True, help="the authorization server's port")
    parser.add_argument("--sse", action="store_true", help="serve MCP over SSE at /sse instead of /mcp")
    parser.add_argument("--refuse", action="store_true", help="refuse every authorization (access_denied)")
    parser.add_argument("--token-seconds", type=int, default=3600)
    parser.add_argument("--no-registration", action="store_true", help="no dynamic client registration")
    parser.add_argument("--client", action="append", default=[], help="a pre-registered client, ID or ID:SECRET")
    parser.add_argument("--redirect", action="append", default=[], help="a pre-registered client's redirect URI")
    asyncio.run(serve(parser.parse_args()))


if __name__ == "__main__":
    main()
