"""ruff's lint and format checks pass on the whole tree (settings in pyproject.toml's ``[tool.ruff]``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("check", [["check", "."], ["format", "--check", "."]], ids=["lint", "format"])
def test_ruff_passes(check: list[str]) -> None:
    run = subprocess.run([sys.executable, "-m", "ruff", *check], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"ruff {' '.join(check)} found problems:\n{run.stdout}{run.stderr}"
