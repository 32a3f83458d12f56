"""What is kept of a sign-in: the SDK's ``TokenStorage`` for one server, in the ``TokenVault``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlparse

from pydantic import BaseModel, ValidationError

from mcp_chat_tui.servers.oauth_person import CALLBACK_PATH, LOOPBACK_HOST
from mcp_chat_tui.servers.token_vault import TokenVault

if TYPE_CHECKING:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata
    from mcp.shared.auth import OAuthToken as SdkToken


class ServerTokenStorage:
    """The SDK's ``TokenStorage`` for one server, kept in a ``TokenVault`` under the server's URL.

    Besides the tokens and the registered client it keeps when the tokens expire and the
    authorization server's metadata, which the SDK holds in memory only: with them a token that
    expired since the last run is refreshed at its authorization server, with no browser.
    A client id given in ``mcp.json`` replaces any registered one; a client metadata document's URL
    used as the client id is kept only while mcp.json names that URL. ``more_access`` holds the
    scopes a call was refused for, until a sign-in grants them.
    """

    def __init__(
        self,
        vault: TokenVault,
        key: str,
        configured_client: OAuthClientInformationFull | None,
        on_secret: Callable[[str], None],
        client_metadata_url: str | None = None,
    ) -> None:
        self.vault = vault
        self.key = key
        self.configured_client = configured_client
        self.on_secret = on_secret
        self.metadata_source: Callable[[], OAuthMetadata | None] = lambda: None
        self.record: dict[str, Any] = vault.load(key) or {}
        if configured_client is not None and self.record.get("client_id") != configured_client.client_id:
            self.record = {}  # tokens of another client
        self.client_metadata_url = client_metadata_url
        if self.record.get("client_metadata_url", client_metadata_url) != client_metadata_url:
            self.forget_client()  # a client id mcp.json no longer names
            self.record.pop("client_metadata_url", None)
        self._note_secrets()

    async def get_tokens(self) -> SdkToken | None:
        from mcp.shared.auth import OAuthToken as SdkToken

        return _parsed(SdkToken, self.record.get("tokens"))

    async def set_tokens(self, tokens: SdkToken) -> None:
        from mcp.shared.auth_utils import calculate_token_expiry

        self.record["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        self.record["expires_at"] = calculate_token_expiry(tokens.expires_in) if tokens.expires_in else None
        metadata = self.metadata_source()
        if metadata is not None:
            self.record["metadata"] = metadata.model_dump(mode="json", exclude_none=True)
        if self.configured_client is not None:
            self.record["client_id"] = self.configured_client.client_id
        if covers(tokens.scope, self.more_access):
            self.record.pop("more_access", None)
        self._note_secrets()
        self.vault.save(self.key, self.record)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull

        if self.configured_client is not None:
            return self.configured_client
        return _parsed(OAuthClientInformationFull, self.record.get("client_info"))

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self.configured_client is not None:
            return
        self.record["client_info"] = client_info.model_dump(mode="json", exclude_none=True)
        if self.client_metadata_url is not None and client_info.client_id == self.client_metadata_url:
            self.record["client_metadata_url"] = self.client_metadata_url
        self._note_secrets()
        self.vault.save(self.key, self.record)

    def forget_client(self) -> None:
        """Drop the registered client (its redirect URI cannot be served now): the SDK registers anew."""
        self.record.pop("client_info", None)
        self.record.pop("tokens", None)

    @property
    def more_access(self) -> str | None:
        """The scopes the next authorization asks for besides those the server names (a call was
        refused for want of them)."""
        value = self.record.get("more_access")
        return value if isinstance(value, str) and value else None

    def want_more_access(self, scope: str) -> None:
        self.record["more_access"] = scope
        self.vault.save(self.key, self.record)

    @property
    def expires_at(self) -> float | None:
        value = self.record.get("expires_at")
        return float(value) if isinstance(value, (int, float)) else None

    @property
    def metadata(self) -> OAuthMetadata | None:
        from mcp.shared.auth import OAuthMetadata

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


def covers(granted: str | None, wanted: str | None) -> bool:
    """Whether the scopes ``granted`` include every scope ``wanted`` (space-separated lists)."""
    return set((wanted or "").split()) <= set((granted or "").split())


def forget_tokens_short_of_more_access(vault: TokenVault, key: str) -> bool:
    """Drop the kept tokens of ``key`` when a call wanted more access than they grant, so that the
    next sign-in authorizes again (asking for the scopes wanted); True when it did."""
    record = vault.load(key) or {}
    tokens = record.get("tokens") if isinstance(record.get("tokens"), dict) else None
    wanted = record.get("more_access")
    if tokens is None or not isinstance(wanted, str) or covers(tokens.get("scope"), wanted):
        return False
    record.pop("tokens", None)
    record.pop("expires_at", None)
    vault.save(key, record)
    return True


_Model = TypeVar("_Model", bound=BaseModel)


def _parsed(model: type[_Model], data: Any) -> _Model | None:
    if not isinstance(data, dict):
        return None
    try:
        return model.model_validate(data)
    except ValidationError:
        return None
