"""Test-wide setup: every test gets its own user directories, so nothing touches the real ones."""

from __future__ import annotations

import compileall
import inspect
import os
import sys
from pathlib import Path

import keyring
import pytest
from hypothesis import settings

from mcp_chat_tui.engine.blas import load_blas

load_blas()  # before any test imports mlx.core, as the app's entry point does

from tests.keyring_backend import FileKeyring  # noqa: E402
from tests.models import build_tiny_model  # noqa: E402

# Hypothesis: the full count of examples in CI (.ci/run exports HYPOTHESIS_PROFILE=ci), a tenth of it
# in the everyday loop. A test that asks for more examples than the default says so through
# tests.helpers.examples(n), which scales n the same way.
pytest_plugins = ["tests.cost_report"]  # each test's CPU and wall time, when MCT_TEST_COST asks for them

settings.register_profile("ci", max_examples=100)
settings.register_profile("dev", max_examples=10)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


# pytest writes the test modules it rewrites for its assertions to tests/__pycache__ only when Python may
# write bytecode; this machine sets PYTHONDONTWRITEBYTECODE, so each xdist worker parsed, rewrote and
# compiled all 204 test modules again in every run (collection 7.4 s of CPU a worker; 3.0 s from the
# cache). The conftest is imported before any test module, so from here on they are cached.
sys.dont_write_bytecode = False


def pytest_configure(config):
    """The checkout's bytecode written once, in the run's first process (not in each xdist worker): with
    ``PYTHONDONTWRITEBYTECODE`` set Python writes none, and each CLI or server process a test starts would
    compile the app's modules again (0.3-0.45 s of CPU a start). Up to date, this only reads the times."""
    if not hasattr(config, "workerinput"):
        top = Path(__file__).resolve().parent.parent
        for folder in ("mcp_chat_tui", "tests"):  # the servers and the scripted endpoint tests start too
            compileall.compile_dir(top / folder, quiet=1)


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config):
    """``-n auto`` (pyproject.toml's addopts): two workers a core, as the tests wait on apps, servers and
    processes for about a third of their time (the everyday loop on 2 cores, quiet: 1.2 cores busy with
    2 workers, 391 s; 271 s with 4, the same CPU). ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides when set;
    ``--maxprocesses`` caps it."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    return 2 * len(os.sched_getaffinity(0))


# Files whose tests run the CLI, a real model or a tool (mypy, ruff, pip) as processes, each costing
# seconds of CPU: marked slow here, in one place, so `pytest -m "not slow"` is the everyday loop and
# the files themselves need no edit. CI runs everything.
SLOW_FILES = {
    # tools and packaging run as tests
    "test_lint.py", "test_types.py", "test_packaging.py", "test_imports.py",
    # a real model, mlx_lm.server or llama.cpp
    "test_demo_model.py", "test_sampling_model.py", "test_ui_real_model.py", "test_whole_turn.py",
    "test_gguf.py", "test_llama_engine.py", "test_real_replies.py", "test_context_length.py",
    # the CLI as a process (its output, exit codes, signals, terminals)
    "test_cli.py", "test_oneshot.py", "test_oneshot_terminal.py", "test_plain.py", "test_prompt_cache_cli.py",
    "test_exit_signals.py", "test_server_processes.py", "test_tui_exit.py", "test_quick_exit.py",
    "test_catalog_cli.py", "test_oauth_cli.py", "test_notifications_cli.py", "test_input_bytes.py",
    "test_transcript_save.py", "test_transcript_files.py", "test_url_credentials.py", "test_unsaved_start.py",
    "test_call_lifecycle.py", "test_app_edge_cases.py", "test_any_text_saved.py", "test_floods_apps.py",
    "test_context_budget_resume.py",
}  # fmt: skip


# Files whose checks scripts/check.py runs as steps of their own (ruff, mypy) rather than among the
# tests: marked ``step`` (as are tests/test_packaging.py's builds), so its test step leaves them out.
STEP_FILES = {"test_lint.py", "test_types.py"}


# Files whose tests share a module- or session-scoped fixture of their own (a model built or loaded,
# a model server started): under `--dist loadgroup` (pyproject.toml) each stays on one worker; the
# tests of every other file are shared out one by one, so no large file runs alone at the end.
GROUPED_FILES = {
    "test_demo_model.py", "test_llama_engine.py", "test_remote_engine.py", "test_whole_turn.py",
    "test_cpu_compute.py", "test_kv_draft.py", "test_mlx_engine.py", "test_special_tokens.py",
    "test_template_messages.py", "test_text_tools.py",
}  # fmt: skip


def slow_tests() -> set[str]:
    """The tests tests/slow_tests.txt names (scripts/slow_tests.py chose them by their cost)."""
    listed = Path(__file__).with_name("slow_tests.txt")
    lines = listed.read_text(encoding="utf-8").splitlines() if listed.exists() else []
    return {line.split("\t", 1)[0] for line in lines if line and not line.startswith("#")}


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items):
    slow = slow_tests()
    for item in items:
        if item.path.name in SLOW_FILES or item.nodeid in slow:
            item.add_marker(pytest.mark.slow)
        if item.path.name in STEP_FILES:
            item.add_marker(pytest.mark.step)
        if item.path.name in GROUPED_FILES:
            item.add_marker(pytest.mark.xdist_group(item.path.name))


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
