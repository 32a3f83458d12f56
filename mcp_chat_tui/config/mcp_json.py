"""Finding and loading ``mcp.json``: VS Code's schema, Claude Desktop's, and JSON with comments.

VS Code writes ``{"servers": {...}, "inputs": [...]}``; Claude Desktop writes
``{"mcpServers": {...}}`` without ``type``. A server without ``type`` is stdio when it has
``command`` and http when it has ``url``. VS Code's files are JSONC, so ``//`` and ``/* */``
comments and trailing commas are accepted. Relative ``cwd`` and ``envFile`` paths are taken from
the folder holding the ``mcp.json``; ``~`` is expanded. See ``variables`` for ``${...}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pydantic import ValidationError

from mcp_chat_tui.config._errors import from_json_error, from_validation_error, key_path, kind_of, read_text
from mcp_chat_tui.config.mcp_models import McpConfig, OAuthSettings, ServerConfig
from mcp_chat_tui.config.variables import AskInput, Expander, InputCache, InputSpec
from mcp_chat_tui.core.errors import ConfigError
from mcp_chat_tui.core.paths import bundled_path, user_config_dir
from mcp_chat_tui.core.redact import Redactor, url_secrets
from mcp_chat_tui.core.tools import BUILTIN_SERVER

_WHAT = 'an mcp.json file ({"servers": {...}})'


def find_mcp_config(explicit: Path | None, cwd: Path) -> tuple[Path, str]:
    """Which ``mcp.json`` to use, and a phrase saying where it was found.

    ``--mcp-config PATH`` (must exist), else ``./mcp.json``, else ``./.vscode/mcp.json``,
    else ``mcp.json`` in the user config directory, else the bundled default.
    """
    if explicit is not None:
        path = Path(explicit).expanduser()
        if not path.is_absolute():
            path = cwd / path
        if not path.is_file():
            problem = "is a folder" if path.is_dir() else "no such file"
            raise ConfigError(path, None, f"{problem} (given with --mcp-config; expected {_WHAT})")
        return path, "--mcp-config"
    candidates = [
        (cwd / "mcp.json", "./mcp.json"),
        (cwd / ".vscode" / "mcp.json", "./.vscode/mcp.json"),
        (user_config_dir() / "mcp.json", "user config directory"),
    ]
    for path, source in candidates:
        if path.is_file():
            return path, source
    return bundled_path("mcp.json"), "bundled default"


def load_mcp_config(
    path: Path,
    *,
    source: str = "explicit path",
    workspace_folder: Path,
    ask_input: AskInput | None = None,
    input_cache: InputCache | None = None,
    text: str | None = None,
    redactor: Redactor | None = None,
) -> McpConfig:
    """Read, check and expand one ``mcp.json``; any problem is a single ``ConfigError``.

    ``${input:ID}`` of enabled servers is answered from ``input_cache``, else by
    ``ask_input(spec)`` (the answer is cached), else by the input's ``default``. Pass the
    same cache to every load of a run so nothing is asked twice. Disabled servers are
    checked but their inputs are not asked; their values keep the ``${input:ID}`` text.
    Whatever ``ask_input`` raises (the user cancelled, say) propagates unchanged.
    ``text``: the file's text already read (a folder's file is loaded from the bytes that were
    trusted). ``redactor``: one already in use (the app's), given the password answers too.
    """
    path = Path(path)
    templates, inputs = _parse(path, text)
    by_id = {spec.id: spec for spec in inputs}
    cache = input_cache if input_cache is not None else InputCache()
    expander = Expander(path, workspace_folder, by_id, cache, ask_input)
    base_dir = path.resolve().parent
    servers = {name: _expand_server(expander, *entry, base_dir) for name, entry in templates.items()}
    config = McpConfig(path=path, source=source, servers=servers, inputs=inputs)
    in_urls = {
        key: value for name, server in servers.items() for key, value in url_secrets(server.url or "", name).items()
    }
    secrets = {**expander.secrets, **in_urls}  # password answers, and credentials in a url
    if redactor is None:
        config._redactor = Redactor(secrets)
    else:
        for name, secret in secrets.items():
            redactor.add(name, secret)
        config._redactor = redactor
    return config


def planned_servers(path: Path, *, text: str, workspace_folder: Path) -> dict[str, ServerConfig]:
    """Every server of the file as it would start, with ``${input:ID}`` left in place: nothing is
    asked (what a folder's file would run is shown before anything else happens)."""
    path = Path(path)
    templates, inputs = _parse(path, text)
    expander = Expander(path, workspace_folder, {spec.id: spec for spec in inputs}, InputCache())
    base_dir = path.resolve().parent
    return {
        name: _expand_server(expander, template, where, base_dir, resolve_inputs=False)
        for name, (template, where) in templates.items()
    }


def pending_inputs(path: Path, *, input_cache: InputCache | None = None, text: str | None = None) -> list[InputSpec]:
    """The inputs a load of ``path`` would ask for, in order, minus those already cached.

    For an async UI: ask these itself, put the answers in the cache, then load.
    """
    path = Path(path)
    templates, inputs = _parse(path, text)
    cache = input_cache if input_cache is not None else InputCache()
    expander = Expander(path, Path.cwd(), {spec.id: spec for spec in inputs}, cache)
    wanted: dict[str, InputSpec] = {}
    for template, where in templates.values():
        if template.disabled:
            continue
        for suffix, text in _string_fields(template):
            for input_id in expander.input_ids(text, f"{where}.{suffix}"):
                if input_id not in cache:
                    wanted.setdefault(input_id, expander.inputs[input_id])
    return list(wanted.values())


def _parse(path: Path, text: str | None = None) -> tuple[dict[str, tuple[ServerConfig, str]], list[InputSpec]]:
    """The servers as unexpanded, type-checked templates (with their key path) and the inputs."""
    try:
        document = json.loads(strip_jsonc(read_text(path, _WHAT) if text is None else text))
    except json.JSONDecodeError as exc:
        raise from_json_error(path, exc) from None
    if not isinstance(document, dict):
        raise ConfigError(path, None, f"expected a JSON object at the top level, found {kind_of(document)}")
    keys = [key for key in ("servers", "mcpServers") if key in document]
    if not keys:
        problem = 'no "servers" (VS Code style) or "mcpServers" (Claude Desktop style) object at the top level'
        raise ConfigError(path, None, problem)
    if len(keys) == 2:
        raise ConfigError(path, None, 'has both "servers" and "mcpServers"; keep one of them')
    servers_key = keys[0]
    raw_servers = document[servers_key]
    if not isinstance(raw_servers, dict):
        problem = f"expected an object of servers by name, found {kind_of(raw_servers)}"
        raise ConfigError(path, servers_key, problem)
    inputs = _parse_inputs(path, document.get("inputs", []))
    templates = {
        name: (_parse_server(path, servers_key, name, raw), key_path(servers_key, name))
        for name, raw in raw_servers.items()
    }
    return templates, inputs


def _parse_server(path: Path, servers_key: str, name: str, raw: Any) -> ServerConfig:
    """One server as written (variables not yet expanded), with its types and required keys checked."""
    where = key_path(servers_key, name)
    if name == BUILTIN_SERVER:
        raise ConfigError(path, where, f"{name!r} names the app's own tools; give this server another name")
    if not isinstance(raw, dict):
        raise ConfigError(path, where, f"expected an object describing the server, found {kind_of(raw)}")
    data = {**raw, "name": name, "type": _transport(path, where, raw)}
    if "oauth" in raw:
        data["oauth"] = _parse_oauth(path, servers_key, name, raw["oauth"])
    try:
        template = ServerConfig.model_validate(data)
    except ValidationError as exc:
        raise from_validation_error(path, exc, servers_key, name) from None
    if template.type == "stdio" and not (template.command or "").strip():
        problem = 'missing or empty: a stdio server needs "command", the program to start'
        raise ConfigError(path, f"{where}.command", problem)
    if template.type != "stdio" and not (template.url or "").strip():
        problem = f'missing or empty: an {template.type} server needs "url", its address'
        raise ConfigError(path, f"{where}.url", problem)
    _check_oauth(path, where, template)
    return template


def _parse_oauth(path: Path, servers_key: str, name: str, raw: Any) -> OAuthSettings | bool:
    """``oauth``: an object of sign-in settings, or true/false."""
    if isinstance(raw, bool):
        return raw
    if not isinstance(raw, dict):
        problem = f"expected an object ({OAUTH_KEYS}) or false, found {kind_of(raw)}"
        raise ConfigError(path, key_path(servers_key, name, "oauth"), problem)
    try:
        return OAuthSettings.model_validate(raw)
    except ValidationError as exc:
        raise from_validation_error(path, exc, servers_key, name, "oauth") from None


def _check_oauth(path: Path, where: str, template: ServerConfig) -> None:
    """``oauth`` belongs to http and sse servers, and a client secret to a client id."""
    oauth = template.oauth
    if oauth is True:
        return
    if template.type == "stdio":
        raise ConfigError(path, f"{where}.oauth", "only http and sse servers sign in with OAuth; remove it")
    if isinstance(oauth, OAuthSettings):
        problem = _oauth_problem(oauth)
        if problem is not None:
            raise ConfigError(path, f"{where}.oauth.{problem[0]}", problem[1])


OAUTH_KEYS = "clientId, clientSecret, tokenEndpointAuthMethod, clientMetadataUrl, scope, callbackPort"


def _oauth_problem(oauth: OAuthSettings) -> tuple[str, str] | None:
    """The key of ``oauth`` that does not fit the others, and why."""
    if oauth.client_secret is not None and not oauth.client_id:
        return (
            "clientSecret",
            'a client secret needs its client: add "clientId" (the id the authorization server gave you)',
        )
    method = oauth.token_endpoint_auth_method
    if method is not None and not oauth.client_id:
        return "tokenEndpointAuthMethod", 'it is for a client registered beforehand: add "clientId"'
    if method in ("client_secret_basic", "client_secret_post") and not oauth.client_secret:
        return "tokenEndpointAuthMethod", f'{method} sends the client secret: add "clientSecret"'
    if method == "none" and oauth.client_secret:
        return (
            "tokenEndpointAuthMethod",
            'none sends no client secret: remove "clientSecret", or choose client_secret_basic',
        )
    url = urlparse(oauth.client_metadata_url or "")
    if oauth.client_metadata_url is not None and (url.scheme != "https" or not url.netloc or url.path in ("", "/")):
        return "clientMetadataUrl", (
            "expected the https address of your client metadata document, with a path "
            f"(like https://example.com/mcp-chat-tui.json), found {oauth.client_metadata_url!r}"
        )
    return None


def _parse_inputs(path: Path, raw_inputs: Any) -> list[InputSpec]:
    if not isinstance(raw_inputs, list):
        raise ConfigError(path, "inputs", f"expected a list of inputs, found {kind_of(raw_inputs)}")
    inputs: list[InputSpec] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_inputs):
        if not isinstance(raw, dict):
            raise ConfigError(path, key_path("inputs", index), f"expected an object, found {kind_of(raw)}")
        try:
            spec = InputSpec.model_validate(raw)
        except ValidationError as exc:
            raise from_validation_error(path, exc, "inputs", index) from None
        if spec.id in seen:
            raise ConfigError(path, key_path("inputs", index, "id"), f"input id `{spec.id}` is declared twice")
        seen.add(spec.id)
        inputs.append(spec)
    return inputs


def _transport(path: Path, where: str, raw: dict[str, Any]) -> Any:
    """The server's ``type``, inferred from ``command`` / ``url`` when the file gives none."""
    if "type" in raw:
        return raw["type"]
    if "command" in raw and "url" in raw:
        problem = 'has both "command" and "url"; add "type": "stdio" or "http" to say which'
        raise ConfigError(path, where, problem)
    if "command" in raw:
        return "stdio"
    if "url" in raw:
        return "http"
    raise ConfigError(path, where, 'needs "command" (a stdio server) or "url" (an http server)')


def _string_fields(server: ServerConfig) -> Iterator[tuple[str, str]]:
    """Every string of a server that variables are expanded in, with its key below the server."""
    if server.command is not None:
        yield "command", server.command
    for index, arg in enumerate(server.args):
        yield f"args[{index}]", arg
    for key, value in server.env.items():
        yield f"env.{key}", value
    if server.env_file is not None:
        yield "envFile", str(server.env_file)
    if server.cwd is not None:
        yield "cwd", str(server.cwd)
    if server.url is not None:
        yield "url", server.url
    for key, value in server.headers.items():
        yield f"headers.{key}", value
    if isinstance(server.oauth, OAuthSettings):
        for key in ("clientId", "clientSecret", "scope"):
            value = getattr(server.oauth, _OAUTH_FIELDS[key])
            if value is not None:
                yield f"oauth.{key}", value


_OAUTH_FIELDS = {"clientId": "client_id", "clientSecret": "client_secret", "scope": "scope"}


def _expand_server(
    expander: Expander, template: ServerConfig, where: str, base_dir: Path, *, resolve_inputs: bool = True
) -> ServerConfig:
    """The server with every variable expanded, its paths made absolute, and its display form."""
    resolve = resolve_inputs and not template.disabled
    pairs = {
        suffix: expander.expand(text, f"{where}.{suffix}", resolve_inputs=resolve)
        for suffix, text in _string_fields(template)
    }
    values = {suffix: pair[0] for suffix, pair in pairs.items()}
    shown = {suffix: pair[1] for suffix, pair in pairs.items()}
    updates: dict[str, Any] = {}
    display: dict[str, Any] = {}
    for target, pick in ((updates, values), (display, shown)):
        target["command"] = pick.get("command")
        target["args"] = [pick[f"args[{index}]"] for index in range(len(template.args))]
        target["env"] = {key: pick[f"env.{key}"] for key in template.env}
        target["env_file"] = _path(pick.get("envFile"), base_dir)
        target["cwd"] = _path(pick.get("cwd"), base_dir)
        target["url"] = pick.get("url")
        target["headers"] = {key: pick[f"headers.{key}"] for key in template.headers}
        if isinstance(template.oauth, OAuthSettings):
            changed = {field: pick[f"oauth.{key}"] for key, field in _OAUTH_FIELDS.items() if f"oauth.{key}" in pick}
            target["oauth"] = template.oauth.model_copy(update=changed)
    server = template.model_copy(update=updates)
    server._display = display
    if resolve:
        _check_expanded(expander.path, where, server)
    return server


def _path(text: str | None, base_dir: Path) -> Path | None:
    if not text:
        return None
    path = Path(text).expanduser()
    return path if path.is_absolute() else base_dir / path


def _check_expanded(path: Path, where: str, server: ServerConfig) -> None:
    """What can only be checked once variables have values. Messages show no values."""
    if server.type == "stdio" and not (server.command or "").strip():
        raise ConfigError(path, f"{where}.command", "is empty once its variables are expanded")
    if server.type != "stdio":
        parts = urlparse(server.url or "")
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(path, f"{where}.url", "expected an http:// or https:// URL")
    if server.env_file is not None and not server.env_file.is_file():
        raise ConfigError(path, f"{where}.envFile", f"no such file: {server._shown('env_file')}")


def strip_jsonc(text: str) -> str:
    """JSONC to JSON: comments and trailing commas become spaces, so lines and columns stay put."""
    out = list(text)
    index, length = 0, len(text)
    in_string = False
    pending_comma: int | None = None
    while index < length:
        char = text[index]
        if in_string:
            if char == "\\":
                index += 2
                continue
            in_string = char != '"'
        elif char == '"':
            in_string, pending_comma = True, None
        elif text.startswith("//", index) or text.startswith("/*", index):
            if text[index + 1] == "/":
                end = text.find("\n", index)
                end = length if end < 0 else end
            else:
                end = text.find("*/", index + 2)
                if end < 0:  # unclosed: left for the JSON parser to report here
                    break
                end += 2
            for blank in range(index, end):
                if out[blank] not in "\r\n":
                    out[blank] = " "
            index = end
            continue
        elif char == ",":
            pending_comma = index
        elif char in "}]":
            if pending_comma is not None:
                out[pending_comma] = " "
            pending_comma = None
        elif not char.isspace():
            pending_comma = None
        index += 1
    return "".join(out)
