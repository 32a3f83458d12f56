"""No dead code in the package: vulture, with pyproject.toml's ``[tool.vulture]`` settings, finds no
function, class, method, property, constant or field that nothing in the package uses (code only the
tests call counts as dead; what a library calls by name is listed in tests/dead_code_whitelist.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def vulture(*paths: str) -> subprocess.CompletedProcess[str]:
    """vulture as the project runs it (``[tool.vulture]``), on its own paths or on ``paths``."""
    return subprocess.run(
        [sys.executable, "-m", "vulture", *paths], cwd=REPO, capture_output=True, text=True, timeout=300
    )


@pytest.mark.step  # scripts/check.py's dead-code step runs vulture itself
def test_the_package_has_no_dead_code() -> None:
    run = vulture()
    assert run.returncode == 0, (
        "vulture found code nothing uses: delete it (and the tests that only test it), or, when a library "
        f"calls it by name, list it in tests/dead_code_whitelist.py with who calls it:\n{run.stdout}{run.stderr}"
    )


def test_the_check_finds_a_function_nothing_calls(tmp_path: Path) -> None:
    """The settings catch dead code: a module with a function nothing calls, checked beside the package."""
    module = tmp_path / "forgotten.py"
    module.write_text('def never_called() -> str:\n    return "dead"\n\n\ndef on_mount() -> None:\n    pass\n')
    run = vulture("mcp_chat_tui", "tests/dead_code_whitelist.py", str(module))
    assert run.returncode == 3 and "never_called" in run.stdout
    assert "on_mount" not in run.stdout  # Textual's handlers are called by name
