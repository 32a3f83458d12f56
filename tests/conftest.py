"""Test-wide setup: every test gets its own user directories, so nothing touches the real ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_chat_tui.engine.blas import load_blas

load_blas()  # before any test imports mlx.core, as the app's entry point does

from tests.models import build_tiny_model  # noqa: E402


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path_factory, monkeypatch):
    base = tmp_path_factory.mktemp("user")
    for kind in ("CONFIG", "DATA", "LOG"):
        folder = base / kind.lower()
        monkeypatch.setenv(f"MCP_CHAT_TUI_{kind}_DIR", str(folder))
    monkeypatch.delenv("MCP_CHAT_TUI_CONFIG", raising=False)
    return base


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """A random qwen2 model with a tool-calling chat template, built once per test run."""
    return build_tiny_model(tmp_path_factory.getbasetemp() / "tiny-qwen2")
