"""Test-wide setup: every test gets its own user directories, so nothing touches the real ones."""

from __future__ import annotations

import inspect
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
    for kind in ("CONFIG", "DATA", "LOG", "CACHE"):
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


@pytest.fixture
def snap_compare(snap_compare):
    """pytest-textual-snapshot's ``snap_compare``, taking its screenshot once every table has settled:
    a DataTable measures its columns again only when idle, so on a loaded machine a screenshot taken
    right after a cell changed (a server from busy back to ready) showed the old widths."""

    def compare(app, press=(), terminal_size=(80, 24), run_before=None):
        async def settled(pilot) -> None:
            if run_before is not None:
                result = run_before(pilot)
                if inspect.isawaitable(result):
                    await result
            await tables_settled(pilot)

        return snap_compare(app, press=press, terminal_size=terminal_size, run_before=settled)

    return compare


async def tables_settled(pilot, limit: int = 500) -> None:
    """Wait until no DataTable on any screen has cells or sizes left to measure."""
    from textual.widgets import DataTable

    for _ in range(limit):
        tables = [table for screen in pilot.app.screen_stack for table in screen.query(DataTable)]
        if not any(table._updated_cells or table._require_update_dimensions for table in tables):
            return
        await pilot.pause(0.01)
    raise AssertionError("the tables were still measuring their columns")
