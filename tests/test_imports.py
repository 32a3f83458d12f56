"""The package's own imports form no circle, and they keep to the layers of docs/architecture.md.

The graph is built from the source with ``ast``: every ``import`` of a module of ``mcp_chat_tui``,
at module level, under ``if TYPE_CHECKING:`` and inside functions alike (an import deferred into a
function still ties the two modules together; deferring it only hides the circle from Python).
The layers are pyproject.toml's ``[tool.importlinter]`` contracts, checked by ``lint-imports``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.source_ast import parse

PACKAGE = Path(__file__).resolve().parent.parent / "mcp_chat_tui"


def module_files(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its ``__init__.py``)."""
    modules = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imported_names(module: str, path: Path) -> set[str]:
    """The dotted names ``module`` imports anywhere in its source (``from a import b`` gives a and a.b)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            names.add(source)
            names.update(f"{source}.{alias.name}" for alias in node.names)
    return names


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports."""
    modules = module_files(package)
    return {
        module: {name for name in imported_names(module, path) if name in modules and name != module}
        for module, path in modules.items()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as ``[a, b, ..., a]``, or None when the graph has none."""
    visiting: list[str] = []
    done: set[str] = set()

    def visit(module: str) -> list[str] | None:
        if module in visiting:
            return visiting[visiting.index(module) :] + [module]
        if module in done:
            return None
        visiting.append(module)
        for target in sorted(graph[module]):
            cycle = visit(target)
            if cycle:
                return cycle
        visiting.pop()
        done.add(module)
        return None

    for module in sorted(graph):
        cycle = visit(module)
        if cycle:
            return cycle
    return None


def test_no_module_of_the_package_is_part_of_an_import_cycle():
    graph = import_graph()
    assert "mcp_chat_tui.cli.main" in graph and "mcp_chat_tui.ui.app" in graph, "the package was not found"
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_sees_a_circle_through_an_import_inside_a_function(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text("X = 1\n")
    (package / "a.py").write_text("from pkg.low import X\nfrom . import b\n")
    (package / "b.py").write_text("def later():\n    from pkg.a import something\n")
    graph = import_graph(package)
    assert graph["pkg.a"] == {"pkg", "pkg.low", "pkg.b"} and graph["pkg.b"] == {"pkg.a"}
    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.a"]
    (package / "b.py").write_text("from pkg import low\n")
    assert find_cycle(import_graph(package)) is None


@pytest.mark.step  # scripts/check.py's imports step runs lint-imports itself
def test_the_import_contracts_of_pyproject_hold():
    """The layers, the agent apart from ui/ and transcript/, the engine apart from servers/, no
    Textual below ui/, and ui/ reaching servers/ and engine/ only through their packages' names."""
    lint_imports = Path(sys.executable).with_name("lint-imports")
    assert lint_imports.exists(), f"{lint_imports} is missing: install the dev tools, pip install -e '.[dev]'"
    run = subprocess.run(
        [str(lint_imports), "--no-cache", "--no-logo"], cwd=PACKAGE.parent, capture_output=True, text=True
    )
    assert run.returncode == 0 and "0 broken" in run.stdout, run.stdout + run.stderr
