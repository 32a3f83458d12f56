"""The README's commands, .ci/run, and what an installed (non-editable) package carries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parent.parent


def readme_test_command() -> str:
    extract = subprocess.run(
        [
            "awk",
            "/<!-- test-command -->/ {found=1; next} found && /^```/ {if (inside) exit; inside=1; next} "
            "inside {print; exit}",
            str(TOP / "README.md"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return extract.stdout.strip()


def test_ci_runs_the_readme_test_command():
    """One command: install, then scripts/check.py's steps, which run pytest among them."""
    command = readme_test_command()
    assert ".[dev]" in command and command.endswith("scripts/check.py"), command
    steps = (TOP / "scripts" / "check.py").read_text()
    assert '"-m", "pytest"' in steps and '"ruff"' in steps and '"mypy"' in steps
    ci = (TOP / ".ci" / "run").read_text()
    assert "<!-- test-command -->" in ci, ".ci/run must take its command from the README"


def test_readme_install_command_runs_the_demo():
    readme = (TOP / "README.md").read_text()
    # light: the demo's 1M-parameter model needs no fast BLAS ([mkl] is the choice made below it, docs/cpu.md)
    assert "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/mcp-chat-tui --demo" in readme


PACKAGE = "mcp_chat_tui"
# Named here as well as found in the checkout, so losing one from the repository fails too.
THEMES = {"mcp-dark.toml", "mcp-light.toml", "mcp-solarized.toml"}
DEMO_MODEL = {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"}


def package_data_in_checkout() -> set[str]:
    """Every non-Python file of the package in this checkout (styles, demo model, corpus), as archive paths."""
    return {
        path.relative_to(TOP).as_posix()
        for path in (TOP / PACKAGE).rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts
    }


def bundled_in_wheel() -> set[str]:
    """Where the wheel must carry the top-level ``mcp.json`` and ``themes/`` (see ``core.paths.bundled_path``)."""
    themes = {path.name for path in (TOP / "themes").glob("*.toml")} | THEMES
    return {f"{PACKAGE}/_bundled/mcp.json"} | {f"{PACKAGE}/_bundled/themes/{name}" for name in themes}


def required_package_data() -> set[str]:
    return (
        package_data_in_checkout()
        | {f"{PACKAGE}/demo/corpus.json", f"{PACKAGE}/ui/app.tcss"}
        | {f"{PACKAGE}/demo/model/{name}" for name in DEMO_MODEL}
    )


def assert_holds(archive: Path, names: set[str], expected: set[str]) -> None:
    lost = sorted(expected - names)
    assert not lost, f"{archive.name} lacks {lost}"


def build(*command: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}"


# The three tests below build the package (a minute of CPU): CI's packaging step (scripts/check_package.py)
# checks the same with one build, so scripts/check.py's test step leaves them out (marker ``step``).
@pytest.mark.step
def test_wheel_carries_the_bundled_files(tmp_path):
    """``pip install .`` builds the wheel from the checkout: it holds the package data and the bundled files."""
    build(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(TOP))
    [wheel] = tmp_path.glob("mcp_chat_tui-*.whl")
    assert_holds(wheel, set(zipfile.ZipFile(wheel).namelist()), bundled_in_wheel() | required_package_data())


@pytest.mark.step
def test_sdist_and_the_wheel_built_from_it_carry_the_bundled_files(tmp_path):
    """The sdist holds the top-level files, so a wheel built from it (as pip does from PyPI) holds them too."""
    build(sys.executable, "-m", "build", "-o", str(tmp_path), str(TOP))
    [sdist] = tmp_path.glob("mcp_chat_tui-*.tar.gz")
    root = sdist.name.removesuffix(".tar.gz")
    sdist_names = {name.removeprefix(root + "/") for name in tarfile.open(sdist).getnames()}
    top_level = {"mcp.json", "README.md", "pyproject.toml"} | {f"themes/{name}" for name in THEMES}
    assert_holds(sdist, sdist_names, top_level | required_package_data())
    [wheel] = tmp_path.glob("mcp_chat_tui-*.whl")
    assert_holds(wheel, set(zipfile.ZipFile(wheel).namelist()), bundled_in_wheel() | required_package_data())


@pytest.mark.step
def test_an_installed_wheel_finds_its_bundled_files(tmp_path):
    """Not an editable checkout: the installed code looks for its files inside the installed package."""
    build(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "wheel"), str(TOP))
    [wheel] = (tmp_path / "wheel").glob("mcp_chat_tui-*.whl")
    check_installed_wheel(wheel, tmp_path)


def check_installed_wheel(wheel: Path, tmp_path: Path) -> None:
    """Install ``wheel`` into a folder of ``tmp_path`` and check where the installed code finds its files."""
    target = tmp_path / "site"
    build(sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel))
    probe = (
        "import json; from mcp_chat_tui.core.paths import bundled_path, package_path\n"
        "print(json.dumps([str(bundled_path('mcp.json')), str(bundled_path('themes')), str(package_path('demo', 'model'))]))"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(target)},
        check=True,
    )
    mcp_json, themes, model = map(Path, json.loads(found.stdout))
    installed = target / PACKAGE
    assert mcp_json == installed / "_bundled" / "mcp.json" and mcp_json.is_file()
    assert themes == installed / "_bundled" / "themes" and THEMES <= {path.name for path in themes.iterdir()}
    assert model == installed / "demo" / "model" and DEMO_MODEL <= {path.name for path in model.iterdir()}
