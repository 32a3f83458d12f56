"""A folder's ``mcp.json``: what it would start, and whether the user trusts it to.

``./mcp.json`` and ``./.vscode/mcp.json`` come with the folder the app starts in (a clone, an
unpacked zip, a shared drive): someone else may have written them, and a stdio server is a program
run as the user. Before such a file starts anything the user is shown what it would run and asked;
a yes is remembered for the file's resolved path and the SHA-256 of its bytes (``TrustStore``), so
a changed file asks again. The bytes that were hashed are the bytes loaded. Nothing of the file is
expanded with the user's answers before the yes: its ``inputs`` are asked only once it is trusted.

The user's own files are never asked about: one named with ``--mcp-config``, the config directory's
``mcp.json`` (also when the working folder's ``mcp.json`` is a link to it) and the bundled one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp_chat_tui.config._errors import MAX_CONFIG_BYTES
from mcp_chat_tui.config.mcp_json import load_mcp_config, pending_inputs, planned_servers
from mcp_chat_tui.config.mcp_models import McpConfig, ServerConfig
from mcp_chat_tui.config.variables import AskInput, InputCache, InputSpec
from mcp_chat_tui.core.errors import ConfigError
from mcp_chat_tui.core.files import TEMPORARY_SUFFIX, read_regular, remove_stale_temporaries
from mcp_chat_tui.core.paths import user_config_dir
from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.core.server_identity import url_without_credentials
from mcp_chat_tui.core.text import counted, visible_controls

log = logging.getLogger(__name__)

FOLDER_SOURCES = frozenset({"./mcp.json", "./.vscode/mcp.json"})  # find_mcp_config's names for a folder's files
TRUST_FILE_NAME = "trusted-mcp-files.json"
_STORE_LIMIT = 4 * 1024 * 1024  # a store larger than this is not one the app wrote


@dataclass(frozen=True)
class FileFingerprint:
    """One version of a file: its resolved path, the SHA-256 of its bytes, and those bytes as text."""

    path: Path
    sha256: str
    text: str


def read_fingerprint(path: Path) -> FileFingerprint:
    """Read ``path`` once: what is hashed is what will be loaded (a regular file, a link to one
    followed, of at most ``MAX_CONFIG_BYTES``: a FIFO or a huge file is refused, not read)."""
    try:
        data = read_regular(path, MAX_CONFIG_BYTES, follow_links=True)
    except FileNotFoundError:
        raise ConfigError(path, None, "no such file (expected an mcp.json file)") from None
    except OSError as exc:
        raise ConfigError(path, None, f"cannot be read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(path, f"byte {exc.start}", "not UTF-8 text") from None
    return FileFingerprint(path.resolve(), hashlib.sha256(data).hexdigest(), text)


@dataclass(frozen=True)
class PlannedServer:
    """One server a folder's file would start, in the words the question shows."""

    name: str
    transport: str
    details: tuple[str, ...]  # "runs: …", "in: …", "env: …", "env file: …" / "connects to: …", "headers: …"


def plan_server(server: ServerConfig, workspace_folder: Path) -> PlannedServer:
    """What starting ``server`` does: the command line, folder and variable names of a stdio
    server, the address (without credentials) and header names of an http or sse one. Values of
    ``env`` and ``headers`` are not shown (they may be tokens); ``${input:ID}`` is shown as written."""
    if server.type == "stdio":
        details = [f"runs: {server.display_command_line()}", f"in: {server.cwd or workspace_folder}"]
        if server.env:
            details.append(f"env: {', '.join(server.env)}")
        if server.env_file is not None:
            details.append(f"env file: {server.env_file} (its variables are read when the server starts)")
    else:
        details = [f"connects to: {url_without_credentials(server.display_url() or '')}"]
        if server.headers:
            details.append(f"headers: {', '.join(server.headers)}")
    return PlannedServer(server.name, server.type, tuple(details))


@dataclass(frozen=True)
class FolderFile:
    """A folder's ``mcp.json`` as it was read: where it was found, its fingerprint, and the servers
    it would start (``servers``) or list without starting (``disabled``)."""

    path: Path
    source: str
    fingerprint: FileFingerprint
    workspace_folder: Path
    servers: tuple[PlannedServer, ...]
    disabled: tuple[str, ...]

    def describe(self) -> list[str]:
        """The question's body: the file, then each server it would start and how."""
        count = len(self.servers)
        lines = [f"{self.source} ({self.fingerprint.path}) would start {count} server{'s' * (count != 1)}:"]
        for server in self.servers:
            lines.append(f"  {server.name} ({server.transport})")
            lines.extend(f"    {detail}" for detail in server.details)
        if self.disabled:
            lines.append(f"  and lists {', '.join(self.disabled)} (disabled: not started)")
        return [visible_controls(line) for line in lines]

    def not_trusted_note(self) -> str:
        """What the app says when it runs without the file's servers."""
        return (
            f"{self.source} not trusted: running without its {counted(len(self.servers), 'server')}; "
            "start again in this folder to be asked again, or pass --trust-folder"
        )

    def pending_inputs(self, input_cache: InputCache) -> list[InputSpec]:
        """The inputs loading it would ask for (asked only once it is trusted)."""
        return pending_inputs(self.path, input_cache=input_cache, text=self.fingerprint.text)

    def load(
        self,
        *,
        ask_input: AskInput | None = None,
        input_cache: InputCache | None = None,
        redactor: Redactor | None = None,
    ) -> McpConfig:
        """The file's configuration, from the bytes that were fingerprinted (and trusted)."""
        return load_mcp_config(
            self.path,
            source=self.source,
            workspace_folder=self.workspace_folder,
            ask_input=ask_input,
            input_cache=input_cache,
            text=self.fingerprint.text,
            redactor=redactor,
        )

    def without_servers(self) -> McpConfig:
        """The configuration when the file is not trusted: no server at all."""
        return McpConfig(path=self.path, source=f"{self.source}, not trusted", servers={})


def folder_file(path: Path, source: str, workspace_folder: Path) -> FolderFile | None:
    """``path`` as a folder's file, read and planned; None when it is the user's own (named with
    ``--mcp-config``, the config directory's, or the bundled one)."""
    if source not in FOLDER_SOURCES:
        return None
    fingerprint = read_fingerprint(path)
    if fingerprint.path == (user_config_dir() / "mcp.json").resolve():
        return None  # the working folder is the config directory, or links to its file
    servers = planned_servers(path, text=fingerprint.text, workspace_folder=workspace_folder)
    return FolderFile(
        path=path,
        source=source,
        fingerprint=fingerprint,
        workspace_folder=workspace_folder,
        servers=tuple(plan_server(s, workspace_folder) for s in servers.values() if not s.disabled),
        disabled=tuple(s.name for s in servers.values() if s.disabled),
    )


class TrustStore:
    """The folder files the user trusted: ``{"version": 1, "files": {PATH: {"sha256", "trusted"}}}``
    in ``trusted-mcp-files.json`` in the config directory. One entry per resolved path (the version
    trusted last). Written atomically to a new file renamed over the old one, so a link planted at
    its name is replaced, never written through; read without following a link."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else user_config_dir() / TRUST_FILE_NAME

    def trusts(self, fingerprint: FileFingerprint) -> bool:
        entry = self._entries().get(str(fingerprint.path))
        return isinstance(entry, dict) and entry.get("sha256") == fingerprint.sha256

    def remember(self, fingerprint: FileFingerprint) -> None:
        """Trust this version of the file from now on; raises ``ConfigError`` when the store cannot
        be written (the caller says the yes was for this run only)."""
        entries = self._entries()
        entries[str(fingerprint.path)] = {
            "sha256": fingerprint.sha256,
            "trusted": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        self._write({"version": 1, "files": entries})

    def _entries(self) -> dict[str, Any]:
        """The entries on disk now; a missing, linked or unreadable store trusts nothing."""
        try:
            handle = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return {}
        except OSError as exc:
            log.warning("trust store %s not read: %s", self.path, exc.strerror or exc)
            return {}
        try:
            with os.fdopen(handle, "rb") as stream:
                if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                    raise ValueError("not a regular file")
                raw = stream.read(_STORE_LIMIT + 1)
            if len(raw) > _STORE_LIMIT:
                raise ValueError(f"larger than {_STORE_LIMIT} bytes")
            document = json.loads(raw)
            files = document.get("files") if isinstance(document, dict) else None
            if not isinstance(files, dict):
                raise ValueError('no "files" object')
            return files
        except (OSError, ValueError, RecursionError) as exc:
            log.warning("trust store %s not read: %s", self.path, exc)
            return {}

    def _write(self, document: dict[str, Any]) -> None:
        data = (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
            remove_stale_temporaries(self.path)  # a killed write's copy (core/files.py)
            # mkstemp: O_CREAT | O_EXCL with an unpredictable name, mode 0600; the pid as replace_file names it
            handle, temporary = tempfile.mkstemp(
                dir=folder, prefix=f".{self.path.name}.{os.getpid()}.", suffix=TEMPORARY_SUFFIX
            )
        except OSError as exc:
            raise ConfigError(self.path, None, f"cannot be written: {exc.strerror or exc}") from None
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, self.path)
        except OSError as exc:
            Path(temporary).unlink(missing_ok=True)
            raise ConfigError(self.path, None, f"cannot be written: {exc.strerror or exc}") from None
