"""Prompts as commands and the built-in resource tools in ``-p`` and ``--plain``: the real CLI (in this
process, tests/cli_in_process.py), a scripted endpoint for the model, tests/servers/catalog_server.py
for the server (in memory, but for its 2025-11-25-only ``--legacy`` loop)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcp_chat_tui.transcript import parse, read_transcript_text, to_openai_messages
from tests.cli_in_process import servers_in_memory
from tests.helpers import CATALOG_SERVER, server_module
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_oneshot import run_cli, saved_conversations


def catalog_servers(folder: Path, *flags: str) -> Path:
    config = folder / "servers.json"
    server = {"command": sys.executable, "args": [CATALOG_SERVER, *flags]}
    config.write_text(json.dumps({"servers": {"docs": server}}))
    return config


def catalog_server(*flags: str):
    """The catalog server's object, from a fresh copy of its module (as a process would have)."""
    module = server_module(CATALOG_SERVER)
    return module.build(module.parse_args(list(flags)))


def run(endpoint: ScriptedEndpoint, folder: Path, dirs: Path, *args: str, stdin: str | None = None, flags=()):
    """The CLI in this process; the catalog server in memory, but for ``--legacy`` (2025-11-25 only,
    a process of its own, as tests/helpers.py's catalog_config has it)."""
    memory = {} if "--legacy" in flags else {(CATALOG_SERVER, *flags): lambda: catalog_server(*flags)}
    with servers_in_memory(memory):
        return run_cli(
            "--endpoint",
            endpoint.url,
            "scripted",
            "--mcp-config",
            str(catalog_servers(folder, *flags)),
            *args,
            cwd=folder,
            dirs=dirs,
            stdin=stdin,
        )


@pytest.mark.parametrize("flags", [(), ("--legacy",)], ids=["2026-07-28", "2025-11-25"])
def test_a_prompt_command_in_one_shot_becomes_the_user_turn(tmp_path, isolated_user_dirs, flags):
    with ScriptedEndpoint(["Looks fine."]) as endpoint:
        result = run(
            endpoint,
            tmp_path,
            isolated_user_dirs,
            "-p",
            '/docs:review language=python focus="error handling"',
            flags=flags,
        )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Looks fine.\n"
    sent = endpoint.requests[0]["messages"][-1]
    assert sent == {"role": "user", "content": "Please review this python code, looking for error handling."}
    [saved] = saved_conversations(isolated_user_dirs)
    exchange = parse(read_transcript_text(saved)).exchanges[0]
    assert exchange.user == "Please review this python code, looking for error handling."
    assert [a.to_json() for a in exchange.attachments] == [
        {
            "kind": "prompt",
            "server": "docs",
            "name": "review",
            "arguments": {"language": "python", "focus": "error handling"},
        }
    ]


def test_a_prompt_with_embedded_resources_attaches_them_and_resume_sends_the_same(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint(["Buy milk."]) as endpoint:
        result = run(endpoint, tmp_path, isolated_user_dirs, "-p", "/summarise")
    assert result.returncode == 0, result.stderr
    content = endpoint.requests[0]["messages"][-1]["content"]
    assert content.startswith("Summarise these notes.\n\n[attached: docs › notes://today (text/plain)]\nbuy milk")
    assert "[attached: docs › image from summarise (image/png, 70 B)]" in content
    assert "📎 docs › notes://today (text/plain)" in result.stderr
    [saved] = saved_conversations(isolated_user_dirs)
    assert to_openai_messages(parse(read_transcript_text(saved)))[0]["content"] == content


def test_a_missing_required_argument_in_one_shot_is_an_error_naming_it(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint([]) as endpoint:
        result = run(endpoint, tmp_path, isolated_user_dirs, "-p", "/docs:review focus=speed")
    assert result.returncode == 2
    assert "/docs:review needs the argument 'language': add language=VALUE" in result.stderr
    assert endpoint.requests == []


def test_an_unknown_command_lists_the_near_names(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint([]) as endpoint:
        result = run(endpoint, tmp_path, isolated_user_dirs, "-p", "/docs:reveiw language=python")
    assert result.returncode == 2
    assert "unknown command /docs:reveiw; did you mean /docs:review" in result.stderr


def test_plain_asks_for_a_missing_argument_on_the_terminal(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint(["Hello, Ada!"]) as endpoint:
        result = run(endpoint, tmp_path, isolated_user_dirs, "--plain", stdin="/greet\nAda\n/nothing\nbye\n")
    assert result.returncode == 0, result.stderr
    assert "name, required: " in result.stdout
    assert endpoint.requests[0]["messages"][-1] == {"role": "user", "content": "Say hello to Ada."}
    assert "unknown command /nothing" in result.stdout  # said, and the loop went on to "bye"


def test_the_model_lists_and_reads_resources_through_the_built_in_tools(tmp_path, isolated_user_dirs):
    script = [
        tool_reply("list_resources", {"server": "docs"}),
        tool_reply("read_resource", {"server": "docs", "uri": "data://config"}, call_id="call_2"),
        "The theme is dark.",
    ]
    with ScriptedEndpoint(script) as endpoint:
        result = run(endpoint, tmp_path, isolated_user_dirs, "-p", "what theme?", "--yes", "--json")
    assert result.returncode == 0, result.stderr
    offered = [tool["function"]["name"] for tool in endpoint.requests[0]["tools"]]
    assert "list_resources" in offered and "read_resource" in offered
    report = json.loads(result.stdout)
    listed, read = report["calls"]
    assert listed["server"] == "(app)" and listed["tool"] == "list_resources"
    assert {
        "server": "docs",
        "name": "config",
        "uri": "data://config",
        "mimeType": "application/json",
        "description": "Settings as JSON",
    } in json.loads(listed["result"])
    assert read["result"] == '{"theme": "dark", "size": 3}'


def test_without_resources_there_are_no_built_in_tools(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint(["Hi."]) as endpoint:
        result = run(endpoint, tmp_path, isolated_user_dirs, "-p", "hello", flags=("--no-resources",))
    assert result.returncode == 0, result.stderr
    offered = [tool["function"]["name"] for tool in endpoint.requests[0].get("tools") or []]
    assert "list_resources" not in offered and "read_resource" not in offered


def test_plain_shows_the_attachments_of_a_resumed_conversation(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint(["Buy milk."]) as endpoint:
        first = run(endpoint, tmp_path, isolated_user_dirs, "-p", "/summarise")
    assert first.returncode == 0, first.stderr
    [saved] = saved_conversations(isolated_user_dirs)
    with ScriptedEndpoint([]) as endpoint:
        again = run(endpoint, tmp_path, isolated_user_dirs, "--plain", "--transcript", str(saved), stdin="bye\n")
    assert again.returncode == 0, again.stderr
    assert "📎 /docs:summarise\n" in again.stdout and "📎 docs › notes://today (text/plain)" in again.stdout
