"""``--check-tools``: the real CLI (in this process, tests/cli_in_process.py; a subprocess for
Ctrl+C), real servers, and a model that is either the demo model (real MLX on the CPU) or a scripted OpenAI-compatible endpoint that writes exactly the call,
the wrong tool, the malformed call, the bad arguments or the missing call a test needs."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import jsonschema
import pytest

from mcp_chat_tui.cli.tool_questions import example_arguments, tool_question
from mcp_chat_tui.core.tools import ToolSpec
from tests import cli_in_process
from tests.helpers import new_marker, pids_with, wait_until
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply

CLI = [sys.executable, "-m", "mcp_chat_tui.cli.main"]
DEMO_TOOLS = ["calculator", "current_time", "convert_units", "web_search", "read_file", "sleep"]
LEDGER_SERVER = str(Path(__file__).parent / "servers" / "ledger_server.py")
VERDICTS = ("correct", "invalid arguments", "wrong tool", "malformed", "no call")


def run_cli(*args: str, cwd: Path, dirs: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="200")
    for kind in ("CONFIG", "DATA", "LOG"):
        env[f"MCP_CHAT_TUI_{kind}_DIR"] = str(dirs / kind.lower())
    return cli_in_process.run_cli(args, cwd=cwd, env=env)  # its words and codes: no process needed


def servers_file(folder: Path, servers: dict) -> Path:
    path = folder / "servers.json"
    path.write_text(json.dumps({"servers": servers}))
    return path


def demo_servers(folder: Path) -> Path:
    return servers_file(folder, {"demo": {"command": sys.executable, "args": ["-m", "mcp_chat_tui.demo.server"]}})


def check_with_endpoint(script: list, folder: Path, dirs: Path, *flags: str, servers: Path | None = None):
    with ScriptedEndpoint(script) as endpoint:
        result = run_cli(
            "--endpoint",
            endpoint.url,
            "scripted",
            "--mcp-config",
            str(servers or demo_servers(folder)),
            "--check-tools",
            *flags,
            cwd=folder,
            dirs=dirs,
        )
    return result, endpoint.requests


def verdict_of(row: dict, schemas: dict[str, dict]) -> str:
    """The verdict a row's own record calls for, judged here apart from the app's code."""
    own = [call for call in row["calls"] if call["name"] == row["name"]]
    if own:
        valid = any(jsonschema.Draft202012Validator(schemas[row["name"]]).is_valid(c["arguments"]) for c in own)
        return "correct" if valid else "invalid arguments"
    if row["calls"]:
        return "wrong tool"
    return "malformed" if row["malformed"] else "no call"


def summary_counts(line: str) -> tuple[int, int, dict[str, int]]:
    found = re.fullmatch(r"(\d+) of (\d+) tools called correctly(?:; (.*))?\.", line)
    assert found, line
    others = {}
    for part in (found.group(3) or "").split(", ") if found.group(3) else []:
        count, verdict = part.split(" ", 1)
        others[verdict] = int(count)
    return int(found.group(1)), int(found.group(2)), others


# ----- the scripted model: every way a reply can go --------------------------------------------

EVERY_WAY = [
    tool_reply("calculator", {"expression": "2 + 3"}),  # calculator: right
    tool_reply("calculator", {"expression": "1 + 1"}),  # current_time: the wrong tool
    tool_reply("convert", {"value": 2}),  # convert_units: a name no server offers
    tool_reply("web_search", {"max_results": 2}),  # web_search: "query" is missing
    "I cannot read files.",  # read_file: no call
    tool_reply("sleep", '{"seconds": 2'),  # sleep: arguments that are not JSON
]


def test_each_way_a_reply_can_go_is_reported_as_such(tmp_path, isolated_user_dirs):
    result, requests = check_with_endpoint(EVERY_WAY, tmp_path, isolated_user_dirs, "--json")
    assert result.returncode == 3, result.stderr
    report = json.loads(result.stdout)
    rows = {row["name"]: row for row in report["tools"]}
    assert list(rows) == DEMO_TOOLS
    assert {name: row["verdict"] for name, row in rows.items()} == {
        "calculator": "correct",
        "current_time": "wrong tool",
        "convert_units": "malformed",
        "web_search": "invalid arguments",
        "read_file": "no call",
        "sleep": "malformed",
    }
    assert "query" in rows["web_search"]["arguments_problem"]
    assert "convert" in rows["convert_units"]["malformed"][0]["reason"]
    assert rows["read_file"]["text"] == "I cannot read files."
    assert (
        report["summary"] == "1 of 6 tools called correctly; 1 invalid arguments, 1 wrong tool, 2 malformed, 1 no call."
    )
    assert "--tool-prompt text" in report["suggestion"] and report["exit_code"] == 3
    # one fresh conversation per tool: its question alone, every tool offered, no result sent back
    assert len(requests) == 6
    for request, name in zip(requests, DEMO_TOOLS, strict=True):
        users = [m for m in request["messages"] if m["role"] == "user"]
        assert len(users) == 1 and f"use {name}" in users[0]["content"]
        assert not [m for m in request["messages"] if m["role"] in ("assistant", "tool")]
        assert [t["function"]["name"] for t in request["tools"]] == DEMO_TOOLS


@pytest.mark.parametrize("flags", [("--json",), ()])
def test_without_a_terminal_each_tool_gets_a_progress_line_on_stderr(flags, tmp_path, isolated_user_dirs):
    result, _ = check_with_endpoint(EVERY_WAY, tmp_path, isolated_user_dirs, *flags)
    lines = [line for line in result.stderr.splitlines() if line.startswith("tool ")]
    assert lines == [f"tool {i} of 6: demo/{name}…" for i, name in enumerate(DEMO_TOOLS, start=1)]
    assert "tool 1 of" not in result.stdout  # stdout has the table, or the object alone
    if flags:
        assert json.loads(result.stdout)["total"] == 6


def test_the_table_shows_every_tool_and_the_summary_and_what_to_try(tmp_path, isolated_user_dirs):
    result, _ = check_with_endpoint(EVERY_WAY, tmp_path, isolated_user_dirs)
    assert result.returncode == 3, result.stderr
    out = result.stdout
    for name in DEMO_TOOLS:
        assert f"demo/{name}" in out
    assert "no: calculator" in out  # the wrong tool, named
    assert "unknown tool 'convert'" in out and "wrote: I cannot read files." in out
    assert "1 of 6 tools called correctly; 1 invalid arguments, 1 wrong tool, 2 malformed, 1 no call." in out
    assert "Try --tool-prompt text" in out


def test_every_tool_called_right_is_exit_0_with_no_suggestion(tmp_path, isolated_user_dirs):
    script = [
        tool_reply("calculator", {"expression": "2 + 3"}),
        tool_reply("current_time", {}),
        tool_reply("convert_units", {"value": 2, "from_unit": "km", "to_unit": "miles"}),
        tool_reply("web_search", {"query": "weather in Paris"}),
        tool_reply("read_file", {"path": "notes.txt"}),
        tool_reply("sleep", {"seconds": 2}),
    ]
    result, _ = check_with_endpoint(script, tmp_path, isolated_user_dirs, "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["summary"] == "6 of 6 tools called correctly." and report["suggestion"] is None


def test_nothing_is_run_and_nothing_is_saved(tmp_path, isolated_user_dirs):
    ledger = tmp_path / "ledger.txt"
    servers = servers_file(tmp_path, {"ledger": {"command": sys.executable, "args": [LEDGER_SERVER]}})
    script = [tool_reply("append", {"path": str(ledger), "line": "ran"}), tool_reply("read", {"path": str(ledger)})]
    result, requests = check_with_endpoint(script, tmp_path, isolated_user_dirs, "--json", servers=servers)
    assert result.returncode == 0, result.stderr
    assert [row["verdict"] for row in json.loads(result.stdout)["tools"]] == ["correct", "correct"]
    assert not ledger.exists() and len(requests) == 2  # the call was never made, no result went back
    assert not (isolated_user_dirs / "data" / "conversations").exists() or not list(
        (isolated_user_dirs / "data" / "conversations").iterdir()
    )


def test_a_model_whose_template_takes_no_tools_is_told_to_try_the_text_prompt(tmp_path, isolated_user_dirs):
    from tests.models import build_tiny_model

    folder = build_tiny_model(tmp_path / "plain-model", tools=False)
    result = run_cli(
        str(folder), "--mcp-config", str(demo_servers(tmp_path)), "--check-tools", cwd=tmp_path, dirs=isolated_user_dirs
    )
    assert result.returncode == 3, result.stderr
    assert "no tool support in its chat template" in result.stdout and "--tool-prompt text" in result.stdout


def test_check_tools_needs_a_model_and_takes_no_prompt(tmp_path, isolated_user_dirs):
    no_model = run_cli("--check-tools", cwd=tmp_path, dirs=isolated_user_dirs)
    assert no_model.returncode == 2 and "--check-tools needs a model" in no_model.stderr
    with_prompt = run_cli("--demo", "--check-tools", "-p", "hi", cwd=tmp_path, dirs=isolated_user_dirs)
    assert with_prompt.returncode == 2 and "leave out -p" in with_prompt.stderr


class StallingEndpoint(ScriptedEndpoint):
    """A model that takes its time: every chat request waits until the test lets it go."""

    def __init__(self) -> None:
        super().__init__([])
        self.asked = threading.Event()
        self.release = threading.Event()

    def next_reply(self, body: dict) -> str:
        self.asked.set()
        self.release.wait(60)
        return "too late"


def test_ctrl_c_while_the_model_writes_ends_at_once_and_takes_the_servers_along(tmp_path, isolated_user_dirs):
    marker = new_marker()
    servers = servers_file(tmp_path, {"ledger": {"command": sys.executable, "args": [LEDGER_SERVER, marker]}})
    env = dict(os.environ)
    for kind in ("CONFIG", "DATA", "LOG"):
        env[f"MCP_CHAT_TUI_{kind}_DIR"] = str(isolated_user_dirs / kind.lower())
    with StallingEndpoint() as endpoint:
        app = subprocess.Popen(
            [*CLI, "--endpoint", endpoint.url, "scripted", "--mcp-config", str(servers), "--check-tools"],
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert endpoint.asked.wait(60), "the check never asked the model"
            app.send_signal(signal.SIGINT)
            app.wait(timeout=10)
        finally:
            endpoint.release.set()
            if app.poll() is None:
                app.kill()
    assert app.returncode == 130, app.stderr.read()
    assert "Traceback" not in app.stderr.read()
    assert wait_until(lambda: not pids_with(marker), 5), f"orphans left: {pids_with(marker)}"


# ----- the demo model, for real ----------------------------------------------------------------


@pytest.mark.slow
def test_the_demo_model_is_checked_on_every_demo_tool_and_the_counts_add_up(tmp_path, isolated_user_dirs):
    result = run_cli("--demo", "--check-tools", "--json", cwd=tmp_path, dirs=isolated_user_dirs)
    report = json.loads(result.stdout)
    rows = report["tools"]
    assert [row["name"] for row in rows] == DEMO_TOOLS
    schemas = {spec.name: spec.input_schema for spec in demo_specs()}
    assert [row["verdict"] for row in rows] == [verdict_of(row, schemas) for row in rows]
    correct, total, others = summary_counts(report["summary"])
    assert (correct, total) == (sum(row["verdict"] == "correct" for row in rows), 6) == (report["correct"], 6)
    assert others == {v: n for v in VERDICTS[1:] if (n := sum(row["verdict"] == v for row in rows))}
    assert result.returncode == (0 if correct == total else 3)
    table = run_cli("--demo", "--check-tools", cwd=tmp_path, dirs=isolated_user_dirs)
    assert table.returncode == result.returncode  # greedy: the same replies again
    assert all(f"demo/{name}" in table.stdout for name in DEMO_TOOLS) and report["summary"] in table.stdout


def demo_specs() -> list[ToolSpec]:
    import asyncio

    from mcp_chat_tui.demo.server import server

    async def listed() -> list[ToolSpec]:
        tools = await server.list_tools()
        return [
            ToolSpec(server="demo", name=t.name, description=t.description or "", input_schema=t.input_schema)
            for t in tools
        ]

    return asyncio.run(listed())


# ----- the questions ---------------------------------------------------------------------------


def spec(name: str, schema: dict, description: str = "Does a thing. More words.") -> ToolSpec:
    return ToolSpec(server="s", name=name, description=description, input_schema=schema)


def test_a_question_names_the_tool_says_what_it_does_and_gives_every_required_argument():
    schema = {
        "type": "object",
        "properties": {
            "timezone": {"type": "string", "description": "IANA name (e.g., 'America/New_York')"},
            "when": {"type": "string", "format": "date"},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "count": {"type": "integer", "minimum": 5},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
            "optional": {"type": "string"},
        },
        "required": ["timezone", "when", "mode", "count", "tags"],
    }
    question = tool_question(spec("plan_trip", schema, "Plan a trip, e.g. to Rome. Then more."))
    assert question == (
        'Plan a trip, e.g. to Rome: use plan_trip with timezone = "America/New_York", when = "2025-03-14", '
        'mode = "fast", count = 5 and tags = ["example", "example"].'
    )
    assert example_arguments(schema).keys() == set(schema["required"])
    jsonschema.validate(example_arguments(schema), schema)
    assert tool_question(spec("ping", {"type": "object", "properties": {}})) == "Does a thing: use ping."


@pytest.mark.parametrize(
    ("name", "schema", "expected"),
    [
        ("url", {"type": "string"}, "https://example.com"),
        ("filePath", {"type": "string"}, "notes.txt"),
        ("paths", {"type": "array", "items": {"type": "string"}}, ["notes.txt"]),
        ("from_unit", {"type": "string"}, "km"),
        ("enabled", {"type": "boolean"}, True),
        ("level", {"type": "string", "default": "info"}, "info"),
        ("limit", {"type": ["integer", "null"], "maximum": 1}, 1),
        ("choice", {"anyOf": [{"type": "null"}, {"type": "string", "enum": ["a"]}]}, "a"),
        (
            "options",
            {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
            {"q": "weather in Paris"},
        ),
    ],
)
def test_example_values_come_from_the_schema_then_the_name_then_the_type(name, schema, expected):
    values = example_arguments({"type": "object", "properties": {name: schema}, "required": [name]})
    assert values == {name: expected}
