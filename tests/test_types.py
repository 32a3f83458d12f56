"""mypy passes on the packages ``[tool.mypy]`` in pyproject.toml names (core, config, servers, agent)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_mypy_passes_on_the_checked_packages() -> None:
    # The cache stays in .mypy_cache (git-ignored): a first run takes about a minute, later ones seconds.
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, f"mypy found problems (exit {run.returncode}):\n{run.stdout}{run.stderr}"
