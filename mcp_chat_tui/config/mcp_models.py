"""The configuration of MCP servers as the rest of the app sees it: ``ServerConfig`` and ``McpConfig``.

A ``ServerConfig`` from ``load_mcp_config`` holds expanded values (real secrets included, so the
hub can start the server) and a display form of each string where answers to password inputs are
replaced by their ``${input:ID}`` placeholder. ``repr``/``str`` and the ``display_*`` methods use
the display form; never log ``model_dump()``, which carries the real values.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from mcp_chat_tui.config.envfile import read_env_file
from mcp_chat_tui.config.variables import InputSpec
from mcp_chat_tui.core.redact import Redactor, shown_url
from mcp_chat_tui.core.server_identity import ServerIdentity, url_without_credentials
from mcp_chat_tui.core.tool_filter import ToolFilter

_Text = Annotated[str, Field(strict=True)]
_Seconds = Annotated[float, Field(strict=True, gt=0)]

Transport = Literal["stdio", "http", "sse"]
LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

_Port = Annotated[int, Field(strict=True, ge=1, le=65535)]
TokenEndpointAuthMethod = Literal["client_secret_basic", "client_secret_post", "none"]


class OAuthSettings(BaseModel):
    """``oauth`` of an http or sse server: how the app signs in to it (OAuth 2.1).

    Without it the app registers itself with the server's authorization server (dynamic client
    registration). ``clientId`` (and ``clientSecret``) name a client registered beforehand, and
    ``tokenEndpointAuthMethod`` how it authenticates at the token endpoint (default: as the
    authorization server's metadata allows); ``clientMetadataUrl`` is the https address of a
    client metadata document, used as the client id where the authorization server supports such
    documents; ``callbackPort`` fixes the port of the loopback redirect
    (``http://127.0.0.1:PORT/callback``) that such a client was registered with; ``scope`` asks for
    these scopes instead of those the server names. ``"oauth": false`` turns sign-in off.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    client_id: _Text | None = Field(None, alias="clientId")
    client_secret: _Text | None = Field(None, alias="clientSecret")
    scope: _Text | None = None
    callback_port: _Port | None = Field(None, alias="callbackPort")
    token_endpoint_auth_method: TokenEndpointAuthMethod | None = Field(None, alias="tokenEndpointAuthMethod")
    client_metadata_url: _Text | None = Field(None, alias="clientMetadataUrl")


class ServerConfig(BaseModel):
    """One MCP server: how to start it (stdio) or reach it (http, sse), and its timeouts.

    ``timeout`` (seconds per tool call) and ``init_timeout`` (seconds to start and initialise)
    override the settings when given; ``log_level`` is the least level of log message the server
    is asked to send (default ``info``); ``includeTools`` / ``excludeTools`` which tools are
    offered to the model (core/tool_filter.py). Unknown keys in the file are ignored, as VS Code does.
    """

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    name: str
    type: Transport
    command: _Text | None = None
    args: list[_Text] = Field(default_factory=list)
    env: dict[str, _Text] = Field(default_factory=dict)
    env_file: Path | None = Field(None, alias="envFile")
    cwd: Path | None = None
    url: _Text | None = None
    headers: dict[str, _Text] = Field(default_factory=dict)
    disabled: Annotated[bool, Field(strict=True)] = False
    timeout: _Seconds | None = None
    init_timeout: _Seconds | None = Field(None, alias="initTimeout")
    oauth: OAuthSettings | Annotated[bool, Field(strict=True)] = True
    log_level: LogLevel | None = Field(None, alias="logLevel")
    include_tools: list[_Text] | None = Field(None, alias="includeTools")  # core/tool_filter.py
    exclude_tools: list[_Text] = Field(default_factory=list, alias="excludeTools")

    # Field name -> value safe to show (password answers replaced by their placeholder).
    _display: dict[str, Any] = PrivateAttr(default_factory=dict)

    def tool_filter(self) -> ToolFilter:
        """Which of its tools this entry offers to the model (``includeTools``, ``excludeTools``)."""
        return ToolFilter.of(self.include_tools, self.exclude_tools)

    def effective_env(self) -> dict[str, str]:
        """The variables a stdio server gets on top of the inherited environment.

        ``envFile`` (read now, so a restart sees edits) overlaid by ``env``. Raises
        ``ConfigError`` when the env file is missing or malformed.
        """
        merged = read_env_file(self.env_file) if self.env_file is not None else {}
        merged.update(self.env)
        return merged

    @property
    def has_secrets(self) -> bool:
        """True when some value came from a password input."""
        return any(self._shown(name) != getattr(self, name) for name in self._display)

    def display_env(self) -> dict[str, str]:
        """``env`` with password answers shown as ``${input:ID}``."""
        return dict(self._shown("env"))

    def display_headers(self) -> dict[str, str]:
        """``headers`` with password answers shown as ``${input:ID}``."""
        return dict(self._shown("headers"))

    @property
    def oauth_settings(self) -> OAuthSettings | None:
        """How to sign in to this http or sse server; None when sign-in is off (``"oauth": false``,
        a stdio server, or an ``Authorization`` header that the file gives itself)."""
        if self.type == "stdio" or self.oauth is False:
            return None
        if any(key.lower() == "authorization" for key in self.headers):
            return None
        return self.oauth if isinstance(self.oauth, OAuthSettings) else OAuthSettings()

    def display_url(self) -> str | None:
        """``url`` safe to show: password answers as their placeholder, no ``user:password@``, and
        secret-looking query values (``?token=``) as ``[redacted]``."""
        url: str | None = self._shown("url")
        return shown_url(url) if url is not None else None

    def display_command_line(self) -> str:
        """The command and its arguments as one shell-quoted line, safe to show."""
        command = self._shown("command")
        if command is None:
            return ""
        return shlex.join([command, *self._shown("args")])

    def identity(self) -> ServerIdentity:
        """Which server this is besides its name (a saved approval applies to it alone), from the
        display form: no answer to a password input is part of it."""
        if self.type == "stdio":
            cwd = self._shown("cwd")
            return ServerIdentity(
                command=(self._shown("command") or "", *self._shown("args")), cwd=str(cwd) if cwd else None
            )
        return ServerIdentity(url=url_without_credentials(self._shown("url") or ""))

    def _shown(self, name: str) -> Any:
        return self._display.get(name, getattr(self, name))

    def __repr_args__(self) -> Iterator[tuple[str, Any]]:
        for name in type(self).model_fields:
            yield name, self._shown(name)


class McpConfig(BaseModel):
    """Every server of one ``mcp.json``, in file order, disabled ones included."""

    model_config = ConfigDict(frozen=True)

    path: Path
    source: str
    servers: dict[str, ServerConfig]
    inputs: list[InputSpec] = Field(default_factory=list)

    # Hides the answers to password inputs (set by ``load_mcp_config``).
    _redactor: Redactor = PrivateAttr(default_factory=Redactor)

    @property
    def redactor(self) -> Redactor:
        """Replaces every answer to a password input with ``[redacted: ID]``."""
        return self._redactor

    def enabled(self) -> dict[str, ServerConfig]:
        """The servers to start, in file order."""
        return {name: server for name, server in self.servers.items() if not server.disabled}
