"""Test-wide setup: every test gets its own user directories, so nothing touches the real ones."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path_factory, monkeypatch):
    base = tmp_path_factory.mktemp("user")
    for kind in ("CONFIG", "DATA", "LOG"):
        folder = base / kind.lower()
        monkeypatch.setenv(f"MCP_CHAT_TUI_{kind}_DIR", str(folder))
    monkeypatch.delenv("MCP_CHAT_TUI_CONFIG", raising=False)
    return base
