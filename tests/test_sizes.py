"""Every module and function of the package stays small enough to read in one go (issue 21):
no module over about 500 lines, no function over 50. Past that, split by what the parts are."""

from __future__ import annotations

import ast
import gc
import traceback
from pathlib import Path

from tests.source_ast import parse

PACKAGE = Path(__file__).resolve().parent.parent / "mcp_chat_tui"
MODULE_LINES = 510  # "about 500"
FUNCTION_LINES = 50


def sizes(package: Path = PACKAGE) -> tuple[dict[str, int], dict[str, int]]:
    """Lines of each module, and of each function (``path:line name``, decorators left out)."""
    modules, functions = {}, {}
    for path in sorted(package.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        name = str(path.relative_to(package.parent))
        modules[name] = source.count("\n")
        for node in ast.walk(parse(source, name)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None:
                functions[f"{name}:{node.lineno} {node.name}"] = node.end_lineno - node.lineno + 1
    return modules, functions


def test_no_module_is_over_about_500_lines() -> None:
    modules, _ = sizes()
    long = {name: lines for name, lines in modules.items() if lines > MODULE_LINES}
    assert not long, f"modules over {MODULE_LINES} lines (split them by what their parts are): {long}"


def test_no_function_is_over_50_lines() -> None:
    _, functions = sizes()
    long = {name: lines for name, lines in functions.items() if lines > FUNCTION_LINES}
    assert not long, f"functions over {FUNCTION_LINES} lines (split them by what their parts do): {long}"


def test_the_measure_sees_a_long_module_and_a_long_function(tmp_path: Path) -> None:
    package = tmp_path / "mcp_chat_tui"
    package.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(FUNCTION_LINES))
    (package / "long.py").write_text(f"def long_function():\n{body}\n" + "\n" * MODULE_LINES, encoding="utf-8")
    modules, functions = sizes(package)
    assert modules["mcp_chat_tui/long.py"] > MODULE_LINES
    assert functions["mcp_chat_tui/long.py:1 long_function"] == FUNCTION_LINES + 1


class _ParsesWhenFinalised:
    """Garbage in a cycle whose finalizer formats a traceback (which parses source in 3.11), as an
    asyncio task left failed by an earlier test does when the collector frees it."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        try:
            self.me = 1 / 0  # a line that parses for its carets (a whole ``raise`` line does not)
        except ZeroDivisionError as exc:
            traceback.format_exception(exc)


def test_the_parse_holds_when_the_collector_finalises_what_parses_meanwhile() -> None:
    source = (PACKAGE / "engine" / "gguf.py").read_text(encoding="utf-8")  # the file it failed on
    threshold = gc.get_threshold()
    gc.set_threshold(10)  # a collection within the parse, with the garbage made just before
    try:
        for _ in range(20):
            _ParsesWhenFinalised()
            parse(source, "gguf.py")
    finally:
        gc.set_threshold(*threshold)
        gc.collect()
