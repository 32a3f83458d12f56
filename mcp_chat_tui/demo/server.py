"""The demo MCP server: offline tools for trying mcp-chat-tui, run as ``python -m mcp_chat_tui.demo.server``.

Every tool works without a network. ``--http PORT`` serves streamable HTTP and
``--sse PORT`` the older SSE transport on 127.0.0.1 instead of stdio (used by
tests and for trying those transports).
"""

from __future__ import annotations

from mcp_chat_tui.core.collector import pause_collector, resume_collector

# Started as the demo server, its imports (the SDK's above all) build about a thousand classes, which the
# cycle collector walked again and again: a tenth of the CPU before the server answers. Paused until
# main has the server built, as the app's start pauses it (core/collector.py).
if __name__ == "__main__":
    pause_collector()

import argparse
import ast
import asyncio
import functools
import json
import math
import operator
import os
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

from mcp_chat_tui import __version__
from mcp_chat_tui.core.files import open_regular
from mcp_chat_tui.demo.units import convert

CORPUS_PATH = Path(__file__).with_name("corpus.json")
MAX_FILE_BYTES = 200_000
MAX_SLEEP_SECONDS = 600

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)

server = MCPServer(
    name="demo",
    instructions="Offline demo tools for mcp-chat-tui: arithmetic, time zones, units, a small search corpus, files.",
    version=__version__,
    log_level="WARNING",
)

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS = {
    "sqrt": math.sqrt,
    "abs": abs,
    "round": round,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "log": math.log,
    "exp": math.exp,
}
_CONSTANTS = {"pi": math.pi, "e": math.e}


def evaluate(expression: str) -> float | int:
    """Evaluate arithmetic by walking its syntax tree: numbers, + - * / // % ** and a few functions."""
    try:
        tree = ast.parse(expression.replace("^", "**").replace("×", "*").replace("÷", "/"), mode="eval")
    except SyntaxError as exc:
        raise ToolError(f"not an arithmetic expression: {expression!r}") from exc
    return _eval_node(tree.body)


def _eval_node(node: ast.AST) -> float | int:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval_node(node.left), _eval_node(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 1000:
            raise ToolError("exponent too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval_node(node.operand))
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
        and len(node.args) in (1, 2)
    ):
        return _FUNCTIONS[node.func.id](*(_eval_node(arg) for arg in node.args))
    raise ToolError(f"unsupported element in expression: {ast.dump(node)[:60]}")


@server.tool(annotations=READ_ONLY, structured_output=False)
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression such as "12 * 7" or "sqrt(2) + 3^2"."""
    try:
        value = evaluate(expression)
    except ZeroDivisionError:
        raise ToolError("division by zero") from None
    except (ValueError, TypeError, OverflowError) as exc:
        raise ToolError(str(exc)) from None
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    return f"{expression} = {value}"


@functools.cache
def _zones_by_city() -> dict[str, str]:
    """City (last part of a zone name, lower case) -> the first zone of that name; listing the
    zones reads the whole zone database, so it is done once."""
    by_city: dict[str, str] = {}
    for candidate in sorted(available_timezones()):
        by_city.setdefault(candidate.lower().split("/")[-1], candidate)
    return by_city


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        pass
    candidate = _zones_by_city().get(name.strip().lower().replace(" ", "_"))
    if candidate is not None:
        return ZoneInfo(candidate)
    raise ToolError(f"unknown time zone {name!r}: use a name like 'Asia/Tokyo' or a city like 'Tokyo'")


@server.tool(annotations=READ_ONLY, structured_output=False)
def current_time(timezone: str = "UTC") -> str:
    """Current date and time in a time zone, e.g. "Asia/Tokyo" or a city name like "Tokyo"."""
    zone = _zone(timezone)
    fixed = os.environ.get("MCP_CHAT_TUI_DEMO_NOW")  # an ISO time, for tests that need a fixed clock
    now = datetime.fromisoformat(fixed).astimezone(zone) if fixed else datetime.now(zone)
    return f"{now:%Y-%m-%d %H:%M} in {zone.key} (UTC{now:%z})"


@server.tool(annotations=READ_ONLY, structured_output=False)
def convert_units(value: float, from_unit: str, to_unit: str) -> str:
    """Convert a value between units of length, mass, volume, speed or temperature (e.g. km to miles)."""
    try:
        result = convert(value, from_unit, to_unit)
    except ValueError as exc:
        raise ToolError(str(exc)) from None
    return f"{value:g} {from_unit} = {result:.6g} {to_unit}"


def _load_corpus() -> list[dict[str, str]]:
    return json.loads(CORPUS_PATH.read_text(encoding="utf-8"))


@server.tool(annotations=READ_ONLY, structured_output=False)
def web_search(query: str, max_results: int = 3) -> str:
    """Search a small offline web corpus and return the best matching pages with snippets."""
    words = {w for w in query.lower().split() if len(w) > 2}
    scored = []
    for page in _load_corpus():
        haystack = f"{page['title']} {page['snippet']}".lower()
        score = sum(haystack.count(word) for word in words)
        if score:
            scored.append((score, page))
    scored.sort(key=lambda pair: -pair[0])
    hits = [page for _, page in scored[: max(1, min(max_results, 10))]]
    if not hits:
        return f"No results for {query!r}."
    return "\n".join(f"- {page['title']} ({page['url']}): {page['snippet']}" for page in hits)


@server.tool(annotations=READ_ONLY, structured_output=False)
def read_file(path: str) -> str:
    """Read a text file under the current working directory (paths outside it are refused)."""
    root = Path.cwd().resolve()
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        raise ToolError(f"refused: {path!r} is outside the working directory {root}")
    try:  # a regular file only (never a FIFO that would hold the call, nor a device), its start only
        with os.fdopen(open_regular(target, os.O_RDONLY, follow_links=True), "rb") as file:
            data = file.read(MAX_FILE_BYTES)
    except FileNotFoundError:
        raise ToolError(f"no such file: {path!r}") from None
    except OSError as exc:
        raise ToolError(f"cannot read {path!r}: {exc.strerror or exc}") from None
    if b"\x00" in data:
        raise ToolError(f"{path!r} is not a text file")
    return data.decode("utf-8", errors="replace")


@server.tool(
    annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False, title="Sleep"), structured_output=False
)
async def sleep(seconds: float) -> str:
    """Wait the given number of seconds, then say so (for trying timeouts and the stop key)."""
    if seconds < 0 or seconds > MAX_SLEEP_SECONDS:
        raise ToolError(f"seconds must be between 0 and {MAX_SLEEP_SECONDS}")
    await asyncio.sleep(seconds)
    return f"Slept {seconds:g} seconds."


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m mcp_chat_tui.demo.server", description=__doc__)
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT")
    parser.add_argument("--sse", type=int, metavar="PORT", help="serve the older SSE transport on 127.0.0.1:PORT")
    args = parser.parse_args(argv)
    resume_collector()  # the module is built: serving runs with the collector on
    if args.http is not None:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    elif args.sse is not None:
        server.run("sse", host="127.0.0.1", port=args.sse)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
