"""mypy passes on the packages ``[tool.mypy]`` in pyproject.toml names (core, config, servers, agent,
conversation, ui), and a type error in the ui fails it as one anywhere else does."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def mypy(*arguments: str, cache: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The types step's command (scripts/check.py), with ``arguments`` added."""
    where = ["--cache-dir", str(cache)] if cache is not None else []
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"), *where, *arguments],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_mypy_passes_on_the_checked_packages() -> None:
    # The cache stays in .mypy_cache (git-ignored): a first run takes about a minute, later ones seconds.
    run = mypy()
    assert run.returncode == 0, f"mypy found problems (exit {run.returncode}):\n{run.stdout}{run.stderr}"


def test_a_type_error_in_a_part_of_the_app_fails_the_types_step(tmp_path: Path) -> None:
    """ui/startup.py, one of the helpers ``ChatApp`` composes, read with a method added that misuses
    what the helper gets from the app (its ``StartUpHost``'s ``model_label`` is a str): mypy reports it there."""
    source = REPO / "mcp_chat_tui" / "ui" / "startup.py"
    broken = tmp_path / "startup.py"
    added = (
        "\n\nclass Misused(StartUp):\n    def label_length(self) -> int:\n        return self.host.model_label + 1\n"
    )
    broken.write_text(source.read_text(encoding="utf-8") + added, encoding="utf-8")
    cache = tmp_path / "cache"  # a copy: this run's view of startup.py stays out of the shared cache
    if (REPO / ".mypy_cache").is_dir():
        shutil.copytree(REPO / ".mypy_cache", cache)
    run = mypy("--shadow-file", str(source), str(broken), cache=cache)
    assert run.returncode == 1, f"mypy passed a type error in ui/startup.py:\n{run.stdout}{run.stderr}"
    assert "mcp_chat_tui/ui/startup.py" in run.stdout and "[operator]" in run.stdout, run.stdout


def test_what_a_helper_declares_it_uses_of_the_app_is_checked_against_chat_app(tmp_path: Path) -> None:
    """ui/turns.py's ``TurnHost`` (what ``TurnQueue`` uses of the app) read with a member the app
    lacks: mypy reports it where ``ChatApp`` builds the helper, in ui/app.py, naming the member."""
    source = REPO / "mcp_chat_tui" / "ui" / "turns.py"
    text = source.read_text(encoding="utf-8")
    declared = "    def call_store(self) -> CallStore: ...\n"
    assert declared in text
    broken = tmp_path / "turns.py"
    broken.write_text(
        text.replace(declared, declared + "\n    def not_on_the_app(self) -> None: ...\n"), encoding="utf-8"
    )
    cache = tmp_path / "cache"  # a copy: this run's view of turns.py stays out of the shared cache
    if (REPO / ".mypy_cache").is_dir():
        shutil.copytree(REPO / ".mypy_cache", cache)
    run = mypy("--shadow-file", str(source), str(broken), cache=cache)
    assert run.returncode == 1, f"mypy passed an app that lacks a member of TurnHost:\n{run.stdout}{run.stderr}"
    assert "mcp_chat_tui/ui/app.py" in run.stdout and "[arg-type]" in run.stdout, run.stdout
    assert "not_on_the_app" in run.stdout, run.stdout
