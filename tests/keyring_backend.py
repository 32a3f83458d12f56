"""A keyring backend for tests: a JSON file named by ``MCT_TEST_KEYRING`` (each test's own temp
folder), so no test reads or writes the user's keyring. conftest.py installs it for the test
process and, through ``PYTHON_KEYRING_BACKEND``, for every process a test starts."""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class FileKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    @property
    def path(self) -> Path:
        return Path(os.environ["MCT_TEST_KEYRING"])

    def _read(self) -> dict[str, str]:
        try:
            return json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._read().get(f"{service}\n{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        entries = self._read()
        entries[f"{service}\n{username}"] = password
        self.path.write_text(json.dumps(entries))

    def delete_password(self, service: str, username: str) -> None:
        entries = self._read()
        if entries.pop(f"{service}\n{username}", None) is None:
            raise PasswordDeleteError(username)
        self.path.write_text(json.dumps(entries))

    def entries(self) -> dict[str, str]:
        return self._read()
