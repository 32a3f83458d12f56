"""Where sign-in tokens are kept: the system keyring, else a file only its owner can read.

Each HTTP server's record (its tokens, when they expire, the client the app registered and
the authorization server's metadata) is one JSON text, kept under the keyring service
``mcp-chat-tui`` with the server's URL as the user name. Where no keyring backend works
(headless Linux often has none), the records go to ``oauth-tokens.json`` in the app's data
folder, replaced atomically and created with mode 0600; the first time that happens it is
logged and ``notice`` says so.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from mcp_chat_tui.core.files import read_regular, replace_file

log = logging.getLogger(__name__)

KEYRING_SERVICE = "mcp-chat-tui"
TOKEN_FILE_NAME = "oauth-tokens.json"
FILE_MODE = 0o600
MAX_FILE_BYTES = 16 * 1024 * 1024  # a token file larger than this is not read


class VaultError(Exception):
    """A record could not be kept (the message names the file or the keyring, never a token)."""


class TokenVault:
    """Sign-in records by server URL, in the keyring or (where none works) in ``fallback_file``."""

    def __init__(self, fallback_file: Path, *, use_keyring: bool = True) -> None:
        self.fallback_file = fallback_file
        self._keyring_works: bool | None = None if use_keyring else False
        self.notice = ""  # why the file is used, once it is

    @property
    def where(self) -> str:
        """Where records go now, in words for the user."""
        if self._keyring_works is False:
            return f"{self.fallback_file} (readable by you alone)"
        return "the system keyring"

    def load(self, key: str) -> dict[str, Any] | None:
        """The record kept for ``key`` (None: none, or one that is not JSON)."""
        if self._use_keyring():
            try:
                text = _keyring().get_password(KEYRING_SERVICE, key)
            except Exception as exc:  # noqa: BLE001 - any backend failure means: use the file
                self._give_up_keyring(exc)
            else:
                return _record(text)
        return self._read_file().get(key)

    def save(self, key: str, record: dict[str, Any]) -> None:
        """Keep ``record`` for ``key``; raises ``VaultError`` when it cannot be kept anywhere."""
        text = json.dumps(record)
        if self._use_keyring():
            try:
                _keyring().set_password(KEYRING_SERVICE, key, text)
                return
            except Exception as exc:  # noqa: BLE001
                self._give_up_keyring(exc)
        records = self._read_file()
        records[key] = record
        self._write_file(records)

    def forget(self, key: str) -> bool:
        """Remove the record for ``key``; True when there was one."""
        found = False
        if self._use_keyring():
            try:
                keyring = _keyring()
                if keyring.get_password(KEYRING_SERVICE, key) is not None:
                    keyring.delete_password(KEYRING_SERVICE, key)
                    found = True
            except Exception as exc:  # noqa: BLE001
                self._give_up_keyring(exc)
        records = self._read_file() if self.fallback_file.exists() else {}
        if key in records:
            del records[key]
            self._write_file(records)
            found = True
        return found

    # ----- the keyring -----------------------------------------------------------------------

    def _use_keyring(self) -> bool:
        if self._keyring_works is None:
            try:
                from keyring.backends.fail import Keyring as NoKeyring

                backend = _keyring().get_keyring()
                self._keyring_works = not isinstance(backend, NoKeyring)
                reason = "no keyring backend is available"
            except Exception as exc:  # noqa: BLE001
                self._keyring_works, reason = False, f"{type(exc).__name__}: {exc}"
            if not self._keyring_works:
                self._say_file_is_used(reason)
        return bool(self._keyring_works)

    def _give_up_keyring(self, exc: Exception) -> None:
        self._keyring_works = False
        self._say_file_is_used(f"the keyring failed: {type(exc).__name__}: {exc}")

    def _say_file_is_used(self, reason: str) -> None:
        self.notice = f"{reason}; sign-in tokens are kept in {self.fallback_file} (readable by you alone)"
        log.warning("%s", self.notice)

    # ----- the fallback file -----------------------------------------------------------------

    def _read_file(self) -> dict[str, Any]:
        try:
            document = json.loads(read_regular(self.fallback_file, MAX_FILE_BYTES).decode("utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("cannot read %s (%s): its sign-ins are not used", self.fallback_file, type(exc).__name__)
            return {}
        servers = document.get("servers") if isinstance(document, dict) else None
        return {key: value for key, value in (servers or {}).items() if isinstance(value, dict)}

    def _write_file(self, records: dict[str, Any]) -> None:
        """The whole file replaced at once, created 0600 (never readable by others, not even briefly),
        never through a link at its name."""
        path = self.fallback_file
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            replace_file(path, json.dumps({"servers": records}, indent=1).encode("utf-8"), FILE_MODE)
        except OSError as exc:
            raise VaultError(f"cannot write {path}: {exc.strerror or exc}") from None


def _keyring() -> Any:
    import keyring

    return keyring


def _record(text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None
