"""The README's commands, .ci/run, and what an installed (non-editable) package carries."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent


def readme_test_command() -> str:
    extract = subprocess.run(
        ["awk", "/<!-- test-command -->/ {found=1; next} found && /^```/ {if (inside) exit; inside=1; next} "
                "inside {print; exit}", str(TOP / "README.md")],
        capture_output=True, text=True, check=True,
    )
    return extract.stdout.strip()


def test_ci_runs_the_readme_test_command():
    command = readme_test_command()
    assert "pytest" in command and '.[dev]' in command
    ci = (TOP / ".ci" / "run").read_text()
    assert "<!-- test-command -->" in ci, ".ci/run must take its command from the README"


def test_readme_install_command_runs_the_demo():
    readme = (TOP / "README.md").read_text()
    assert "pip install . && .venv/bin/mcp-chat-tui --demo" in readme


def test_wheel_carries_the_bundled_files(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(TOP)],
        check=True, capture_output=True, timeout=300,
    )
    [wheel] = tmp_path.glob("mcp_chat_tui-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "mcp_chat_tui/_bundled/mcp.json" in names
    themes = {name for name in names if name.startswith("mcp_chat_tui/_bundled/themes/")}
    assert {"mcp_chat_tui/_bundled/themes/mcp-dark.toml", "mcp_chat_tui/_bundled/themes/mcp-light.toml"} <= themes
    assert "mcp_chat_tui/demo/corpus.json" in names
    model_files = {name.rsplit("/", 1)[1] for name in names if name.startswith("mcp_chat_tui/demo/model/")}
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= model_files
