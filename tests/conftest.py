"""Test-wide setup: every test gets its own user directories, so nothing touches the real ones."""

from __future__ import annotations

import os
from pathlib import Path

import keyring
import pytest

from mcp_chat_tui.engine.blas import load_blas

load_blas()  # before any test imports mlx.core, as the app's entry point does

from tests.keyring_backend import FileKeyring  # noqa: E402
from tests.models import build_tiny_model  # noqa: E402


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path_factory, monkeypatch):
    base = tmp_path_factory.mktemp("user")
    for kind in ("CONFIG", "DATA", "LOG"):
        folder = base / kind.lower()
        monkeypatch.setenv(f"MCP_CHAT_TUI_{kind}_DIR", str(folder))
    monkeypatch.delenv("MCP_CHAT_TUI_CONFIG", raising=False)
    # Sign-in tokens go to a keyring file of this test's own, in this process and in those it starts.
    monkeypatch.setenv("MCT_TEST_KEYRING", str(base / "keyring.json"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "tests.keyring_backend.FileKeyring")
    root = str(Path(__file__).resolve().parent.parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    keyring.set_keyring(FileKeyring())
    return base


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """A random qwen2 model with a tool-calling chat template, built once per test run."""
    return build_tiny_model(tmp_path_factory.getbasetemp() / "tiny-qwen2")
